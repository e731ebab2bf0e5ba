"""The benchmark: startup time, then wrk in each mode, entries interleaved, one fresh server
process per sample, server and load generator pinned to their own cores."""

from __future__ import annotations

import json
import resource
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .entries import Entry
from .process import Launch, StartError, free_port, launch_ready, start
from .verify import load_runner

MODES = ("keepalive", "pipeline16", "close")
CLIENT_BOUND_SHARE = 0.90  # the load generator's core this busy while the server's is not
WRK_MARK = "arena-json "   # prefix of the machine-readable line printed by wrk/report.lua
# wrk does not time requests sent through a pipelining request(): its percentiles read 0
# (github.com/wg/wrk/issues/236). Such latencies are recorded as null, with this note.
UNTIMED_MODES = {"pipeline16": "wrk does not time pipelined requests (wg/wrk#236): latency not measured"}


@dataclass
class BenchConfig:
    server_cpus: str = "0"
    client_cpus: str = "1"
    duration_s: int = 10     # per measured repetition (wrk takes whole seconds)
    warmup_s: int = 2        # an unmeasured wrk run in the same mode just before; 0: none
    repetitions: int = 3
    modes: tuple[str, ...] = MODES
    connections: int = 50
    reference: str = "nginx-lua"
    quick: bool = False
    startup_runs: int = 3    # starts timed per entry; the median is the figure

    def as_json(self) -> dict:
        return {"server_cpus": self.server_cpus, "client_cpus": self.client_cpus,
                "duration_s": self.duration_s, "warmup_s": self.warmup_s,
                "repetitions": self.repetitions, "modes": list(self.modes),
                "connections": self.connections, "reference": self.reference, "quick": self.quick}

    def seconds_per_sample(self) -> float:
        return self.duration_s + self.warmup_s + 0.5  # + start, checks, stop


class WrkError(Exception):
    pass


def wrk_script(mode: str, tmp: Path) -> Path:
    """The Lua script for a mode: report.lua's done(), plus pipeline.lua's request() for pipelining."""
    parts = [resources.files("arena.wrk").joinpath("report.lua").read_text()]
    if mode == "pipeline16":
        parts.append(resources.files("arena.wrk").joinpath("pipeline.lua").read_text())
    path = tmp / f"{mode}.lua"
    path.write_text("\n".join(parts))
    return path


def wrk_argv(url: str, mode: str, seconds: int, cfg: BenchConfig, script: Path) -> list[str]:
    argv = ["taskset", "-c", cfg.client_cpus, "wrk", "-t1", f"-c{cfg.connections}", f"-d{seconds}s",
            "-s", str(script)]
    if mode == "close":
        argv += ["-H", "Connection: close"]
    return argv + [url]


def run_wrk(argv: list[str], seconds: int) -> tuple[dict, float, float]:
    """Runs wrk to its end; returns (its JSON line, its CPU seconds, wall seconds).

    CPU = ru_utime + ru_stime of the children reaped meanwhile, which is wrk alone (the
    server stays alive until after this returns)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=seconds + 30, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise WrkError(f"wrk did not finish within {seconds + 30} s") from None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = p.stdout.decode(errors="replace")
    lines = [l for l in out.splitlines() if l.startswith(WRK_MARK)]
    if p.returncode != 0 or len(lines) != 1:
        tail = (out + p.stderr.decode(errors="replace")).strip().splitlines()[-5:]
        raise WrkError(f"wrk exited {p.returncode} without its JSON line: " + " | ".join(tail))
    return json.loads(lines[0][len(WRK_MARK):]), cpu, wall


def sample_from(entry: str, mode: str, rep: int, wrk: dict, client_cpu_s: float, wall_s: float,
                server_cpu_s: float, peak_rss: int, pss: int) -> dict:
    """One schema-1 sample from wrk's figures and the /proc readings around it."""
    duration_s = wrk["duration_us"] / 1e6
    requests = wrk["requests"]
    client_share = client_cpu_s / wall_s
    server_share = server_cpu_s / wall_s
    e = wrk["errors"]
    latency = {k: (None if mode in UNTIMED_MODES else wrk["latency_us"][k]) for k in ("p50", "p90", "p99", "max")}
    sample = {
        "entry": entry, "mode": mode, "rep": rep, "duration_s": round(duration_s, 4),
        "requests": requests, "rps": round(requests / duration_s, 1) if duration_s else 0.0,
        "latency_us": latency,
        "errors": {k: e[k] for k in ("connect", "read", "write", "timeout")},
        "non_3xx": e["status"],
        "server_cpu_s": round(server_cpu_s, 3),
        "cpu_us_per_req": round(server_cpu_s * 1e6 / requests, 3) if requests else None,
        "client_cpu_share": round(client_share, 3), "server_cpu_share": round(server_share, 3),
        "peak_rss_bytes": peak_rss, "pss_bytes": pss,
        "client_bound": client_share >= CLIENT_BOUND_SHARE and server_share < CLIENT_BOUND_SHARE,
        "client_cpu_s": round(client_cpu_s, 3), "wall_s": round(wall_s, 3),
    }
    if mode in UNTIMED_MODES:
        sample["latency_note"] = UNTIMED_MODES[mode]
    return sample


