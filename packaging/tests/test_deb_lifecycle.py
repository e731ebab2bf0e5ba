"""The Debian package's life on this machine's own dpkg: an upgrade to a bumped build, a removal,
a purge, each test starting from no package and purging at its end even when it fails. Where
systemd is not running (this machine: no /run/systemd/system) the maintainer scripts must still
succeed; what they ask of systemd where it runs is checked with stand-ins for its commands, in a
mount namespace of their own."""

import os
from pathlib import Path

import pytest

from conftest import run
from packages import CONFFILE, ENABLED, NGINX_SNIPPETS, UNITS, package_tool, purge, status, user_exists


@pytest.fixture
def clean_machine():
    """No renard package before the test; purged after it, pass or fail, and the user renard
    removed again if the test's install created it (the machine as it was)."""
    purge(had_user=True)
    had_user = user_exists("renard")
    yield
    purge(had_user)
    assert not status(), "renard is still known to dpkg after the purge"


def test_upgrade_keeps_an_edited_conffile(clean_machine, release, bumped_release):
    package_tool("dpkg", "--install", release.deb())
    edited = CONFFILE.read_text().replace("avatar.example.org", "foxes.example.net")
    CONFFILE.write_text(edited)
    package_tool("dpkg", "--install", bumped_release.deb())
    assert run("dpkg-query", "--show", "--showformat=${Version}", "renard").stdout == bumped_release.version
    assert run("renard", "--version").stdout.startswith(f"renard {bumped_release.crate_version} ")
    assert CONFFILE.read_text() == edited
    assert not list(CONFFILE.parent.glob("renard.conf.dpkg-*"))
    assert all(link.is_symlink() for link in ENABLED)


def test_remove_keeps_the_conffile_and_purge_deletes_it(clean_machine, release):
    package_tool("dpkg", "--install", release.deb())
    package_tool("dpkg", "--remove", "renard")
    assert status() == "deinstall ok config-files"
    assert not Path("/usr/bin/renard").exists()
    assert not any(unit.exists() for unit in UNITS)
    assert CONFFILE.is_file() and all(snippet.is_file() for snippet in NGINX_SNIPPETS)
    package_tool("dpkg", "--purge", "renard")
    assert status() == ""
    assert not CONFFILE.exists() and not CONFFILE.parent.exists()
    assert not any(snippet.exists() for snippet in NGINX_SNIPPETS)
    assert not any(link.is_symlink() for link in ENABLED)


STAND_IN = """#!/bin/sh
echo "$(basename "$0") $*" >> "$CALLS"
case "$(basename "$0") $1" in
  "deb-systemd-helper --quiet") exit 0 ;;  # was-enabled: yes, as on a first install
esac
exit 0
"""


@pytest.mark.parametrize("systemd", [True, False], ids=["systemd-running", "no-systemd"])
def test_maintainer_scripts_start_restart_and_stop_only_where_systemd_runs(release, tmp_path, systemd):
    """Each maintainer script, run as dpkg runs it for an install, an upgrade, a removal and a
    purge, with systemd's and adduser's commands replaced by stand-ins that record their
    arguments, in a mount namespace where /run is empty (and holds systemd/system if systemd)."""
    scripts = tmp_path / "DEBIAN"
    run("dpkg-deb", "--control", release.deb(), scripts)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for command in ["deb-systemd-helper", "deb-systemd-invoke", "systemctl", "adduser", "addgroup"]:
        (bin_dir / command).write_text(STAND_IN)
        (bin_dir / command).chmod(0o755)
    calls = tmp_path / "calls"
    steps = {
        "install": ["postinst", "configure"],
        "upgrade": ["prerm", "upgrade", "1.0.1"],
        "upgraded": ["postinst", "configure", release.version],
        "remove": ["prerm", "remove"],
        "removed": ["postrm", "remove"],
        "purge": ["postrm", "purge"],
    }
    make_run = "mkdir -p /run/systemd/system; " if systemd else ""
    recorded = {}
    for step, (script, *args) in steps.items():
        calls.write_text("")
        shell = f'mount -t tmpfs tmpfs /run && {make_run}exec "{scripts / script}" "$@"'
        run(
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            shell,
            script,
            *args,
            env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(calls)},
        )
        recorded[step] = [
            line for line in calls.read_text().splitlines() if not line.startswith(("adduser", "addgroup"))
        ]

    enable = [
        "deb-systemd-helper unmask renard.socket",
        "deb-systemd-helper --quiet was-enabled renard.socket",
        "deb-systemd-helper enable renard.socket",
        "deb-systemd-helper unmask renard.service",
        "deb-systemd-helper --quiet was-enabled renard.service",
        "deb-systemd-helper enable renard.service",
    ]
    reload = ["systemctl --system daemon-reload"]
    purge = [
        "deb-systemd-helper purge renard.socket renard.service",
        "deb-systemd-helper unmask renard.socket renard.service",
    ]
    if systemd:
        assert recorded == {
            "install": [*enable, *reload, "deb-systemd-invoke start renard.socket renard.service"],
            "upgrade": [],
            "upgraded": [*enable, *reload, "deb-systemd-invoke restart renard.service"],
            "remove": ["deb-systemd-invoke stop renard.socket renard.service"],
            "removed": reload,
            "purge": [*reload, *purge],
        }
    else:
        assert recorded == {
            "install": enable,
            "upgrade": [],
            "upgraded": enable,
            "remove": [],
            "removed": [],
            "purge": purge,
        }
