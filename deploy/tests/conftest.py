"""Fixtures of the deploy tests: the flagship's binary and a stack (nginx + renard) on loopback."""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy"))
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from stack import Stack  # noqa: E402

RENARD = REPO / "servers" / "rust" / "bin" / "renard"


@pytest.fixture(scope="session")
def renard() -> Path:
    if not RENARD.is_file():
        pytest.fail(f"{RENARD} is missing: build it with servers/rust/build (make test does)")
    return RENARD


@pytest.fixture(params=["unix", "tcp"])
def stack(renard, tmp_path, request):
    """nginx in front of one renard, on a Unix socket (the site's default) or TCP loopback."""
    with Stack(renard, tmp_path, upstream=request.param) as s:
        yield s


@pytest.fixture(scope="session")
def chi_square():
    """The runner's chi-square test: (statistic, degrees of freedom, p-value)."""
    from renard_conformance.stats import chi_square as test

    return test


_IMAGE_SIZES: dict[str, tuple[int, int]] = {}


@pytest.fixture(scope="session")
def image_sizes() -> dict[str, tuple[int, int]]:
    """Sizes of the container images the tests build: name -> (image bytes, binary bytes),
    printed at the end of the run."""
    return _IMAGE_SIZES


def pytest_terminal_summary(terminalreporter):
    for name, (image, binary) in _IMAGE_SIZES.items():
        terminalreporter.write_line(f"deploy: container image {name}: {image:,} bytes (the binary: {binary:,})")
