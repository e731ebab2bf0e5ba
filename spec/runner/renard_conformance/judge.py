"""Judging what a server sent against a case's expectation: pass, alt or fail, and why.

An expectation is {"responses": [...], "then": ...} (spec/vectors/README.md). 'alt' marks
what only SPEC §4's exact bytes forbid, or an answer a case allows for peers. Stdlib only.
"""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass, field

from . import reference, wire

DATE_TOLERANCE_S = 10.0  # Date may differ from this machine's clock by this much
REASONS = {
    200: "OK",
    302: "Found",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
    501: "Not Implemented",
    505: "HTTP Version Not Supported",
}
FIELDS_BEFORE_DATE = {302: ["Location", "Cache-Control"], 200: ["Content-Type", "Cache-Control"], 405: ["Allow"]}
IMF_FIXDATE = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} "
    r"\d\d:\d\d:\d\d GMT"
)


@dataclass
class Transcript:
    """What a server did on one connection; times are time.monotonic() seconds."""

    responses: list = field(default_factory=list)  # final responses, in order
    interim: list = field(default_factory=list)  # 1xx responses
    error: str = ""  # why the octets are not responses
    state: str = "unknown"  # "closed" | "open" | "unknown"
    state_detail: str = ""
    connected_at: float = 0.0
    sent_at: float = 0.0
    answered_at: float | None = None  # when the last response completed
    eof_at: float | None = None
    received: bytes = b""
    send_failed: str = ""


def expanded(responses: list) -> list[dict]:
    """The expected responses with each `times` unrolled."""
    out = []
    for response in responses:
        out += [response] * int(response.get("times", 1))
    return out


def location_regex(target) -> re.Pattern:
    """Matches a Location rendered from the target's template; group 1 is k."""
    parts = [re.escape(part) for part in target.location.split("{n}")]
    pattern = parts[0] + "([1-9][0-9]*)" + parts[1] + "".join(r"\1" + part for part in parts[2:])
    return re.compile(pattern)


def location_k(value: str, target) -> int | None:
    match = location_regex(target).fullmatch(value)
    if not match:
        return None
    k = int(match.group(1))
    return k if 1 <= k <= target.count else None


def _value_matches(want, value: str | None, target) -> bool:
    if want is None or value is None:
        return want is None and value is None
    if isinstance(want, dict):
        seed = reference.find_seed(want["seed_of_query"])
        return value == reference.render_location(target.location, reference.pick(seed, target.count))
    if want.startswith("re:"):
        return re.fullmatch(want[3:], value) is not None
    if want == "{location}":
        return location_k(value, target) is not None
    exact = re.fullmatch(r"\{location:(\d+)\}", want)
    if exact:
        return value == reference.render_location(target.location, int(exact.group(1)))
    return value == want


def _describe(want, target) -> str:
    if isinstance(want, dict):
        seed = reference.find_seed(want["seed_of_query"])
        return repr(reference.render_location(target.location, reference.pick(seed, target.count)))
    if want == "{location}":
        return f"the template with k in 1..{target.count}"
    return "absent" if want is None else repr(want)


def _worse(a: str, b: str) -> str:
    order = {"pass": 0, "alt": 1, "fail": 2}
    return a if order[a] >= order[b] else b


def _check_response(index: int, want: dict, got: wire.Response, target):
    """(verdict, notes) for one response; 'alt' marks what only SPEC §4's exact bytes forbid."""
    verdict, notes = "pass", []
    label = f"response {index + 1}"
    statuses = want["status"] if isinstance(want["status"], list) else [want["status"]]
    if got.status not in statuses:
        return "fail", [
            f"{label}: expected status {statuses[0]}"
            + (f" (or {statuses[1:]})" if len(statuses) > 1 else "")
            + f", got {got.status} {got.reason}"
        ]
    if got.status != statuses[0]:
        verdict = "alt"
        notes.append(f"{label}: status {got.status} (spec: {statuses[0]})")
    wanted_headers = want.get("headers", {})
    for name, wants in wanted_headers.items():
        wants = wants if isinstance(wants, list) else [wants]
        values = got.values(name)
        if len(values) > 1:
            return "fail", [f"{label}: {len(values)} {name} fields"]
        value = values[0] if values else None
        matched = next((i for i, w in enumerate(wants) if _value_matches(w, value, target)), None)
        if matched is None:
            return "fail", [
                f"{label}: {name}: expected {_describe(wants[0], target)}, "
                f"got {'absent' if value is None else repr(value)}"
            ]
        if matched > 0:
            verdict = "alt"
            notes.append(f"{label}: {name} {value!r} (spec: {_describe(wants[0], target)})")
    for name in want.get("absent", []):
        if got.values(name):
            return "fail", [f"{label}: has {name}: {got.values(name)[0]!r}, must not"]
    dates = got.values("date")
    if len(dates) != 1 or not IMF_FIXDATE.fullmatch(dates[0]):
        return "fail", [f"{label}: Date must be one IMF-fixdate, got {dates!r}"]
    skew = abs(date_seconds(dates[0]) - time.time())
    if skew > DATE_TOLERANCE_S:
        return "fail", [f"{label}: Date {dates[0]!r} is {skew:.0f} s off this machine's clock"]
    body = want.get("body", "").encode("latin-1")
    if got.body != body:
        verdict = "alt"
        notes.append(f"{label}: body {wire.escape(got.body, 60)!r} (spec: {wire.escape(body)!r})")
    strict = _strict_deviations(got, statuses[0], "connection" in wanted_headers)
    if strict:
        verdict = "alt"
        notes.append(f"{label}: not SPEC §4's exact form: " + "; ".join(strict))
    return verdict, notes


