"""A recorded run kept byte for byte: run.json read and written back, and its reports
rendered again, equal the files committed in tests/fixtures/golden (its README says how to
update them when the report changes on purpose)."""

from __future__ import annotations

from pathlib import Path

import pytest
from archives import unpack as unpack_tar
from click.testing import CliRunner

from arena.cli import cli
from arena.core.model import Run

GOLDEN = Path(__file__).parent / "fixtures" / "golden"


def unpack(name: str, into: Path) -> Path:
    return unpack_tar(GOLDEN / name, into)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> tuple[Path, Path]:
    """(the recorded run with its reports rendered now, the reports rendered when recorded)"""
    run_dir = unpack("recorded-run.tar.xz", tmp_path_factory.mktemp("run"))
    result = CliRunner().invoke(cli, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    return run_dir, unpack("rendered.tar.xz", tmp_path_factory.mktemp("expected"))


def test_run_json_read_and_written_back_is_byte_identical(tmp_path):
    recorded = unpack("recorded-run.tar.xz", tmp_path / "in") / "run.json"
    written = Run.read(recorded).write(tmp_path)
    assert written.read_bytes() == recorded.read_bytes()


@pytest.mark.parametrize("name", ["report.md", "report.html", "results.csv"])
def test_report_rendered_again_is_byte_identical(rendered, name):
    run_dir, expected = rendered
    assert (run_dir / name).read_bytes() == (expected / name).read_bytes(), f"{name} differs from the golden one"
