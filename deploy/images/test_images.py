"""Every renard's image (images.py, NAME.Containerfile) built by podman from this host's files,
run read-only as nobody with the suite's smoke cases (a 302 whose Location is the template's,
the same for the same seed; /healthz) through a published port, stopped by SIGTERM with exit
0, and sized: base and application bytes written to results/images/NAME.json, which `arena
footprint` reads. podman keeps everything in a storage of the test's own (vfs, removed at
the end). The entries are built first (make test-images runs `arena build` for them)."""

import http.client
import json
import os
import re
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

import images

LIMITS = ["nofile=4096:4096", "nproc=1024:1024"]  # podman's defaults exceed this machine's
READY_S = 30.0  # a container answers within this (the JVM and Deno start slowest)
LOCATION = "https://avatar.example.org/fox/{n}.png"
LOCATION_RE = re.compile(r"https://avatar\.example\.org/fox/[1-7]\.png")
SIZES = images.REPO / "results" / "images"


class Podman:
    """podman with a storage of its own, as it runs on these machines: vfs (no overlay mounts
    in a container), cgroupfs (no systemd), runc (crun refuses this kernel's cgroup layout)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.argv = ["podman", "--root", str(folder / "storage"), "--runroot", str(folder / "run")]
        self.argv += ["--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--runtime", "runc"]

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([*self.argv, *args], capture_output=True, text=True, timeout=180)
        if check:
            assert result.returncode == 0, f"podman {' '.join(args)}: {result.stderr[-2000:]}"
        return result


@pytest.fixture(scope="module")
def podman(tmp_path_factory, loopback_tracked):
    if os.geteuid() != 0:
        pytest.skip("podman runs rootful here (rootless needs subordinate ids this machine does not give)")
    assert shutil.which("podman"), "podman is missing (deploy/apt.txt names it; scripts/deps installs it)"
    engine = Podman(tmp_path_factory.mktemp("podman"))
    try:
        yield engine
    finally:
        for args in (["rm", "--all", "--force"], ["rmi", "--all", "--force"]):
            engine(*args, check=False)
        shutil.rmtree(engine.folder, ignore_errors=True)


def ours() -> list[str]:
    """The names of the `ours` entries of servers/*/entry.toml."""
    names = []
    for manifest in sorted((images.REPO / "servers").glob("*/entry.toml")):
        names += [e["name"] for e in tomllib.loads(manifest.read_text())["entry"] if e["kind"] == "ours"]
    return names


def test_every_renard_has_a_recipe_and_a_containerfile():
    assert sorted(images.RECIPES) == sorted(ours())
    for name in images.RECIPES:
        assert (images.HERE / f"{name}.Containerfile").is_file(), name


def test_ldd_names_the_c_library_and_the_loader_of_a_dynamic_binary():
    found = {p.name for p in images.libraries(Path("/bin/sh"))}
    assert {"libc.so.6", "ld-linux-x86-64.so.2"} <= found
    assert images.libraries(Path(__file__)) == []  # not an ELF file: nothing


def get(port: int, method: str, target: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
    connection.request(method, target)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def answers(port: int) -> bool:
    try:
        return get(port, "GET", "/?seed=alice").status == 302
    except OSError:
        return False


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("entry", sorted(images.RECIPES))
def test_the_image_runs_read_only_as_nobody_answers_the_smoke_cases_and_is_sized(podman, entry, tmp_path):
    tag = f"localhost/renard-{entry}:test"
    sizes = images.build(podman.argv, entry, tmp_path, tag)
    (config,) = json.loads(podman("image", "inspect", tag).stdout)
    assert config["Config"]["User"] == "65534:65534"
    assert 0 <= sizes.base_bytes < sizes.image_bytes
    limits = [arg for limit in LIMITS for arg in ("--ulimit", limit)]
    probe = images.RECIPES[entry].probe
    if probe:
        run = podman("run", "--rm", "--read-only", *limits, "--entrypoint", probe[0], tag, *probe[1:], check=False)
        assert run.returncode == 0, f"{entry}: {' '.join(probe)}: {run.stdout}{run.stderr}"
    port = free_port()
    options = list(limits)
    if images.RECIPES[entry].io_uring:
        options += ["--security-opt", f"seccomp={images.seccomp_with_io_uring(tmp_path / 'seccomp.json')}"]
    name = podman(
        "run", "--detach", "--read-only", *options, "--publish", f"127.0.0.1:{port}:8080",
        "--env", f"RENARD_LOCATION={LOCATION}", "--env", "RENARD_COUNT=7", tag, "--threads", "1",
    ).stdout.strip()  # fmt: skip
    try:
        deadline = time.monotonic() + READY_S
        while not answers(port):
            logs = podman("logs", name, check=False).stderr[-1500:]
            assert time.monotonic() < deadline, f"{entry}: no 302 within {READY_S} s; its output: {logs}"
            time.sleep(0.3)
        (state,) = json.loads(podman("inspect", name).stdout)
        assert state["HostConfig"]["ReadonlyRootfs"] is True
        status = Path(f"/proc/{state['State']['Pid']}/status").read_text()
        assert re.search(r"^Uid:\s+65534\s", status, re.M), status
        first = get(port, "GET", "/?seed=alice")
        assert LOCATION_RE.fullmatch(first.headers["Location"])
        assert get(port, "GET", "/?seed=alice").headers["Location"] == first.headers["Location"]
        assert LOCATION_RE.fullmatch(get(port, "HEAD", "/").headers["Location"])
        assert get(port, "GET", "/healthz").status == 200
        assert get(port, "GET", "/nowhere").status == 404
        podman("stop", "--time", "10", name)
        (state,) = json.loads(podman("inspect", name).stdout)
        assert state["State"]["ExitCode"] == 0  # SIGTERM drained (SPEC §7.6), not killed
    finally:
        podman("rm", "--force", name, check=False)
    images.record(sizes, SIZES)
