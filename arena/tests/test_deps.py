"""scripts/deps stops with one line when cargo is older than the flagship needs (Debian 12's
own cargo is 1.63; edition 2024 needs 1.85), instead of a compiler error later."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def deps_with_cargo(tmp_path: Path, version: str) -> subprocess.CompletedProcess:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "cargo").write_text(f'#!/bin/sh\necho "cargo {version} (Debian)"\n')
    (fake / "cargo").chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}")
    return subprocess.run([str(REPO / "scripts" / "deps"), "run"], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.skipif(shutil.which("cargo") is None or shutil.which("taskset") is None, reason="needs `deps run` met")
def test_an_old_cargo_is_one_line_naming_the_version_and_how_to_get_it(tmp_path):
    p = deps_with_cargo(tmp_path, "1.63.0")
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1, p.stderr
    assert "needs Rust 1.85 or newer" in p.stderr and "cargo here is 1.63.0" in p.stderr and "rustup" in p.stderr


@pytest.mark.skipif(shutil.which("cargo") is None or shutil.which("taskset") is None, reason="needs `deps run` met")
def test_a_recent_cargo_passes(tmp_path):
    p = deps_with_cargo(tmp_path, "1.85.0")
    assert p.returncode == 0, p.stderr


# apt as scripts/deps meets it on a fresh machine, faked on PATH: nothing installed (dpkg-query
# answers nothing), `apt-get` records what it was asked, and `apt-cache policy` writes its Candidate
# line first and the rest of its answer a moment later, as the real one does on some machines. A
# reader that exits at its first match (grep -q) has then closed the pipe, and the late writes
# die of SIGPIPE: under pipefail the package looked absent.
SLOW_APT_CACHE = """#!/bin/sh
echo "$2:"
echo "  Installed: (none)"
echo "  Candidate: {candidate}"
sleep 0.2
i=0
while [ $i -lt 200 ]; do echo "     500 http://deb.debian.org/debian bookworm/main amd64 Packages"; i=$((i+1)); done
"""


def deps_with_fake_apt(tmp_path: Path, candidate: str) -> tuple[subprocess.CompletedProcess, Path]:
    fake = tmp_path / "bin"
    fake.mkdir()
    asked = tmp_path / "apt-get.log"
    scripts = {
        "apt-cache": SLOW_APT_CACHE.format(candidate=candidate),
        "apt-get": f'#!/bin/sh\necho "$@" >> {asked}\n',
        "dpkg-query": "#!/bin/sh\nexit 1\n",
    }
    for name, text in scripts.items():
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}")
    p = subprocess.run(
        [str(REPO / "scripts" / "deps"), "entry", "go"], capture_output=True, text=True, env=env, timeout=120
    )
    return p, asked


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="scripts/deps looks packages up only as root")


@needs_root
@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo for the flagship's version check")
def test_a_package_apt_cache_names_slowly_is_found_and_installed(tmp_path):
    p, asked = deps_with_fake_apt(tmp_path, "2:1.19~1")
    assert p.returncode == 0, p.stderr
    assert "not in this machine's archive" not in p.stderr
    installs = [line.split() for line in asked.read_text().splitlines() if line.startswith("install ")]
    assert any("golang-go" in words for words in installs), asked.read_text()


@needs_root
def test_a_package_without_a_candidate_stops_naming_the_file_that_declared_it(tmp_path):
    p, asked = deps_with_fake_apt(tmp_path, "(none)")
    assert p.returncode == 1
    assert "deps: servers/go/entry.toml: apt package 'golang-go' is not in this machine's archive" in p.stderr
    assert " install " not in asked.read_text()