def answer_problem(entry: Entry, launch: Launch, port: int) -> str:
    """The conformance runner's check of one `GET /`: "" when it is a 302 to the template
    with k in 1..count, else what came back. Raises OSError when it cannot connect."""
    runner = load_runner(entry.repo)
    return runner.check_redirect(runner.Target(launch.host, port, launch.count, launch.location))


def startup_ms(entry: Entry, launch: Launch, timeout_s: float = 30.0) -> float:
    """Milliseconds from exec to the first correct 302, polling connect about every 1 ms.
    The server is stopped afterwards. Raises StartError when no correct answer comes."""
    server = start(entry, launch)
    try:
        deadline = time.monotonic() + timeout_s
        problem = "no answer"
        while time.monotonic() < deadline:
            if server.proc.poll() is not None:
                raise StartError(f"{entry.name} exited with status {server.proc.returncode}\n{server.output_tail()}")
            try:
                problem = answer_problem(entry, launch, launch.port)
            except OSError as e:
                problem = f"cannot connect: {e}"
            if not problem:
                return (time.perf_counter() - server.started_at) * 1000
            time.sleep(0.001)
        raise StartError(f"{entry.name}: no correct 302 within {timeout_s:g} s: {problem}\n{server.output_tail()}")
    finally:
        server.stop()


def measure_sample(entry: Entry, mode: str, rep: int, cfg: BenchConfig, scripts: dict[str, Path]) -> dict:
    """Starts the entry pinned with one thread, checks an answer, warms up, measures, stops.
    Raises StartError or WrkError."""
    launch = Launch(port=free_port(), threads=1, cpus=cfg.server_cpus)
    server = launch_ready(entry, launch)
    try:
        problem = answer_problem(entry, launch, server.port)
        if problem:
            raise StartError(f"{entry.name}: wrong answer before the run: {problem}")
        url = f"http://{launch.host}:{server.port}/"
        if cfg.warmup_s > 0:
            run_wrk(wrk_argv(url, mode, cfg.warmup_s, cfg, scripts[mode]), cfg.warmup_s)
        cpu_before = server.cpu_seconds()
        wrk, client_cpu, wall = run_wrk(wrk_argv(url, mode, cfg.duration_s, cfg, scripts[mode]), cfg.duration_s)
        server_cpu = server.cpu_seconds() - cpu_before
        peak_rss, pss = server.peak_rss_bytes(), server.pss_bytes()
        if server.proc.poll() is not None:
            raise StartError(f"{entry.name} exited during the run\n{server.output_tail()}")
    finally:
        server.stop()
    return sample_from(entry.name, mode, rep, wrk, client_cpu, wall, server_cpu, peak_rss, pss)


def measure_startup(entry: Entry, cfg: BenchConfig) -> list[float]:
    """Milliseconds from exec to the first correct 302, cfg.startup_runs times; raises StartError."""
    return [round(startup_ms(entry, Launch(port=free_port(), threads=1, cpus=cfg.server_cpus)), 2)
            for _ in range(cfg.startup_runs)]


@dataclass
class Plan:
    """The interleaved order of samples: for rep, for mode, for entry (A B C A B C …)."""
    entries: list[Entry]
    cfg: BenchConfig
    steps: list[tuple[int, str, Entry]] = field(init=False)

    def __post_init__(self):
        self.steps = [(rep, mode, e) for rep in range(self.cfg.repetitions)
                      for mode in self.cfg.modes for e in self.entries]

    def seconds(self) -> float:
        return len(self.steps) * self.cfg.seconds_per_sample()


def scripts_for(cfg: BenchConfig) -> dict[str, Path]:
    tmp = Path(tempfile.mkdtemp(prefix="arena-wrk-"))
    return {mode: wrk_script(mode, tmp) for mode in cfg.modes}
