"""CONTRIBUTING.md: every `arena` command it shows parses against the real command line, and
each subcommand it uses is run by a test (named here); its entry.toml example loads and is the
one in docs/examples/nim/."""

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from arena.cli import cli
from arena.entries.manifest import KEYS, load_manifest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "CONTRIBUTING.md"
HERE = Path(__file__).parent
# subcommand -> the test file that runs it for real
EXERCISED = {
    "new": "test_check.py",
    "check": "test_check.py",
    "bench": "test_outside.py",
    "compare": "test_crossrun.py",
    "verify": "test_verify_full.py",
    "test": "test_contributing.py",
}


def code_blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", GUIDE.read_text(), re.S)


def arena_commands() -> list[list[str]]:
    """Each `.venv/bin/arena ...` line of the guide's shell blocks, as words, comment dropped."""
    out = []
    for block in code_blocks("sh"):
        for line in block.splitlines():
            line = line.strip()
            if line.startswith(".venv/bin/arena "):
                out.append(shlex.split(line, comments=True)[1:])
    return out


def test_the_guide_shows_commands():
    names = {words[0] for words in arena_commands()}
    assert {"new", "check", "bench", "compare"} <= names


@pytest.mark.parametrize("words", arena_commands(), ids=lambda w: " ".join(w))
def test_each_command_parses_and_its_subcommand_is_run_by_a_test(words, tmp_path):
    name, args = words[0], words[1:]
    command = cli.commands[name]
    if name == "compare":  # paths that must exist: stand-ins
        args = [str(tmp_path / f"run{i}") for i in range(len(args))]
        for a in args:
            Path(a).mkdir()
    command.make_context(name, list(args))  # raises on an unknown option or a bad value
    assert f'"{name}"' in (HERE / EXERCISED[name]).read_text()


def test_the_checks_table_names_every_item_of_arena_check():
    from arena.workflows.check import ITEMS

    text = GUIDE.read_text()
    for item in ITEMS:
        assert f"| {item} |" in text


def test_the_entry_toml_the_guide_shows_is_the_examples():
    (shown,) = code_blocks("toml")
    assert shown == (REPO / "docs" / "examples" / "nim" / "entry.toml").read_text()


def test_the_entry_toml_example_loads_and_shows_every_key(tmp_path):
    (example,) = code_blocks("toml")
    # config is a peer's (nginx, varnish), warmup_s a JIT runtime's, tier, tuned and pipelining a peer's
    # (an ours entry's tier is implied, and it pipelines): none is a native Nim entry's
    peers_keys = {"config", "warmup_s", "tier", "tuned", "pipelining"}
    assert set(tomllib.loads(example)["entry"][0]) == set(KEYS) - peers_keys
    folder = tmp_path / "servers" / "nim"
    folder.mkdir(parents=True)
    (folder / "entry.toml").write_text(example)
    (entry,) = load_manifest(folder / "entry.toml")
    assert entry.kind == "ours" and entry.command == "bin/renard-nim"


def test_arena_test_runs_an_entrys_own_tests(tmp_path):
    """`arena test NAME`, as `make test` and `arena check` run the `test` commands."""
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    folder = tmp_path / "servers" / "demo"
    folder.mkdir(parents=True)
    (example,) = code_blocks("toml")
    own_tests = 'test = ["nim r --hints:off tests/all.nim"]'
    assert own_tests in example  # the line replaced below, as the guide writes it
    passing = example.replace('["nim"]', '["sh"]').replace('"nim"', '"demo"').replace('["./build"]', "[]")
    (folder / "entry.toml").write_text(passing.replace(own_tests, 'test = ["echo 3 passed"]'))
    run = [sys.executable, "-m", "arena.cli", "--repo", str(tmp_path), "test", "demo"]
    ok = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "3 passed" in ok.stdout, ok.stdout + ok.stderr
    (folder / "entry.toml").write_text(passing.replace(own_tests, 'test = ["false"]'))
    failed = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1 and "tests failed: demo" in failed.stderr
