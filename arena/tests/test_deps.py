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
