"""A booted Debian 12 with nginx (scripts/rootfs, scripts/boot), for the tests that run the
deploy's files in a real systemd: the repository read-only at /repo, for deploy/install, and
Debian's default site replaced by an empty file, since it would listen on port 80 of this
machine's (shared) network."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def booted(name: str, rootfs: list[str]):
    """The machine `name` booted from the root file system `scripts/rootfs ROOTFS...` names;
    stopped and removed at the end, as is one an interrupted run left."""
    tarball = subprocess.run(
        [str(REPO / "scripts/rootfs"), *rootfs], capture_output=True, text=True, timeout=900, check=True
    ).stdout.strip()
    empty = REPO / "results" / "boot" / f"{name}-empty-site"
    empty.parent.mkdir(parents=True, exist_ok=True)
    empty.write_text("")
    subprocess.run([str(REPO / "scripts/boot"), "stop", name], capture_output=True, timeout=120)
    subprocess.run(
        [str(REPO / "scripts/boot"), "start", name, tarball, f"--bind-ro={REPO}:/repo"]
        + [f"--bind-ro={empty}:/etc/nginx/sites-enabled/default"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    try:
        yield
    finally:
        subprocess.run([str(REPO / "scripts/boot"), "stop", name], capture_output=True, timeout=120)
        empty.unlink()
