"""deploy/kubernetes validates against the Kubernetes schemas offline (kubernetes-validate
ships them) and keeps the container locked down."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

KUBE = Path(__file__).resolve().parents[1] / "kubernetes"
MANIFESTS = sorted(KUBE.glob("*.yaml"))
VALIDATE = shutil.which("kubernetes-validate", path=str(Path(sys.executable).parent))


def validate(*paths: Path) -> subprocess.CompletedProcess:
    assert VALIDATE, "kubernetes-validate is missing from the virtualenv (make setup installs it)"
    return subprocess.run([VALIDATE, "--strict", "--quiet", *map(str, paths)], capture_output=True, text=True)


def test_every_manifest_validates_strictly():
    assert {p.name for p in MANIFESTS} >= {"deployment.yaml", "service.yaml", "hpa.yaml", "pdb.yaml"}
    result = validate(*MANIFESTS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_validator_rejects_a_misspelt_field(tmp_path):
    broken = tmp_path / "deployment.yaml"
    broken.write_text((KUBE / "deployment.yaml").read_text().replace("readOnlyRootFilesystem", "readOnlyRootFilesytem"))
    assert validate(broken).returncode != 0


@pytest.fixture(scope="module")
def pod():
    return yaml.safe_load((KUBE / "deployment.yaml").read_text())["spec"]["template"]["spec"]


def test_the_container_runs_unprivileged_on_a_read_only_root(pod):
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]


def test_liveness_and_readiness_ask_healthz_and_resources_are_bounded(pod):
    (container,) = pod["containers"]
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    assert set(container["resources"]) == {"requests", "limits"}
    assert pod["terminationGracePeriodSeconds"] >= 2  # longer than the drain window (SPEC §7.6)


def test_metrics_are_on_and_prometheus_is_told_where_to_scrape():
    template = yaml.safe_load((KUBE / "deployment.yaml").read_text())["spec"]["template"]
    (container,) = template["spec"]["containers"]
    assert "--metrics" in container["args"]
    (port,) = container["ports"]
    assert template["metadata"]["annotations"] == {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(port["containerPort"]),
        "prometheus.io/path": "/metrics",
    }
