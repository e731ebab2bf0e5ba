"""`arena new` writes a skeleton that pretends nothing; `arena check` names every missing piece
of it, and passes an entry that is ready (the flagship)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    (tmp_path / "servers").mkdir()
    return tmp_path


def lines_by_item(stdout: str) -> dict[str, str]:
    """The checklist's lines by item name (the line's words after the mark)."""
    items = {}
    for line in stdout.splitlines():
        if line[:2] in ("✓ ", "✗ ", "– "):
            name = line[2:16].strip()
            items[name] = line
    return items


def test_new_writes_a_loadable_skeleton_that_check_says_is_missing_everything(repo):
    made = arena("--repo", str(repo), "new", "zig", "--language", "Zig")
    assert made.returncode == 0, made.stderr
    folder = repo / "servers" / "zig"
    assert sorted(p.name for p in folder.iterdir()) == [".gitignore", "README.md", "entry.toml"]
    listed = arena("--repo", str(repo), "list")
    assert listed.returncode == 0 and "zig" in listed.stdout  # the skeleton breaks no other command

    checked = arena("--repo", str(repo), "check", "zig")
    assert checked.returncode == 1
    assert "zig is not ready to be ranked" in checked.stderr
    items = lines_by_item(checked.stdout)
    assert list(items) == [
        "entry.toml",
        "builds",
        "core route",
        "verify --full",
        "robustness",
        "capped bench",
        "results row",
        "tests",
    ]
    assert all(line.startswith("✗") for line in items.values()), checked.stdout
    assert "description still says TODO" in items["entry.toml"] and "requires is empty" in items["entry.toml"]
    assert "./build: not found" in items["builds"]
    assert "not tried" in items["core route"] and "not tried" in items["robustness"]
    assert "no line starting | `zig`" in items["results row"]
    assert "declares no `test`" in items["tests"]


def test_check_names_a_wrong_answer_and_a_failing_test_of_an_entry_that_builds(repo):
    """A program that starts and answers 404: it builds, then the core route fails."""
    arena("--repo", str(repo), "new", "pyish", "--language", "Python")
    folder = repo / "servers" / "pyish"
    manifest = (folder / "entry.toml").read_text()
    manifest = manifest.replace('"TODO: one line', '"a test double: one line').replace(
        "requires = []", 'requires = ["python3"]'
    )
    (folder / "entry.toml").write_text(manifest.replace("test = []", 'test = ["false"]'))
    (folder / "build").write_text(
        "#!/bin/sh\nmkdir -p bin && cat > bin/renard-pyish <<'EOF'\n#!/usr/bin/env python3\n"
        "import http.server, sys\n"
        "host, port = sys.argv[sys.argv.index('--listen') + 1].rsplit(':', 1)\n"
        "s = http.server.HTTPServer((host, int(port)), http.server.BaseHTTPRequestHandler)\n"
        "print(f'listening on http://{host}:{s.server_port}', file=sys.stderr, flush=True)\n"
        "s.serve_forever()\nEOF\nchmod +x bin/renard-pyish\n"
    )
    (folder / "build").chmod(0o755)
    checked = arena("--repo", str(repo), "check", "pyish")
    items = lines_by_item(checked.stdout)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert items["entry.toml"].startswith("✓") and items["builds"].startswith("✓"), checked.stdout
    assert items["core route"].startswith("✗") and "not a uniform 302" in items["core route"]
    assert "`false` exited 1" in items["tests"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["new", "Zig_2", "--language", "Zig"], "not a plain identifier"),
        (["new", "demo", "--language", "Zig"], "servers/demo already exists"),
        (["new", "zig"], "--language"),
        (["check", "no-such-entry"], "no entry named 'no-such-entry'"),
        (["check", "../etc"], "is not an entry name"),
    ],
)
def test_a_bad_name_is_one_line_and_exit_2(repo, args, words):
    (repo / "servers" / "demo").mkdir()
    p = arena("--repo", str(repo), *args)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and words in p.stderr, p.stderr


def test_a_peer_skeleton_needs_the_core_route_only(repo):
    assert arena("--repo", str(repo), "new", "lua", "--language", "Lua", "--peer").returncode == 0
    assert (repo / "peers" / "lua" / "entry.toml").is_file()
    items = lines_by_item(arena("--repo", str(repo), "check", "lua").stdout)
    assert items["verify --full"].startswith("–") and items["results row"].startswith("–")
    assert items["core route"].startswith("✗")


@pytest.mark.slow
def test_check_rust_passes_every_item():
    """The flagship is ready. Slow: the whole suite (about 2 min), cargo test and a 1 s bench;
    about 3 min on the shared 2-core machine. `make test-slow` runs it: `make test` already runs
    the suite and cargo test on the flagship, and the floor's and lua's checks below."""
    if not (REPO / "servers" / "rust" / "bin" / "renard").exists():
        pytest.skip("the flagship is not built (make build)")
    p = arena("check", "rust", timeout=900)
    items = lines_by_item(p.stdout)
    assert p.returncode == 0, p.stdout + p.stderr
    assert len(items) == 8 and all(line.startswith("✓") for line in items.values()), p.stdout
    assert "rust is ready to be ranked" in p.stdout


def test_check_floor_asks_only_that_it_builds_and_serves():
    if not (REPO / "peers" / "floor" / "entry.toml").is_file():
        pytest.skip("no floor peer")
    p = arena("check", "floor", timeout=300)
    items = lines_by_item(p.stdout)
    assert p.returncode == 0, p.stdout + p.stderr
    assert items["core route"].startswith("–") and items["capped bench"].startswith("✓")
    assert "floor is ready to be measured (the floor is never ranked)" in p.stdout
