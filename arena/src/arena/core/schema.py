"""Schema 1 of run.json: every key a document must hold and its type, checked before the
typed model (model.py) reads it. The history of the format is at the top of results.py.
Imports nothing of the arena."""

from __future__ import annotations

SCHEMA_VERSION = 1

NUM = (int, float)
OPT_NUM = (int, float, type(None))
OPT_STR = (str, type(None))

# Every key a schema-1 document must hold, with its type(s). Nested dicts are checked
# recursively; a list of dicts is written as [ {...} ]. Extra keys are allowed (additions
# keep schema 1 readable); a missing key or a wrong type is an error.
SAMPLE_SCHEMA = {
    "entry": str,
    "mode": str,
    "rep": int,
    "duration_s": NUM,
    "requests": int,
    "rps": NUM,
    "latency_us": {"p50": OPT_NUM, "p90": OPT_NUM, "p99": OPT_NUM, "max": OPT_NUM},  # null: not measured
    "errors": {"connect": int, "read": int, "write": int, "timeout": int},
    "non_3xx": int,
    "server_cpu_s": OPT_NUM,  # null: not known (a server measured by URL without --pid)
    "cpu_us_per_req": OPT_NUM,
    "client_cpu_share": NUM,
    "server_cpu_share": OPT_NUM,
    "peak_rss_bytes": (int, type(None)),
    "pss_bytes": (int, type(None)),
    "client_bound": bool,
}
ENTRY_SCHEMA = {
    "name": str,
    "language": str,
    "kind": str,
    "available": bool,
    "reason": OPT_STR,
    "version": OPT_STR,
    "artifact_bytes": (int, type(None)),
    "startup_ms": [NUM],
    "verify": (dict, type(None)),
}
RUN_SCHEMA = {
    "schema": int,
    "run_id": str,
    "started": str,
    "finished": str,
    "machine": {"cpu_model": str, "cores": int, "kernel": str, "os": str, "memory_bytes": int, "tools": dict},
    "config": {
        "server_cpus": str,
        "client_cpus": str,
        "duration_s": NUM,
        "warmup_s": NUM,
        "repetitions": int,
        "modes": [str],
        "connections": int,
        "reference": str,
        "quick": bool,
    },
    "entries": [ENTRY_SCHEMA],
    "samples": [SAMPLE_SCHEMA],
}
INSTRUCTIONS_SCHEMA = {"mode": str, "requests": int, "per_request": NUM, "ir_small": int, "ir_large": int}
VERIFY_SCHEMA = {"pass": int, "alt": int, "fail": int}
SAMPLE_MACHINE = ("steal_share", "load_1m", "steal_retry", "cgroup_cpu_s")  # optional, added to schema 1 later
SAMPLE_TRACKED = "tracked"  # optional bool, added to schema 1 later (sample.py)
PAIR_SCHEMA = {"mode": str, "entry": str, "entry_rep": int, "partner": str, "partner_rep": int}  # pairs[], added later
FAILURE_SCHEMA = {"entry": str, "mode": str, "rep": int, "error": str}  # + log (added later): str
VERIFY_OPTIONAL = {  # added to schema 1 later: checked when present
    "sections": dict,
    "failures": [{"section": str, "name": str, "detail": str}],
    "core_route": (bool, type(None)),
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
        names = "/".join(t.__name__ for t in types)
        # bool is an int in Python: accept it only where bool is asked for.
        if isinstance(value, bool) and bool not in types:
            raise SchemaError(f"{path}: must be {names}, got bool")
        if not isinstance(value, types):
            raise SchemaError(f"{path}: must be {names}, got {type(value).__name__}")


def validate(doc: object) -> dict:
    """Returns doc unchanged when it is a valid schema-1 run.json object; raises SchemaError."""
    if not isinstance(doc, dict):
        raise SchemaError(": must be an object")
    if doc.get("schema") != SCHEMA_VERSION:
        raise SchemaError(f"schema: must be {SCHEMA_VERSION}, got {doc.get('schema')!r}")
    _check(doc, RUN_SCHEMA, "")
    names = {e["name"] for e in doc["entries"]}
    for i, e in enumerate(doc["entries"]):
        if "runtime_bytes" in e:
            _check(e["runtime_bytes"], (int, type(None)), f"entries[{i}].runtime_bytes")
        if "instructions" in e:
            _check(e["instructions"], [INSTRUCTIONS_SCHEMA], f"entries[{i}].instructions")
        if "warmup_s" in e:
            _check(e["warmup_s"], int, f"entries[{i}].warmup_s")
        if "floor" in e:
            _check(e["floor"], str, f"entries[{i}].floor")
        if "url" in e:
            _check(e, {"url": str, "pid": (int, type(None)), "unknown": [str]}, f"entries[{i}]")
        if e["verify"] is not None:
            _check(e["verify"], VERIFY_SCHEMA, f"entries[{i}].verify")
            for key, spec in VERIFY_OPTIONAL.items():
                if key in e["verify"]:
                    _check(e["verify"][key], spec, f"entries[{i}].verify.{key}")
    for i, s in enumerate(doc["samples"]):
        for key in SAMPLE_MACHINE:
            if key in s:
                _check(s[key], OPT_NUM, f"samples[{i}].{key}")
        if s["entry"] not in names:
            raise SchemaError(f"samples[{i}].entry: {s['entry']!r} is not in entries")
        if s["mode"] not in doc["config"]["modes"]:
            raise SchemaError(f"samples[{i}].mode: {s['mode']!r} is not in config.modes")
        if SAMPLE_TRACKED in s:
            _check(s[SAMPLE_TRACKED], bool, f"samples[{i}].{SAMPLE_TRACKED}")
    if "pairs" in doc:
        _check(doc["pairs"], [PAIR_SCHEMA], "pairs")
        for i, pair in enumerate(doc["pairs"]):
            for key in ("entry", "partner"):
                if pair[key] not in names:
                    raise SchemaError(f"pairs[{i}].{key}: {pair[key]!r} is not in entries")
    for i, f in enumerate(doc.get("failures", [])):
        _check(f, FAILURE_SCHEMA, f"failures[{i}]")
        if "log" in f:
            _check(f["log"], OPT_STR, f"failures[{i}].log")
    if "unfinished" in doc:
        _check(doc["unfinished"], OPT_STR, "unfinished")
    if "mix" in doc["config"]:
        _check(doc["config"]["mix"], str, "config.mix")
    quota = doc["config"].get("cpu_quota")
    if quota is not None and (isinstance(quota, bool) or not isinstance(quota, NUM) or not 0 < quota <= 1):
        raise SchemaError(f"config.cpu_quota: must be a number in (0, 1] or null, got {quota!r}")
    return doc
