"""Results: `results/<run-id>/run.json` (schema 1), its validation, and `results/latest`."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

SCHEMA_VERSION = 1
NUM = (int, float)
OPT_NUM = (int, float, type(None))
OPT_STR = (str, type(None))

# Every key a schema-1 document must hold, with its type(s). Nested dicts are checked
# recursively; a list of dicts is written as [ {...} ]. Extra keys are allowed (additions
# keep schema 1 readable); a missing key or a wrong type is an error.
SAMPLE = {
    "entry": str, "mode": str, "rep": int, "duration_s": NUM, "requests": int, "rps": NUM,
    "latency_us": {"p50": OPT_NUM, "p90": OPT_NUM, "p99": OPT_NUM, "max": OPT_NUM},  # null: not measured
    "errors": {"connect": int, "read": int, "write": int, "timeout": int},
    "non_3xx": int, "server_cpu_s": NUM, "cpu_us_per_req": OPT_NUM,
    "client_cpu_share": NUM, "server_cpu_share": NUM,
    "peak_rss_bytes": int, "pss_bytes": int, "client_bound": bool,
}
ENTRY = {
    "name": str, "language": str, "kind": str, "available": bool, "reason": OPT_STR,
    "version": OPT_STR, "artifact_bytes": (int, type(None)), "startup_ms": [NUM],
    "verify": (dict, type(None)),
}
RUN = {
    "schema": int, "run_id": str, "started": str, "finished": str,
    "machine": {"cpu_model": str, "cores": int, "kernel": str, "os": str,
                "memory_bytes": int, "tools": dict},
    "config": {"server_cpus": str, "client_cpus": str, "duration_s": NUM, "warmup_s": NUM,
               "repetitions": int, "modes": [str], "connections": int, "reference": str,
               "quick": bool},
    "entries": [ENTRY],
    "samples": [SAMPLE],
}


class SchemaError(ValueError):
    """str() is `PATH: reason`, PATH like `samples[3].latency_us.p99`."""


def _check(value, spec, path: str) -> None:
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            raise SchemaError(f"{path}: must be an object")
        for key, sub in spec.items():
            where = f"{path}.{key}" if path else key
            if key not in value:
                raise SchemaError(f"{where}: missing key")
            _check(value[key], sub, where)
    elif isinstance(spec, list):
        if not isinstance(value, list):
            raise SchemaError(f"{path}: must be a list")
        for i, item in enumerate(value):
            _check(item, spec[0], f"{path}[{i}]")
    else:
        types = spec if isinstance(spec, tuple) else (spec,)
        # bool is an int in Python: accept it only where bool is asked for.
        if isinstance(value, bool) and bool not in types:
            raise SchemaError(f"{path}: must be {'/'.join(t.__name__ for t in types)}, got bool")
        if not isinstance(value, types):
            raise SchemaError(f"{path}: must be {'/'.join(t.__name__ for t in types)}, got {type(value).__name__}")


def validate(run: dict) -> dict:
    """Returns run unchanged when it is a valid schema-1 document; raises SchemaError."""
    if not isinstance(run, dict):
        raise SchemaError(": must be an object")
    if run.get("schema") != SCHEMA_VERSION:
        raise SchemaError(f"schema: must be {SCHEMA_VERSION}, got {run.get('schema')!r}")
    _check(run, RUN, "")
    names = {e["name"] for e in run["entries"]}
    for i, s in enumerate(run["samples"]):
        if s["entry"] not in names:
            raise SchemaError(f"samples[{i}].entry: {s['entry']!r} is not in entries")
        if s["mode"] not in run["config"]["modes"]:
            raise SchemaError(f"samples[{i}].mode: {s['mode']!r} is not in config.modes")
    return run


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_dir(results: Path, now: dt.datetime) -> Path:
    """A fresh results/<run-id> directory; run-id is the UTC start time, suffixed if taken."""
    results.mkdir(parents=True, exist_ok=True)
    base = now.strftime("%Y%m%d-%H%M%S")
    for i in range(100):
        run_dir = results / (base if i == 0 else f"{base}-{i}")
        try:
            run_dir.mkdir()
            return run_dir
        except FileExistsError:
            continue
    raise FileExistsError(f"{results}/{base}: 100 runs with the same start second")


def write_run(run_dir: Path, run: dict) -> Path:
    """Validates and writes run.json atomically; returns its path."""
    validate(run)
    path = run_dir / "run.json"
    tmp = run_dir / "run.json.tmp"
    tmp.write_text(json.dumps(run, indent=1) + "\n")
    os.replace(tmp, path)
    return path


def read_run(path: Path) -> dict:
    """A run.json (or a run directory, or results/latest) read and validated."""
    if path.is_dir():
        path = path / "run.json"
    return validate(json.loads(path.read_text()))


def point_latest(results: Path, run_dir: Path) -> None:
    """results/latest -> <run-id> (relative symlink, replaced atomically)."""
    link = results / "latest"
    tmp = results / ".latest.tmp"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, link)
