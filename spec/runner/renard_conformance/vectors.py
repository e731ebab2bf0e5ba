"""The vectors of spec/vectors: loading, validating, and turning `send` into writes and pauses.

Format: spec/vectors/README.md. Stdlib only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

VECTORS_DIR = Path(__file__).resolve().parents[2] / "vectors"  # spec/vectors, beside spec/runner
HOST_FIELD = "Host: renard.test\r\n"
CASE_KEYS = {"name", "rule", "send", "responses", "then", "alternatives", "slow", "wait", "timing", "requires", "note"}
RESPONSE_KEYS = {"status", "headers", "absent", "body", "head", "times"}
THEN_VALUES = {"close", "open", "any"}
_ANY_TIMEOUTS = SimpleNamespace(header_timeout=10.0, idle_timeout=60.0)  # for validation only


@dataclass
class Case:
    """One HTTP vector (format: spec/vectors/README.md)."""

    name: str
    group: str
    rule: str
    send: list  # segments: str | {"hex"} | {"repeat","times"} | pauses
    expect: dict  # {"responses": [...], "then": ...}: the spec's answer
    alternatives: list = field(default_factory=list)  # answers allowed for peers
    slow: bool = False  # waits for a server timeout
    wait: object = None  # how long to wait for the answer (None: 3 s)
    timing: str | None = None  # "header-deadline" | "idle": when the answer must come
    requires: dict = field(default_factory=dict)  # target configuration the case needs


class VectorError(ValueError):
    """A vector file breaks the format; the message names the file and the case."""


def validate_case(raw: dict, where: str) -> None:
    """Raises VectorError unless `raw` is a well-formed case (spec/vectors/README.md)."""

    def fail(reason: str):
        raise VectorError(f"{where}: {reason}")

    if not isinstance(raw, dict):
        fail("a case must be an object")
    unknown = set(raw) - CASE_KEYS
    if unknown:
        fail(f"unknown keys {sorted(unknown)}")
    for key in ("name", "rule", "send", "responses", "then"):
        if key not in raw:
            fail(f"missing key {key!r}")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", raw["name"]):
        fail(f"name {raw['name']!r} is not [a-z0-9-]+")
    if not isinstance(raw["rule"], str) or "SPEC" not in raw["rule"]:
        fail("rule must cite a SPEC section")
    if not isinstance(raw["send"], list):
        fail("send must be a list of segments")
    for segment in raw["send"]:
        _segment_bytes_or_pause(segment, _ANY_TIMEOUTS, where)
    for expectation in [raw] + list(raw.get("alternatives", [])):
        _validate_expectation(expectation, fail)
    if raw.get("timing") not in (None, "header-deadline", "idle"):
        fail(f"timing {raw.get('timing')!r} is not header-deadline or idle")
    if raw.get("wait") not in (None, "header-timeout", "idle-timeout") and not isinstance(
        raw.get("wait"), (int, float)
    ):
        fail("wait must be milliseconds, header-timeout or idle-timeout")


def _validate_expectation(expectation: dict, fail) -> None:
    if expectation.get("then") not in THEN_VALUES:
        fail(f"then must be one of {sorted(THEN_VALUES)}")
    if not isinstance(expectation.get("responses"), list):
        fail("responses must be a list")
    for response in expectation["responses"]:
        unknown = set(response) - RESPONSE_KEYS
        if unknown:
            fail(f"unknown response keys {sorted(unknown)}")
        statuses = response.get("status")
        statuses = statuses if isinstance(statuses, list) else [statuses]
        if not statuses or not all(isinstance(s, int) and 100 <= s <= 599 for s in statuses):
            fail(f"status must be an int or a non-empty list of ints, got {response.get('status')!r}")
        for name in response.get("headers", {}):
            if name != name.lower():
                fail(f"header names are written in lower case ({name!r})")


def load_cases(vectors_dir: Path | None = None) -> list[Case]:
    """Every case of vectors_dir/http/*.json (file order), then one per distinct seeds.json query."""
    vectors_dir = Path(vectors_dir) if vectors_dir else VECTORS_DIR
    cases: list[Case] = []
    for path in sorted((vectors_dir / "http").glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("schema") != 1 or not isinstance(document.get("cases"), list):
            raise VectorError(f'{path}: expected {{"schema": 1, "cases": [...]}}')
        for index, raw in enumerate(document["cases"]):
            validate_case(raw, f"{path.name} case {index} ({raw.get('name', '?')})")
            cases.append(
                Case(
                    name=raw["name"],
                    group=path.stem,
                    rule=raw["rule"],
                    send=raw["send"],
                    expect={"responses": raw["responses"], "then": raw["then"]},
                    alternatives=raw.get("alternatives", []),
                    slow=raw.get("slow", False),
                    wait=raw.get("wait"),
                    timing=raw.get("timing"),
                    requires=raw.get("requires", {}),
                )
            )
    seeds_path = vectors_dir / "seeds.json"
    if seeds_path.exists():
        cases += seed_cases(json.loads(seeds_path.read_text(encoding="utf-8")))
    names = [case.name for case in cases]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise VectorError(f"duplicate case names: {duplicates}")
    return cases


def seed_cases(document: dict) -> list[Case]:
    """One GET case per distinct query of seeds.json, its k computed for the target's N."""
    cases, seen = [], set()
    for vector in document["vectors"]:
        if vector["query"] in seen:
            continue
        seen.add(vector["query"])
        seeded = vector["seed_hex"] is not None
        headers = (
            {"location": {"seed_of_query": vector["query"]}, "cache-control": "public, max-age=86400"}
            if seeded
            else {"location": "{location}", "cache-control": "no-store"}
        )
        cases.append(
            Case(
                name=f"seed-{vector['name']}",
                group="seeds",
                rule="SPEC §3, §3.1",
                send=[f"GET /?{vector['query']} HTTP/1.1\r\n{HOST_FIELD}\r\n"],
                expect={"responses": [{"status": 302, "headers": headers, "body": ""}], "then": "open"},
            )
        )
    return cases


def timeout_of(symbol: str, target, where: str) -> float:
    if symbol == "header-timeout":
        return target.header_timeout
    if symbol == "idle-timeout":
        return target.idle_timeout
    raise VectorError(f"{where}: unknown timeout {symbol!r}")


def _segment_bytes_or_pause(segment, target, where: str = "send"):
    """bytes for a data segment, float seconds for a pause (spec/vectors/README.md)."""
    if isinstance(segment, str):
        if any(ord(c) > 255 for c in segment):
            raise VectorError(f"{where}: a text segment holds code points 0-255 only")
        return segment.encode("latin-1")
    if not isinstance(segment, dict):
        raise VectorError(f"{where}: bad segment {segment!r}")
    if "hex" in segment:
        return bytes.fromhex(segment["hex"])
    if "repeat" in segment:
        return segment["repeat"].encode("latin-1") * int(segment["times"])
    if "pause_ms" in segment:
        if segment.get("read", True) is False:  # a pause without reading: a negative float
            return -segment["pause_ms"] / 1000.0
        return segment["pause_ms"] / 1000.0
    if "pause" in segment:
        seconds = timeout_of(segment["pause"], target, where)
        if "fraction" in segment:
            return seconds * float(segment["fraction"])
        return seconds + 0.5
    raise VectorError(f"{where}: bad segment {segment!r}")


def compile_send(segments: list, target) -> list:
    """Consecutive data segments joined into one write; pauses (float seconds) between,
    negative for a pause during which the client does not read."""
    steps: list = []
    for segment in segments:
        item = _segment_bytes_or_pause(segment, target)
        if isinstance(item, bytes) and steps and isinstance(steps[-1], bytes):
            steps[-1] += item
        else:
            steps.append(item)
    return steps
