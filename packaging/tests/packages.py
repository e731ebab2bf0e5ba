"""This machine's dpkg, for the package tests: where the package puts things, dpkg and apt
run while other work may hold their lock, and a purge that leaves the machine as it was."""

import os
import pwd
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import run

SYSTEMD_RUNS = Path("/run/systemd/system").is_dir()
CONFFILE = Path("/etc/renard/renard.conf")
# deploy/nginx/'s two files, for a server block one already has: conffiles too.
NGINX_SNIPPETS = {
    Path("/etc/nginx/snippets/renard.conf"): "deploy/nginx/renard.conf",
    Path("/etc/nginx/conf.d/renard-http.conf"): "deploy/nginx/renard-http.conf",
}
UNITS = [Path("/lib/systemd/system/renard.service"), Path("/lib/systemd/system/renard.socket")]
ENABLED = [
    Path("/etc/systemd/system/multi-user.target.wants/renard.service"),
    Path("/etc/systemd/system/sockets.target.wants/renard.socket"),
]
INSTALLED = [
    Path("/usr/bin/renard"),
    *UNITS,
    CONFFILE,
    *NGINX_SNIPPETS,
    Path("/usr/share/man/man8/renard.8.gz"),
    Path("/usr/share/bash-completion/completions/renard"),
    Path("/usr/share/zsh/vendor-completions/_renard"),
    Path("/usr/share/fish/vendor_completions.d/renard.fish"),
    Path("/usr/share/doc/renard/copyright"),
    Path("/usr/share/doc/renard/changelog.gz"),
    Path("/usr/share/doc/renard/LICENSES-crates.txt"),
    Path("/usr/share/doc/renard/renard.cdx.json"),
    Path("/usr/share/doc/renard/examples/nginx-site.conf"),
]
LOCKED = re.compile(r"lock|locked", re.I)
ENV = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}


def package_tool(*args, timeout: float = 180) -> subprocess.CompletedProcess:
    """dpkg or apt-get, waiting while another process holds dpkg's lock (other work on this
    machine may run apt); fails the test on any other error, with the tool's output."""
    deadline = time.monotonic() + timeout
    while True:
        result = run(*args, check=False, env=ENV, stdin=subprocess.DEVNULL, timeout=timeout)
        if result.returncode == 0:
            return result
        if not LOCKED.search(result.stderr) or time.monotonic() > deadline:
            pytest.fail(f"{' '.join(map(str, args))} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        time.sleep(2)


def status() -> str:
    """dpkg's status of renard: 'install ok installed', 'deinstall ok config-files', or ''."""
    result = run("dpkg-query", "--show", "--showformat=${Status}", "renard", check=False)
    return result.stdout if result.returncode == 0 else ""


def user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def purge(had_user: bool) -> None:
    """Purge renard if dpkg knows it; remove the user renard if it was not there before."""
    if status():
        package_tool("dpkg", "--purge", "renard")
    if not had_user and user_exists("renard"):
        run("deluser", "--system", "--quiet", "renard", check=False)
        run("delgroup", "--system", "--quiet", "renard", check=False)
