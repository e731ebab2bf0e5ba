"""The Debian package installed into this machine's own dpkg as the README says (apt install
./renard_VERSION_ARCH.deb), once for these read-only checks, and purged at the end of the module
even when a test fails; and lintian's verdict on both architectures' packages."""

import os
import pwd
import re
import shlex
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, run
from packages import (
    CONFFILE,
    ENABLED,
    INSTALLED,
    NGINX_SNIPPETS,
    SYSTEMD_RUNS,
    UNITS,
    package_tool,
    purge,
    status,
    user_exists,
)


@pytest.fixture(scope="module")
def installed(release):
    """The release's package installed by apt-get from its file; apt-get's output."""
    purge(had_user=True)
    had_user = user_exists("renard")
    try:
        yield package_tool("apt-get", "install", "--yes", "-o", "DPkg::Lock::Timeout=120", release.deb())
    finally:
        purge(had_user)


def test_install_puts_every_file_in_place(installed):
    assert status() == "install ok installed"
    missing = [str(p) for p in INSTALLED if not p.is_file()]
    assert not missing
    listed = set(run("dpkg", "--listfiles", "renard").stdout.split())
    assert {str(p) for p in INSTALLED} <= listed


def test_installed_renard_reports_the_package_version(installed, release):
    assert run("dpkg-query", "--show", "--showformat=${Version}", "renard").stdout == release.version
    assert run("renard", "--version").stdout.startswith(
        f"renard {release.crate_version} (commit {release.commit[:12]})"
    )


def test_installed_units_pass_systemd_analyze_verify(installed):
    result = run("systemd-analyze", "verify", *UNITS, check=False)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr


def test_conffile_is_registered_and_holds_the_default_settings(installed):
    conffiles = run("dpkg-query", "--show", "--showformat=${Conffiles}", "renard").stdout.split()
    assert str(CONFFILE) in conffiles
    assert CONFFILE.read_text() == (REPO / "packaging" / "deb" / "renard.conf").read_text()
    settings = dict(line.split("=", 1) for line in CONFFILE.read_text().splitlines() if "=" in line and line[0] != "#")
    assert settings == {
        "RENARD_COUNT_FROM": "/srv/avatar",
        "RENARD_LOCATION": "https://avatar.example.org/Renard-{n}.png",
    }


def test_nginx_snippets_are_conffiles_as_deploy_writes_them(installed):
    conffiles = run("dpkg-query", "--show", "--showformat=${Conffiles}", "renard").stdout.split()
    for path, source in NGINX_SNIPPETS.items():
        assert str(path) in conffiles
        assert path.read_text() == (REPO / source).read_text(), path


def test_system_user_renard_exists(installed):
    user = pwd.getpwnam("renard")
    assert user.pw_uid < 1000, "a system user"
    assert user.pw_dir == "/nonexistent" and user.pw_shell.endswith("nologin")
    assert run("getent", "group", "renard").stdout.split(":")[2] == str(user.pw_gid)


def test_units_are_enabled_on_install(installed):
    for link, unit in zip(ENABLED, UNITS, strict=True):
        assert link.is_symlink() and Path(os.readlink(link)) == unit


def test_maintainer_scripts_succeed_where_systemd_is_not_running(installed):
    if SYSTEMD_RUNS:
        pytest.skip("systemd runs here: the install started the units (test_units_run_where_systemd_runs)")
    said = installed.stdout + installed.stderr  # apt-get passes the scripts' output on
    assert "fail" not in said.lower() and "not been booted" not in said, said
    # The postinst says where the images go, since /srv/avatar has none.
    if not Path("/srv/avatar/Renard-1.png").exists():
        assert "renard: no /srv/avatar/Renard-1.png yet" in said


def test_units_run_where_systemd_runs(installed):
    if not SYSTEMD_RUNS:
        pytest.skip("systemd is not running on this machine (no /run/systemd/system)")
    assert run("systemctl", "is-active", "renard.socket").stdout.strip() == "active"


def test_installed_service_answers_302_as_renard_through_socket_activation(installed, public_dir):
    """The unit's ExecStart as systemd would run it, short of a booted systemd: as the user
    renard (setpriv), given its listening socket by systemd-socket-activate (LISTEN_FDS), with
    the installed conffile's settings, its image folder moved to three test images."""
    images = public_dir / "images"
    images.mkdir(mode=0o755)
    for k in (1, 2, 3):
        (images / f"Renard-{k}.png").write_bytes(b"")
    config = public_dir / "renard.conf"
    config.write_text(CONFFILE.read_text().replace("RENARD_COUNT_FROM=/srv/avatar", f"RENARD_COUNT_FROM={images}"))
    config.chmod(0o644)
    exec_start = next(
        line.removeprefix("ExecStart=") for line in UNITS[0].read_text().splitlines() if line.startswith("ExecStart=")
    )
    assert exec_start == f"/usr/bin/renard --config {CONFFILE}"
    command = shlex.split(exec_start.replace(str(CONFFILE), str(config)))
    socket_path = public_dir / "renard.sock"
    as_renard = ["setpriv", "--reuid=renard", "--regid=renard", "--init-groups"]
    server = subprocess.Popen(
        ["systemd-socket-activate", "--listen", str(socket_path), *as_renard, *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Until the tool listens, a connect finds no file (before its bind) or is refused (between
        # its bind and its listen). It execs renard at the first connection, which then waits in
        # the queue.
        deadline = time.monotonic() + 10
        while True:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                client.connect(str(socket_path))
                break
            except (FileNotFoundError, ConnectionRefusedError) as e:
                client.close()
                if time.monotonic() >= deadline or server.poll() is not None:
                    server.terminate()  # its stderr is read whole only once it has ended
                    pytest.fail(f"{socket_path} not listened on within 10 s ({e}); stderr: {server.communicate()[1]}")
                time.sleep(0.05)
        with client:
            client.settimeout(10)
            client.sendall(b"GET /?seed=alice HTTP/1.1\r\nHost: avatar.example.org\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := client.recv(4096):
                answer += chunk
        head = answer.decode("ascii").split("\r\n")
        assert head[0] == "HTTP/1.1 302 Found", answer
        assert any(re.fullmatch(r"Location: https://avatar\.example\.org/Renard-[123]\.png", h) for h in head), head
        uid = next(
            int(r.split()[1]) for r in Path(f"/proc/{server.pid}/status").read_text().splitlines() if r[:4] == "Uid:"
        )
        assert uid == pwd.getpwnam("renard").pw_uid
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_installed_man_page_and_completions_are_found_where_tools_look(installed, tmp_path):
    assert run("man", "--where", "renard").stdout.strip() == "/usr/share/man/man8/renard.8.gz"
    loaded = run(
        "bash",
        "--norc",
        "-c",
        ". /usr/share/bash-completion/bash_completion; __load_completion renard && complete -p renard",
    )
    assert loaded.stdout.strip() == "complete -F _renard renard"
    # fish as a user starts it (--no-config would skip the vendor folders), in an empty home.
    home = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    fish = run("fish", "-c", "complete -C'renard --ver'", env=home).stdout
    assert fish.startswith("--version\t")
    zsh = run("zsh", "-f", "-c", "autoload -Uz _renard && whence -w _renard").stdout
    assert zsh.strip() == "_renard: function"


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_lintian_reports_no_error_or_warning(release, arch):
    result = run("lintian", "--fail-on", "error,warning", release.deb(arch), check=False, timeout=300)
    tags = [line for line in result.stdout.splitlines() if re.match(r"^[EW]: ", line)]
    assert result.returncode == 0 and not tags, result.stdout + result.stderr
