"""The declared formats (core/schema.py) read the runs already archived, and a bad file is one
error naming the file, the key's path and the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from archives import unpack
from click.testing import CliRunner

from arena.cli import cli
from arena.core.model import Run, SchemaError
from arena.counts import syscalls

REPO = Path(__file__).resolve().parents[2]
ARCHIVED = REPO / "docs" / "runs" / "20261128-040402.tar.xz"
SHARED = REPO.parent / "shared" / "runs" / "intel-xeon-8b223de"  # a run kept in ../shared, beside the checkout
FIXTURE = Path(__file__).parent / "fixtures" / "run_sample.json"


def test_the_archived_run_in_docs_loads_with_its_side_files(tmp_path):
    run_dir = unpack(ARCHIVED, tmp_path)
    run_json = next(run_dir.rglob("run.json"))
    run = Run.read(run_json)
    assert run.samples and run.entries
    for counts in run_json.parent.rglob("syscalls.json"):
        assert syscalls.load(counts)[0]


@pytest.mark.skipif(not SHARED.is_dir(), reason="no ../shared beside the checkout: its kept run is not here")
def test_the_shared_run_loads_with_its_side_files():
    run = Run.read(SHARED)
    assert run.samples and run.entries
    for counts in SHARED.rglob("syscalls.json"):
        assert syscalls.load(counts)[0]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["samples"][2].update(rps="fast"), "samples[2].rps: must be int/float, got str"),
        (lambda d: d["entries"][1].pop("startup_ms"), "entries[1].startup_ms: missing key"),
        (lambda d: d["entries"][0]["verify"].pop("fail"), "entries[0].verify.fail: missing key"),
        (lambda d: d["samples"][0].update(mode="turbo"), "samples[0].mode: 'turbo' is not in config.modes"),
        (lambda d: d["machine"].update(cores=4.5), "machine.cores: must be int, got float"),
    ],
)
def test_a_bad_run_json_is_one_error_naming_the_file_the_key_and_the_reason(tmp_path, mutate, message):
    doc = json.loads(FIXTURE.read_text())
    mutate(doc)
    (tmp_path / "run.json").write_text(json.dumps(doc))
    with pytest.raises(SchemaError, match="^" + message.replace("[", r"\[").replace("]", r"\]") + "$"):
        Run.read(tmp_path)
    result = CliRunner().invoke(cli, ["report", str(tmp_path)])
    assert result.exit_code != 0 and str(result.exception) == f"{tmp_path / 'run.json'}: {message}"


def test_a_run_written_before_the_cap_reads_as_uncapped_and_pass_fail_keep_their_names():
    doc = json.loads(FIXTURE.read_text())
    doc["config"].pop("cpu_quota", None)
    run = Run.load(doc)
    assert run.config.cpu_quota is None
    verify = next(e.verify for e in run.entries if e.verify)
    assert {"pass", "fail"} <= set(next(e for e in run.to_json()["entries"] if e["verify"])["verify"])
    assert verify.passed >= 0
