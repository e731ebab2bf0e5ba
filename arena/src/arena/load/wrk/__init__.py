"""wrk, the load generator of `arena bench`, `arena sweep` and `arena stack`: its Lua scripts
beside this file (report.lua prints one machine-readable line, pipeline.lua sends 16 requests
at a time), its command line, and its run read back."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from ...core.model import Config
from ...core.modes import Mode
from .. import mix as mixes
from ..driver import LoadError, run_load
from ..mix import DEFAULT_MIX

WRK_MARK = "arena-json "  # prefix of the machine-readable line printed by wrk/report.lua


def wrk_script(m: Mode, tmp: Path, mix_name: str = DEFAULT_MIX) -> Path:
    """The Lua script for a mode: report.lua's done(), the request mix's request() (mix.py;
    none for the default mix), then the mode's own request() if any (which uses the mix's paths)."""
    parts = [resources.files("arena.load.wrk").joinpath("report.lua").read_text(), mixes.lua(mixes.mix(mix_name))]
    if m.script:
        parts.append(resources.files("arena.load.wrk").joinpath(m.script).read_text())
    path = tmp / f"{m.name}.lua"
    path.write_text("\n".join(parts))
    return path


def wrk_argv(
    url: str, m: Mode, seconds: int, cfg: Config, script: Path, connections: int | None = None, extra: tuple = ()
) -> list[str]:
    """wrk pinned to the client's cores, one thread; connections: cfg.connections unless given;
    extra: more of wrk's options (the sweep's --timeout)."""
    return [
        "taskset",
        "-c",
        cfg.client_cpus,
        "wrk",
        "-t1",
        f"-c{connections or cfg.connections}",
        f"-d{seconds}s",
        "-s",
        str(script),
        *m.wrk_args,
        *extra,
        url,
    ]


def run_wrk(argv: list[str], seconds: int) -> tuple[dict, float, float]:
    """Runs wrk to its end; returns (its JSON line, its CPU seconds, wall seconds).

    CPU: process.run_timed's, which is wrk alone (the server stays alive until after this
    returns). Bounded by seconds + 30 s; raises LoadError."""
    figures, wrk = run_load(argv, seconds, "wrk", read_wrk)
    return figures, wrk.client_cpu_s, wrk.wall_s


def read_wrk(wrk) -> dict:
    """The JSON line report.lua printed; LoadError when there is not exactly one."""
    lines = [line for line in wrk.stdout.splitlines() if line.startswith(WRK_MARK)]
    if len(lines) != 1:
        tail = (wrk.stdout + wrk.stderr).strip().splitlines()[-3:]
        raise LoadError("wrk printed no JSON line: " + " | ".join(tail))
    return json.loads(lines[0][len(WRK_MARK) :])


def fold_errors(errors: dict) -> dict:
    """wrk's errors as h2load's figures count them: {"socket": connect + read + write +
    timeout, "status": answers not of the expected class}."""
    return {"socket": sum(errors[k] for k in ("connect", "read", "write", "timeout")), "status": errors["status"]}


def wrk_rps(wrk: dict) -> float:
    """Requests/s of a wrk JSON line."""
    return round(wrk["requests"] / (wrk["duration_us"] / 1e6), 1) if wrk["duration_us"] else 0.0
