"""Headless Chromium for the tests that look at report.html as a reader's browser shows it."""

import subprocess
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package
ABSENT = "chromium is not installed (Debian: apt-get install chromium): the report's page is not rendered"


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """chromium --headless with args, its own profile under tmp_path, no network of its own;
    raises CalledProcessError when it fails, TimeoutExpired past 60 s."""
    profile = tmp_path / "chromium-profile"
    return subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
