"""Bench internals without a network run: sample arithmetic, the client-bound rule, wrk's
command line per mode, the interleaved order. (The answer check is the runner's:
spec/runner/tests/test_reference.py.)"""

from dataclasses import dataclass, replace

import pytest

from arena.bench import plan
from arena.bench.measure import Plan
from arena.core.model import Config
from arena.core.modes import MODES
from arena.core.sample import Sample
from arena.load.warmup import warmup_s
from arena.load.wrk import wrk_argv, wrk_script
from arena.workflows import bench as benchrun

WRK = {
    "requests": 1000,
    "duration_us": 2_000_000,
    "bytes": 0,
    "latency_us": {"p50": 10, "p90": 20, "p99": 30, "max": 40, "mean": 12.0},
    "errors": {"connect": 1, "read": 2, "write": 3, "timeout": 4, "status": 5},
}


def sample(client_cpu_s: float, server_cpu_s: float, mode: str = "keepalive", cpu_limit: float = 1.0) -> Sample:
    return Sample.from_wrk("x", mode, 0, WRK, client_cpu_s, 2.0, server_cpu_s, 100, 50, cpu_limit=cpu_limit)


def test_sample_derives_rate_cpu_per_request_and_shares():
    s = sample(client_cpu_s=1.0, server_cpu_s=0.5)
    assert (s.rps, s.cpu_us_per_req, s.efficiency) == (500.0, 500.0, 2000.0)
    assert (s.client_cpu_share, s.server_cpu_share) == (0.5, 0.25)
    assert s.errors == {"connect": 1, "read": 2, "write": 3, "timeout": 4} and s.non_3xx == 5


@pytest.mark.parametrize(
    "client,server,bound",
    [
        (1.9, 1.0, True),  # wrk 95% busy, server 50%: the run measured wrk
        (1.9, 1.9, False),  # both saturated
        (1.0, 1.0, False),  # neither saturated
        (1.8, 1.79, True),  # exactly 90% counts as busy
    ],
)
def test_client_bound_when_wrk_core_busy_and_server_not(client, server, bound):
    assert sample(client, server).client_bound is bound


@pytest.mark.parametrize("server,bound", [(0.95, False), (0.8, True)])
def test_under_a_half_core_cap_the_server_is_saturated_at_90_percent_of_its_quota(server, bound):
    assert sample(1.9, server, "keepalive-capped", cpu_limit=0.5).client_bound is bound


def test_pipelined_latency_is_recorded_as_not_measured():
    s = Sample.from_wrk("x", "pipeline16", 0, WRK, 1.0, 2.0, 0.5, 100, 50).to_json()
    assert s["latency_us"] == {"p50": None, "p90": None, "p99": None, "max": None} and "wrk" in s["latency_note"]


def test_no_requests_means_no_cpu_per_request():
    s = Sample.from_wrk("x", "close", 0, dict(WRK, requests=0), 1.0, 2.0, 0.1, 0, 0)
    assert (s.cpu_us_per_req, s.efficiency, s.rps) == (None, None, 0.0)


def test_wrk_command_is_pinned_and_close_mode_sends_connection_close(tmp_path):
    cfg = Config(client_cpus="1", connections=50)
    close = wrk_argv("http://127.0.0.1:1/", MODES["close"], 3, cfg, tmp_path / "s.lua")
    keep = wrk_argv("http://127.0.0.1:1/", MODES["keepalive"], 3, cfg, tmp_path / "s.lua")
    assert close[:4] == ["taskset", "-c", "1", "wrk"] and "-c50" in close and "-d3s" in close
    assert "Connection: close" in close and "Connection: close" not in keep


def test_pipeline_script_adds_request_and_every_script_reports(tmp_path):
    pipe = wrk_script(MODES["pipeline16"], tmp_path).read_text()
    keep = wrk_script(MODES["keepalive"], tmp_path).read_text()
    assert "function done" in pipe and "function done" in keep
    assert "request = function" in pipe and "request = function" not in keep


@dataclass
class Stub:
    """What the plan reads of an entry."""

    name: str
    warmup_s: int = 0
    tier: str = "tuned"  # every mode (modes.runs_in)


def test_plan_interleaves_entries_within_each_mode_and_rep():
    plan = Plan(entries=[Stub("A"), Stub("B"), Stub("C")], cfg=Config(repetitions=2, modes=("keepalive", "close")))
    order = [f"{rep}{mode[0]}{e.name}" for rep, mode, e in plan.steps]
    assert order == ["0kA", "0kB", "0kC", "0cA", "0cB", "0cC", "1kA", "1kB", "1kC", "1cA", "1cB", "1cC"]


def test_default_plan_for_four_entries_fits_seven_minutes():
    cfg = Config(duration_s=plan.DURATION_S, warmup_s=plan.WARMUP_S, repetitions=plan.REPETITIONS)
    assert Plan(entries=[Stub("A"), Stub("B"), Stub("C"), Stub("floor")], cfg=cfg).seconds() < 7 * 60


def test_an_entry_warms_up_for_the_longer_of_its_own_warm_up_and_the_runs():
    cfg = Config(warmup_s=1, duration_s=3, repetitions=1, modes=("keepalive",))
    assert (warmup_s(Stub("jvm", 12), cfg), warmup_s(Stub("c"), cfg)) == (12, 1)
    assert warmup_s(Stub("jvm", 12), replace(cfg, warmup_s=20)) == 20
    assert warmup_s(Stub("jvm", 12), replace(cfg, warmup_s=0)) == 12  # --quick's 0 does not make it cold
    jvm, c = plan.sample_s(Stub("jvm", 12), cfg), plan.sample_s(Stub("c"), cfg)
    assert Plan([Stub("jvm", 12), Stub("c")], cfg).seconds() == pytest.approx(jvm + c)
    # The jvm's judged warm-up is expected at 9 s (halfway between 6 and 12) less the 0.5 s its
    # 3 s lead saves in window gaps; c warms up for the run's 1 s.
    assert jvm - c == pytest.approx(8.5 - 1)


def test_without_a_cgroup_the_capped_modes_are_left_out_and_the_reason_kept(monkeypatch):
    monkeypatch.setattr(benchrun, "probe", lambda quota: "no cgroup hierarchy with the cpu controller is mounted")
    cfg = benchrun.with_cap_or_without(Config())
    assert cfg.modes == ("keepalive", "pipeline16", "close")
    assert (cfg.cpu_quota, cfg.cap_problem) == (None, "no cgroup hierarchy with the cpu controller is mounted")


def test_with_a_cgroup_the_quota_is_kept_and_without_capped_modes_only_where_a_group_can_be_made(monkeypatch):
    monkeypatch.setattr(benchrun, "probe", lambda quota: None)
    assert benchrun.with_cap_or_without(Config(cpu_quota=0.25)).cpu_quota == 0.25
    # no capped mode: the quota still says the server may sit in an (uncapped) cgroup to count its CPU
    assert benchrun.with_cap_or_without(Config(modes=("keepalive",))).cpu_quota == 0.5
    monkeypatch.setattr(benchrun, "probe", lambda quota: "no cgroup hierarchy with the cpu controller is mounted")
    cfg = benchrun.with_cap_or_without(Config(modes=("keepalive",)))
    assert (cfg.cpu_quota, cfg.cap_problem) == (None, None)
