"""run.json schema 1: what validates, what does not (with the path of the offending key),
the model's round trip, writing, reading and results/latest."""

import copy
import datetime as dt
import json
from pathlib import Path

import pytest

from arena.core.model import Run, SchemaError, validate
from arena.core.results import new_run_dir, point_latest

FIXTURE = Path(__file__).parent / "fixtures" / "run_sample.json"


def minimal_run() -> dict:
    return {
        "schema": 1,
        "run_id": "20261122-001500",
        "started": "2026-11-22T00:15:00Z",
        "finished": "2026-11-22T00:27:00Z",
        "machine": {
            "cpu_model": "cpu",
            "cores": 2,
            "kernel": "6.1.0",
            "os": "Debian 12",
            "memory_bytes": 1,
            "tools": {"wrk": "4.1.0"},
        },
        "config": {
            "server_cpus": "0",
            "client_cpus": "1",
            "duration_s": 10,
            "warmup_s": 2,
            "repetitions": 1,
            "modes": ["keepalive"],
            "connections": 50,
            "reference": "nginx-lua",
            "quick": False,
        },
        "entries": [
            {
                "name": "rust",
                "language": "Rust",
                "kind": "ours",
                "available": True,
                "reason": None,
                "version": "renard 0.1.0",
                "artifact_bytes": 1,
                "startup_ms": [3.0],
                "verify": {"pass": 1, "alt": 0, "fail": 0},
            }
        ],
        "samples": [
            {
                "entry": "rust",
                "mode": "keepalive",
                "rep": 0,
                "duration_s": 10.0,
                "requests": 10,
                "rps": 1.0,
                "latency_us": {"p50": 1, "p90": 2, "p99": 3, "max": 4},
                "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0},
                "non_3xx": 0,
                "server_cpu_s": 0.1,
                "cpu_us_per_req": 1.0,
                "client_cpu_share": 0.5,
                "server_cpu_share": 0.9,
                "peak_rss_bytes": 1,
                "pss_bytes": 1,
                "client_bound": False,
            }
        ],
    }


def broken(mutate) -> str:
    run = copy.deepcopy(minimal_run())
    mutate(run)
    with pytest.raises(SchemaError) as info:
        validate(run)
    return str(info.value)


def test_minimal_run_is_valid():
    assert validate(minimal_run())


def test_shared_fixture_is_valid():
    validate(json.loads(FIXTURE.read_text()))


def test_extra_keys_are_allowed():
    run = minimal_run()
    run["failures"] = []
    run["samples"][0]["wall_s"] = 10.0
    validate(run)


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda r: r.update(schema=2), "schema: must be 1"),
        (lambda r: r.pop("machine"), "machine: missing key"),
        (lambda r: r["machine"].pop("kernel"), "machine.kernel: missing key"),
        (lambda r: r["config"].update(repetitions="3"), "config.repetitions: must be int"),
        (lambda r: r["config"].update(quick=0), "config.quick: must be bool"),
        (lambda r: r["entries"][0].update(startup_ms=[None]), "entries[0].startup_ms[0]: must be"),
        (lambda r: r["samples"][0].pop("client_bound"), "samples[0].client_bound: missing key"),
        (lambda r: r["samples"][0].update(requests=True), "samples[0].requests: must be int, got bool"),
        (lambda r: r["samples"][0]["latency_us"].pop("p99"), "samples[0].latency_us.p99: missing key"),
        (lambda r: r["samples"][0]["errors"].update(read=1.5), "samples[0].errors.read: must be int"),
        (lambda r: r["samples"][0].update(entry="go"), "samples[0].entry: 'go' is not in entries"),
        (lambda r: r["samples"][0].update(mode="close"), "samples[0].mode: 'close' is not in config.modes"),
        (lambda r: r.update(samples={}), "samples: must be a list"),
        (lambda r: r["entries"][0]["verify"].pop("alt"), "entries[0].verify.alt: missing key"),
        (lambda r: r["config"].update(cpu_quota=1.5), "config.cpu_quota: must be a number in (0, 1]"),
        (lambda r: r["entries"][0].update(warmup_s="10"), "entries[0].warmup_s: must be int"),
    ],
)
def test_invalid_run_names_the_key(mutate, message):
    assert message in broken(mutate)


def test_latency_may_be_null_when_not_measured():
    run = minimal_run()
    run["samples"][0]["latency_us"] = dict.fromkeys(("p50", "p90", "p99", "max"))
    validate(run)


def test_cpu_per_request_may_be_null_when_no_request_was_answered():
    run = minimal_run()
    run["samples"][0].update(requests=0, cpu_us_per_req=None)
    validate(run)


def test_write_then_read_round_trips_and_latest_points_at_newest(tmp_path):
    now = dt.datetime(2026, 11, 22, 0, 15, tzinfo=dt.UTC)
    first = new_run_dir(tmp_path, now)
    second = new_run_dir(tmp_path, now)  # same second: suffixed, never reused
    assert (first.name, second.name) == ("20261122-001500", "20261122-001500-1")
    Run.load(minimal_run()).write(second)
    point_latest(tmp_path, first)
    point_latest(tmp_path, second)
    assert (tmp_path / "latest").resolve() == second.resolve()
    assert Run.read(tmp_path / "latest") == Run.load(minimal_run())


def test_a_schema_1_run_written_before_the_cap_reads_as_uncapped():
    config = Run.load(minimal_run()).config
    assert (config.cpu_quota, config.cap_problem) == (None, None)


def test_the_model_saves_every_key_it_loaded():
    doc = json.loads(FIXTURE.read_text())
    doc["entries"][2]["warmup_s"] = 10  # an entry with its own warm-up (java-seed)
    saved = Run.load(doc).to_json()
    for key in ("machine", "entries", "samples"):
        assert saved[key] == doc[key]
    assert {k: saved["config"][k] for k in doc["config"]} == doc["config"]


def test_invalid_run_is_not_written(tmp_path):
    run = Run.load(minimal_run())
    run.samples[0].mode = "turbo"
    with pytest.raises(SchemaError, match="samples\\[0\\].mode"):
        run.write(tmp_path)
    assert not (tmp_path / "run.json").exists()


def test_a_run_without_pairs_or_tracked_still_loads_and_one_with_them_round_trips():
    doc = json.loads(FIXTURE.read_text())
    assert Run.load(copy.deepcopy(doc)).pairs == []
    doc["pairs"] = [{"mode": "keepalive", "entry": "rust", "entry_rep": 3, "partner": "nginx-lua", "partner_rep": 3}]
    doc["samples"][0]["tracked"] = False
    run = Run.load(copy.deepcopy(doc))
    assert (run.pairs[0].partner_rep, run.samples[0].tracked) == (3, False)
    assert run.to_json()["pairs"] == doc["pairs"] and run.to_json()["samples"][0]["tracked"] is False


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda d: d.update(
                pairs=[{"mode": "keepalive", "entry": "zz", "entry_rep": 3, "partner": "rust", "partner_rep": 3}]
            ),
            "pairs[0].entry: 'zz' is not in entries",
        ),
        (lambda d: d.update(pairs=[{"mode": "keepalive", "entry": "rust"}]), "pairs[0].entry_rep: missing key"),
        (lambda d: d["samples"][0].update(tracked="yes"), "samples[0].tracked: must be bool"),
    ],
)
def test_invalid_pairs_or_tracked_name_the_key(mutate, message):
    doc = json.loads(FIXTURE.read_text())
    mutate(doc)
    with pytest.raises(SchemaError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate(doc)
