"""The release's tarballs as a user gets them: checksums that verify, the files a self-hoster
needs, a static binary that runs as nobody and answers 302 (aarch64's under qemu-user)."""

import http.client
import re
import shutil
import signal
import subprocess
import tarfile
import time

import pytest

from conftest import ARCHES, HOST, run

TEMPLATE = "https://avatar.example.org/Renard-{n}.png"


def test_sha256sums_verify_and_list_every_artifact(release):
    listed = sorted(line.split()[1] for line in (release.dir / "SHA256SUMS").read_text().splitlines())
    expected = sorted(
        [release.tarball(a).name for a in ARCHES]
        + [release.deb(a).name for a in ARCHES]
        + [release.sbom(a).name for a in ARCHES]
    )
    assert listed == expected
    checked = run("sha256sum", "--check", "--strict", "SHA256SUMS", cwd=release.dir)
    assert checked.stdout.count(": OK\n") == len(expected), checked.stdout


@pytest.mark.parametrize("arch", ARCHES)
def test_tarball_holds_the_release_files_owned_by_root_at_the_commit_time(release, arch):
    top = f"renard-{release.version}-{arch}-linux-musl"
    with tarfile.open(release.tarball(arch)) as archive:
        members = archive.getmembers()
    files = sorted(m.name.removeprefix(top + "/") for m in members if m.isfile())
    assert files == sorted(
        [
            "renard",
            "LICENSE-MIT",
            "LICENSE-APACHE",
            "README.md",
            "CHANGELOG.md",
            "renard.service",
            "renard.socket",
            "nginx-site.conf",
            "nginx/renard.conf",
            "nginx/renard-http.conf",
            "renard.conf",
            "renard.8",
            "completions/renard.bash",
            "completions/_renard",
            "completions/renard.fish",
            "LICENSES-crates.txt",
            "renard.cdx.json",
        ]
    )
    assert all(m.name == top or m.name.startswith(top + "/") for m in members)
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, "", "")}
    assert {m.mtime for m in members} == {release.epoch}
    modes = {m.name.removeprefix(top + "/"): m.mode for m in members}
    assert modes["renard"] == 0o755 and modes["renard.conf"] == 0o644


@pytest.mark.parametrize("arch", ARCHES)
def test_binary_is_static(unpacked, arch):
    binary = unpacked(arch) / "renard"
    described = run("file", "--brief", binary).stdout
    machine = {"x86_64": "x86-64", "aarch64": "ARM aarch64"}[arch]
    assert machine in described and re.search(r"static(-pie)? linked|statically linked", described), described
    if arch == HOST:
        ldd = run("ldd", binary, check=False)
        output = ldd.stdout + ldd.stderr
        assert "=>" not in output and ("statically linked" in output or "not a dynamic executable" in output), output


def serve_once(command: list, timeout: float = 30) -> tuple[int, str, int]:
    """Start renard by command (listening on a free loopback port), send one GET /, stop it
    with SIGTERM: (status, Location, the server's uid). Bounded by timeout at each step."""
    server = subprocess.Popen(
        [str(c) for c in command] + ["--listen", "127.0.0.1:0", "--count", "21", "--location", TEMPLATE],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + timeout
        line = ""
        while "listening on" not in line:
            assert time.monotonic() < deadline and server.poll() is None, f"renard did not start: {line!r}"
            line = server.stderr.readline()
        port = int(re.search(r"listening on http://127\.0\.0\.1:(\d+)", line).group(1))
        uid = next(
            int(row.split()[1])
            for row in open(f"/proc/{server.pid}/status")  # noqa: SIM115 (read whole at once)
            if row.startswith("Uid:")
        )
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        connection.request("GET", "/")
        answer = connection.getresponse()
        status, location = answer.status, answer.getheader("Location")
        connection.close()
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout) == 0
        return status, location, uid
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def nobody(binary) -> list:
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", binary]


def test_binary_runs_as_nobody_and_answers_302(unpacked, public_dir):
    binary = public_dir / "renard"
    shutil.copy(unpacked(HOST) / "renard", binary)
    status, location, uid = serve_once(nobody(binary))
    assert uid == 65534
    assert status == 302
    assert re.fullmatch(r"https://avatar\.example\.org/Renard-(\d+)\.png", location)
    assert 1 <= int(re.search(r"(\d+)\.png", location).group(1)) <= 21


def test_aarch64_binary_answers_302_under_qemu(release, unpacked, public_dir):
    qemu = shutil.which("qemu-aarch64")
    if qemu is None:
        pytest.skip("qemu-aarch64 is not installed (packaging/apt.txt: qemu-user)")
    binary = public_dir / "renard"
    shutil.copy(unpacked("aarch64") / "renard", binary)
    version = run(qemu, binary, "--version").stdout.strip()
    assert version == f"renard {release.crate_version} (commit {release.commit[:12]})"
    status, location, uid = serve_once([*nobody(qemu), binary], timeout=60)
    assert (status, uid) == (302, 65534)
    assert re.fullmatch(r"https://avatar\.example\.org/Renard-(\d+)\.png", location)


def test_version_names_the_commit_the_release_was_built_from(release, host_binary):
    assert run(host_binary, "--version").stdout == f"renard {release.crate_version} (commit {release.commit[:12]})\n"
    assert run(host_binary, "-V").stdout == run(host_binary, "--version").stdout