def _strict_deviations(got: wire.Response, spec_status: int, connection_expected: bool) -> list[str]:
    """How `got` differs from SPEC §4 byte by byte (field names, order, reason, version)."""
    out = []
    if got.version != "HTTP/1.1":
        out.append(f"version {got.version}")
    if got.status in REASONS and got.reason != REASONS[got.status]:
        out.append(f"reason {got.reason!r}")
    names = FIELDS_BEFORE_DATE.get(got.status, []) + ["Date", "Content-Length"]
    if connection_expected and got.values("connection"):
        names.append("Connection")
    if got.names() != names:
        out.append(f"fields {got.names()} (spec: {names})")
    lengths = got.values("content-length")
    expected_length = "3" if got.status == 200 else "0"
    if lengths and lengths != [expected_length] and got.status in REASONS:
        out.append(f"Content-Length {lengths[0]} (spec: {expected_length})")
    return out


MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def date_seconds(value: str) -> float:
    """Seconds since the epoch of an IMF-fixdate (parsed by hand: strptime follows the locale)."""
    _, day, month, year, clock, _ = value.split(" ")
    hour, minute, second = (int(part) for part in clock.split(":"))
    return calendar.timegm((int(year), MONTHS.index(month) + 1, int(day), hour, minute, second, 0, 0, 0))


def match(expectation: dict, transcript: Transcript, target) -> tuple[str, str]:
    """(verdict, detail) of a transcript against one expectation."""
    if transcript.error:
        return "fail", transcript.error
    wanted = expanded(expectation["responses"])
    got = transcript.responses
    if len(got) != len(wanted):
        shown = [f"{r.status}" for r in got[:20]] + (["..."] if len(got) > 20 else [])
        expected = [str(w["status"] if not isinstance(w["status"], list) else w["status"][0]) for w in wanted[:20]] + (
            ["..."] if len(wanted) > 20 else []
        )
        extra = f" ({transcript.send_failed})" if transcript.send_failed else ""
        return "fail", (
            f"expected {len(wanted)} response(s) [{' '.join(expected)}], got "
            f"{len(got)} [{' '.join(shown)}]{extra}; connection {transcript.state}"
        )
    verdict, notes = "pass", []
    for index, (want, response) in enumerate(zip(wanted, got, strict=True)):
        one, why = _check_response(index, want, response, target)
        if one == "fail":
            return "fail", "; ".join(why)
        verdict = _worse(verdict, one)
        notes += why
    if transcript.interim:
        verdict = _worse(verdict, "alt")
        notes.append(f"sent {len(transcript.interim)} interim response(s) ({transcript.interim[0].status})")
    then = expectation["then"]
    wanted_state = {"close": "closed", "open": "open", "any": None}[then]
    if wanted_state and transcript.state != "unknown" and transcript.state != wanted_state:
        reason = {
            "close": "expected the server to close the connection, it stayed open",
            "open": "expected the connection to stay open, the server closed it",
        }[then]
        detail = f"{reason} ({transcript.state_detail})" if transcript.state_detail else reason
        return "fail", "; ".join(notes + [detail])
    if then == "open" and transcript.state == "unknown":
        return "fail", "; ".join(notes + [transcript.state_detail or "connection state unknown"])
    return verdict, "; ".join(notes)
