"""renard conformance runner: replays spec/vectors against a running server (stdlib only).

Library: load_cases, replay, statistical_checks, check_all (see spec/runner/README.md).
CLI: renard-conformance --addr 127.0.0.1:8080 [--count 21] [--location T]
     [--header-timeout 10] [--idle-timeout 60] [--quick] [--skip-slow] [--json] [--only RE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

from . import reference, stats, wire
from .judge import IMF_FIXDATE, Transcript, date_seconds, expanded, location_k, match
from .vectors import HOST_FIELD, Case, compile_send, load_cases, timeout_of

DEFAULT_COUNT = 21
DEFAULT_LOCATION = "https://avatar.example.org/Renard-{n}.png"
# After the expected responses of a `then: open` case, two pipelined GET /healthz, the second
# asking to close (RFC 9112 §9.6): their answers are the last two responses before the EOF.
# To a target that does not pipeline, the second is sent once the first is answered.
PROBE_OPEN = b"GET /healthz HTTP/1.1\r\nHost: renard.test\r\n\r\n"
PROBE_CLOSE = b"GET /healthz HTTP/1.1\r\nHost: renard.test\r\nConnection: close\r\n\r\n"
PROBES = PROBE_OPEN + PROBE_CLOSE
RESPONSE_WAIT_S = 3.0  # default wait for the expected responses after the last send
CLOSE_WAIT_S = 2.5  # wait for EOF when a close is expected (SPEC §7.4 lingers <= 2 s)
SEND_TIMEOUT_S = 10.0  # a server that stops reading for this long fails the case
DEADLINE_SLACK_S = 1.5  # a timeout may fire this much late (timer granularity, load)
FAST_WORKERS = 4  # fast cases replayed concurrently by check_all


@dataclass
class Target:
    """A running server and the configuration it was started with."""

    host: str
    port: int
    count: int = DEFAULT_COUNT
    location: str = DEFAULT_LOCATION
    header_timeout: float = 10.0  # seconds; the server's --header-timeout
    idle_timeout: float = 60.0  # seconds; the server's --idle-timeout
    # Whether the server answers requests pipelined in one write. False (a peer whose library
    # drops the requests read with the first, as cpp-httplib does): the statistical checks send
    # one request per write and wait for its answer, and so do a `then: open` case's two
    # probes; a vector's own requests are sent as it writes them (one that pipelines fails).
    pipelined: bool = True


@dataclass
class Outcome:
    name: str  # the case's name, e.g. "get-root-redirects"
    verdict: str  # "pass" | "alt" (an answer the case allows for peers) | "fail"
    detail: str  # what was expected and what came back; "" on a pass (but a skip or a retest, which says why)


# ---------------------------------------------------------------------------------------
# Replaying: a transcript of what the server did


def _wait_seconds(case: Case, target: Target) -> float:
    if case.wait is None:
        return RESPONSE_WAIT_S
    if isinstance(case.wait, str):
        return timeout_of(case.wait, target, case.name) + DEADLINE_SLACK_S + 0.5
    return case.wait / 1000.0


def _read_responses(
    conn: wire.Connection, transcript: Transcript, heads: list[bool], offset: int, wanted: int, deadline: float
) -> int:
    """Parses responses from conn.received[offset:] until `wanted` finals, EOF or the deadline.
    Returns the new offset."""
    while len(transcript.responses) < wanted and not transcript.error:
        index = len(transcript.responses)
        no_body = heads[index] if index < len(heads) else False
        try:
            parsed = wire.parse_response(bytes(conn.received[offset:]), no_body, conn.closed)
        except wire.MalformedResponse as error:
            transcript.error = f"malformed response: {error}"
            break
        if parsed is wire.NEED_MORE:
            remaining = deadline - time.monotonic()
            if conn.closed or remaining <= 0:
                break
            conn.pump(remaining)
            continue
        response, used = parsed
        offset += used
        if 100 <= response.status < 200:
            transcript.interim.append(response)
        else:
            transcript.responses.append(response)
            transcript.answered_at = time.monotonic()
    return offset


def _run(case: Case, target: Target) -> Transcript:
    transcript = Transcript()
    steps = compile_send(case.send, target)
    conn = wire.Connection.open(target.host, target.port)
    try:
        transcript.connected_at = time.monotonic()
        for step in steps:
            if isinstance(step, bytes):
                if not conn.send(step, time.monotonic() + SEND_TIMEOUT_S):
                    break
            elif step < 0:  # the client does not read meanwhile (what arrives stays queued)
                time.sleep(-step)
            else:
                end = time.monotonic() + step
                while time.monotonic() < end:
                    conn.pump(end - time.monotonic())
        transcript.sent_at = time.monotonic()
        transcript.send_failed = conn.send_failed
        expected = expanded(case.expect["responses"])
        heads = [bool(r.get("head")) for r in expected]
        deadline = transcript.sent_at + _wait_seconds(case, target)
        offset = _read_responses(conn, transcript, heads, 0, len(expected), deadline)
        if len(transcript.responses) < len(expected) and not conn.closed:
            transcript.state_detail = "no further response before the wait ended"
        elif not transcript.error:
            _settle_state(case, conn, transcript, heads, offset, deadline, target.pipelined)
        transcript.eof_at = conn.eof_at
        transcript.received = bytes(conn.received)
    finally:
        conn.close()
    return transcript


def _settle_state(
    case: Case,
    conn: wire.Connection,
    transcript: Transcript,
    heads: list[bool],
    offset: int,
    deadline: float,
    pipelined: bool = True,
) -> None:
    """After the expected responses: did the server close, keep the connection, or say more?"""
    then = case.expect["then"]
    if then == "close" or (then == "any" and conn.closed):
        conn.wait_eof(max(deadline, time.monotonic() + CLOSE_WAIT_S))
        _read_extra(conn, transcript, heads, offset)
        transcript.state = "closed" if conn.closed else "open"
        if not conn.closed:
            transcript.state_detail = f"still open {CLOSE_WAIT_S:.0f} s after the responses"
        return
    if then == "any":
        return
    # then == "open": the connection must still serve, and nothing more than the expected
    # responses may come. Responses come in request order (RFC 9112 §9.3.2) and the second
    # probe asks the server to close after it, so any response before the probes' answers
    # answers something else (an extra one, however late it comes), and the EOF says that
    # nothing more will come: no fixed wait. The probes' answers are recognised by their
    # form: the same status twice, the first keeping the connection open (a server without
    # /healthz may answer 404: any answer proves the connection open).
    conn.pump(0)
    offset = _read_responses(
        conn, transcript, heads, offset, len(transcript.responses) + 100, time.monotonic()
    )  # extra responses already here
    if conn.closed or transcript.error:
        transcript.state = "closed" if conn.closed else "unknown"
        return
    before = len(transcript.responses)
    if pipelined:
        conn.send(PROBES, time.monotonic() + SEND_TIMEOUT_S)
    else:  # one probe per write: the second once the first is answered (or the wait ends)
        conn.send(PROBE_OPEN, time.monotonic() + SEND_TIMEOUT_S)
        offset = _read_responses(conn, transcript, heads, offset, before + 1, time.monotonic() + RESPONSE_WAIT_S)
        conn.send(PROBE_CLOSE, time.monotonic() + SEND_TIMEOUT_S)
    _read_responses(conn, transcript, heads, offset, before + 100, time.monotonic() + RESPONSE_WAIT_S)
    after = transcript.responses[before:]
    if len(after) >= 2 and not _announces_close(after[-2]) and after[-2].status == after[-1].status:
        status = after[-1].status
        del transcript.responses[-2:]  # the probes' answers; what came before them stays, as extra
        transcript.state = "open"
        if status != 200:
            transcript.state_detail = f"the probes GET /healthz were answered {status}"
    else:
        transcript.state = "closed" if conn.closed else "unknown"
        answers = f"{len(after)} response(s)" if after else "no response"
        transcript.state_detail = (
            f"{answers}, then closed, instead of the answers to the probes GET /healthz"
            if conn.closed
            else f"{answers} to the probes GET /healthz within {RESPONSE_WAIT_S:g} s"
        )


def _read_extra(conn, transcript: Transcript, heads: list[bool], offset: int) -> None:
    if offset < len(conn.received):
        _read_responses(conn, transcript, heads, offset, len(transcript.responses) + 100, time.monotonic())
        if transcript.error:
            transcript.error = f"octets after the expected responses: {transcript.error}"


def _timing_problem(case: Case, transcript: Transcript, target: Target) -> str:
    """ "" if the answer came when the case's timing rule says it must."""
    if case.timing == "header-deadline":
        done = transcript.eof_at or transcript.answered_at
        if done is None:
            return "nothing happened before the wait ended"
        elapsed = done - transcript.connected_at
        if elapsed > target.header_timeout + DEADLINE_SLACK_S:
            return (
                f"answered {elapsed:.1f} s after connect; the header deadline is "
                f"{target.header_timeout:g} s and is not extended by more octets"
            )
        if elapsed < 0.5 * target.header_timeout:
            return f"closed {elapsed:.1f} s after connect, before the header deadline"
    if case.timing == "idle":
        if transcript.eof_at is None or transcript.answered_at is None:
            return "no close after the response"
        elapsed = transcript.eof_at - transcript.answered_at
        if elapsed > target.idle_timeout + DEADLINE_SLACK_S:
            return f"idle connection closed after {elapsed:.1f} s (idle timeout {target.idle_timeout:g} s)"
        if elapsed < 0.5 * target.idle_timeout:
            return f"idle connection closed after {elapsed:.1f} s, before the idle timeout"
    return ""


def _unmet_requirement(case: Case, target: Target) -> str:
    requires = case.requires
    if "count" in requires and target.count != requires["count"]:
        return f"needs --count {requires['count']}"
    if "location" in requires and target.location != requires["location"]:
        return "needs the default --location"
    if requires.get("idle_over_header") and target.idle_timeout <= target.header_timeout:
        return "needs an idle timeout longer than the header timeout"
    return ""


def replay(case: Case, target: Target) -> Outcome:
    """Replays one HTTP vector on a fresh connection and judges what came back."""
    unmet = _unmet_requirement(case, target)
    if unmet:
        return Outcome(case.name, "pass", f"skipped: {unmet}")
    try:
        transcript = _run(case, target)
    except OSError as error:
        return Outcome(case.name, "fail", f"cannot talk to {target.host}:{target.port}: {error}")
    except Exception as error:  # a runner bug must not stop the other cases
        return Outcome(case.name, "fail", f"runner error: {type(error).__name__}: {error}")
    verdict, detail = match(case.expect, transcript, target)
    if verdict != "fail":
        problem = _timing_problem(case, transcript, target)
        if problem:
            verdict, detail = "fail", problem
    if verdict == "fail":
        for alternative in case.alternatives:
            alt_verdict, alt_detail = match(alternative, transcript, target)
            if alt_verdict != "fail":
                why = alternative.get("why", "an answer allowed for peers")
                return Outcome(case.name, "alt", f"{why}; spec answer not matched: {detail}")
        return Outcome(case.name, "fail", f"{detail}; received: {wire.escape(transcript.received)}")
    return Outcome(case.name, verdict, detail)


# ---------------------------------------------------------------------------------------
# Statistical checks


class CheckError(Exception):
    """A statistical check could not collect its answers; the message says why."""


def _announces_close(response: wire.Response) -> bool:
    return any("close" in value.lower() for value in response.values("connection"))


def _fetch(target: Target, request: bytes, count: int, conn: wire.Connection | None = None):
    """Sends `request` `count` times pipelined; returns the responses. Fewer than `count`
    only when the last one announced `Connection: close` (a server may cap the requests
    per connection, as nginx's keepalive_requests does); otherwise CheckError."""
    own = conn is None
    conn = conn or wire.Connection.open(target.host, target.port)
    try:
        transcript = Transcript()
        if not conn.send(request * count, time.monotonic() + SEND_TIMEOUT_S):
            raise CheckError(conn.send_failed)
        _read_responses(
            conn,
            transcript,
            [request.startswith(b"HEAD")] * count,
            0,
            count,
            time.monotonic() + RESPONSE_WAIT_S + count / 2000,
        )
        cut_short = (
            len(transcript.responses) < count and transcript.responses and _announces_close(transcript.responses[-1])
        )
        if transcript.error or (len(transcript.responses) != count and not cut_short):
            raise CheckError(transcript.error or f"got {len(transcript.responses)} of {count} responses")
        del conn.received[: sum(len(r.raw) for r in transcript.responses + transcript.interim)]
        return transcript.responses
    finally:
        if own:
            conn.close()


def redirect_k(response: wire.Response, target: Target) -> int | None:
    """k when the response is a 302 whose one Location is the target's template with one
    k in 1..count; else None."""
    values = response.values("location")
    if response.status != 302 or len(values) != 1:
        return None
    return location_k(values[0], target)


def check_redirect(target: Target) -> str:
    """One unseeded `GET /` on a new connection: "" when the answer is a redirect to the
    template (redirect_k), else what came back. Raises OSError when it cannot connect."""
    request = f"GET / HTTP/1.1\r\n{HOST_FIELD}Connection: close\r\n\r\n".encode()  # HOST_FIELD ends its line
    try:
        (response,) = _fetch(target, request, 1)
    except CheckError as error:
        return str(error)
    if redirect_k(response, target) is None:
        return f"expected a 302 to the template with k in 1..{target.count}, got {wire.escape(response.raw)}"
    return ""


def _per_write(target: Target, batch: int) -> int:
    """Requests sent in one write: `batch`, or 1 for a target that does not pipeline."""
    return batch if target.pipelined else 1


def draw_unseeded(target: Target, total: int, connections: int = 3, batch: int = 100) -> list[int]:
    """k of `total` unseeded answers, pipelined `batch` at a time (one at a time to a target
    that does not pipeline) over keep-alive connections; a connection the server closes with
    `Connection: close` is replaced."""
    request = f"GET / HTTP/1.1\r\n{HOST_FIELD}\r\n".encode()
    batch = _per_write(target, batch)
    ks: list[int] = []
    conns = [wire.Connection.open(target.host, target.port) for _ in range(connections)]
    try:
        while len(ks) < total:
            for index, conn in enumerate(conns):
                size = min(batch, total - len(ks))
                if size <= 0:
                    break
                responses = _fetch(target, request, size, conn)
                if _announces_close(responses[-1]):
                    conn.close()
                    conns[index] = wire.Connection.open(target.host, target.port)
                for response in responses:
                    k = redirect_k(response, target)
                    if k is None:
                        raise CheckError(f"not a redirect to the template: {wire.escape(response.raw)}")
                    ks.append(k)
    finally:
        for conn in conns:
            conn.close()
    return ks


# A chi-square p at or under this makes a sample suspect: one sample in 1 000 from a uniform
# server. A suspect sample is followed by a fresh one, and the check fails only when both are
# suspect (judge_uniform): one run in a million for a uniform server. `make test` runs this
# check at least a dozen times (each renard's suite, the sanitizer builds', the arena's checks),
# so one sample alone failed more than one `make test` in 100 with no defect behind it.
UNIFORM_ALPHA = 0.001


def _uniform_outcome(ks: list[int], target: Target) -> Outcome:
    """One sample's chi-square test: fail when its p is at or under UNIFORM_ALPHA."""
    name = "uniform-k"
    if target.count == 1:
        ok = all(k == 1 for k in ks)
        return Outcome(name, "pass" if ok else "fail", "" if ok else "N = 1 but some k != 1")
    bins = min(target.count, 1000)
    observed = [0] * bins
    for k in ks:
        observed[(k - 1) * bins // target.count] += 1
    widths = [0] * bins
    for b in range(bins):  # how many k fall in bin b: k-1 in [ceil(b*N/B), ceil((b+1)*N/B))
        widths[b] = -(-(b + 1) * target.count // bins) - -(-b * target.count // bins)
    expected = [len(ks) * w / target.count for w in widths]
    statistic, degrees, p = stats.chi_square(observed, expected)
    detail = f"chi-square {statistic:.1f}, {degrees} df, p = {p:.4g} over {len(ks)} answers"
    if p > UNIFORM_ALPHA:
        return Outcome(name, "pass", "")
    return Outcome(name, "fail", f"{detail} (need p > {UNIFORM_ALPHA:g})")


def judge_uniform(draw: Callable[[], list[int]], target: Target) -> tuple[Outcome, list[int]]:
    """uniform-k over `draw()`, and over a second `draw()` when the first sample is suspect:
    fails only when both are, with both samples' figures (a biased server's samples are all
    suspect; a uniform server's second one almost never is). Returns the outcome and every k
    drawn."""
    ks = draw()
    first = _uniform_outcome(ks, target)
    if first.verdict == "pass" or target.count == 1:
        return first, ks
    again = draw()
    second = _uniform_outcome(again, target)
    if second.verdict == "pass":
        return Outcome(first.name, "pass", f"first sample suspect ({first.detail}); a fresh one passed"), ks + again
    return Outcome(first.name, "fail", f"two samples suspect: {first.detail}; then {second.detail}"), ks + again


def _reachable_outcome(ks: list[int], target: Target) -> Outcome:
    name = "every-k-reachable"
    if target.count > 1000:
        return Outcome(name, "pass", f"skipped: count {target.count} > 1000")
    missing = sorted(set(range(1, target.count + 1)) - set(ks))
    if missing:
        return Outcome(name, "fail", f"k never drawn in {len(ks)} answers: {missing[:20]}")
    return Outcome(name, "pass", "")


def _date_outcome(target: Target) -> Outcome:
    name = "date-changes-every-second"
    request = f"HEAD / HTTP/1.1\r\n{HOST_FIELD}\r\n".encode()
    try:
        first = _fetch(target, request, 1)[0].values("date")
        time.sleep(1.0 - (time.time() % 1.0) + 1.1)  # past the next second boundary, and more
        second = _fetch(target, request, 1)[0].values("date")
    except (OSError, CheckError) as error:
        return Outcome(name, "fail", str(error))
    if not first or not second or not IMF_FIXDATE.fullmatch(first[0]) or not IMF_FIXDATE.fullmatch(second[0]):
        return Outcome(name, "fail", f"Date not an IMF-fixdate: {first!r}, {second!r}")
    step = date_seconds(second[0]) - date_seconds(first[0])
    if not 1 <= step <= 4:
        return Outcome(name, "fail", f"Date went from {first[0]!r} to {second[0]!r} over ~2 s")
    return Outcome(name, "pass", "")


def _seed_stable_outcome(target: Target) -> Outcome:
    name = "seeded-stable-across-connections"
    query = "seed=renard-stability-%C3%A9"
    want = reference.render_location(target.location, reference.pick(reference.find_seed(query), target.count))
    request = f"GET /?{query} HTTP/1.1\r\n{HOST_FIELD}\r\n".encode()
    seen = []
    per_write = _per_write(target, 3)
    try:
        for _ in range(3):  # three connections, three answers on each
            conn = wire.Connection.open(target.host, target.port)
            try:
                answers = [r for _ in range(3 // per_write) for r in _fetch(target, request, per_write, conn)]
            finally:
                conn.close()
            seen += [r.values("location")[0] if r.values("location") else None for r in answers]
    except (OSError, CheckError) as error:
        return Outcome(name, "fail", str(error))
    if any(value != want for value in seen):
        return Outcome(name, "fail", f"expected {want!r} on 3 connections, got {sorted(set(map(str, seen)))}")
    return Outcome(name, "pass", "")


STATISTICAL_CHECK_NAMES = [
    "uniform-k",
    "every-k-reachable",
    "date-changes-every-second",
    "seeded-stable-across-connections",
]


def statistical_checks(target: Target, quick: bool = False) -> list[Outcome]:
    """Uniform k (chi-square), every k reachable, Date ticks, seeded answers stable."""
    total = 21000 if quick else 63000
    try:
        uniform, ks = judge_uniform(lambda: draw_unseeded(target, total), target)
        sampled = [uniform, _reachable_outcome(ks, target)]
    except (OSError, CheckError) as error:
        sampled = [Outcome(name, "fail", f"drawing {total} answers: {error}") for name in STATISTICAL_CHECK_NAMES[:2]]
    return sampled + [_date_outcome(target), _seed_stable_outcome(target)]


def check_all(target: Target, quick: bool = False, skip_slow: bool = False, only: str | None = None) -> list[Outcome]:
    """Every vector, then the statistical checks. Each case has its own connection: fast cases
    run FAST_WORKERS at a time, slow ones (or none, with skip_slow) all at once beside them."""
    cases = [case for case in load_cases() if not (skip_slow and case.slow)]
    if only:
        cases = [case for case in cases if re.search(only, case.name)]
    results: dict[str, Outcome] = {}
    slow_threads = []
    for case in cases:
        if case.slow:
            thread = threading.Thread(target=lambda c=case: results.__setitem__(c.name, replay(c, target)), daemon=True)
            thread.start()
            slow_threads.append(thread)
    fast = [case for case in cases if not case.slow]
    with ThreadPoolExecutor(max_workers=FAST_WORKERS) as pool:
        for case, outcome in zip(fast, pool.map(lambda c: replay(c, target), fast), strict=True):
            results[case.name] = outcome
    for thread in slow_threads:
        thread.join()
    outcomes = [results[case.name] for case in cases]
    if only is None or any(re.search(only, name) for name in STATISTICAL_CHECK_NAMES):
        outcomes += [o for o in statistical_checks(target, quick) if only is None or re.search(only, o.name)]
    return outcomes


# ---------------------------------------------------------------------------------------
# Command line


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):
        message = re.sub(r"^argument (\S+): \1: ", r"\1: ", message)  # name the flag once
        sys.stderr.write(f"conformance: {message}\n")
        sys.exit(2)


def _positive_seconds(flag: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value <= 86400:
            raise argparse.ArgumentTypeError(f"{flag}: must be seconds, > 0 and <= 86400 (got {text!r})")
        return value

    return parse


def _count(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,7}", text) or not 1 <= int(text) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"--count: must be an integer from 1 to 1000000 (got {text!r})")
    return int(text)


def _address(text: str) -> tuple[str, int]:
    match = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([^:\[\]]+):(\d{1,5})", text)
    if not match or not 1 <= int(match.group(2) or match.group(4)) <= 65535:
        raise argparse.ArgumentTypeError(f"--addr: must be HOST:PORT or [ADDR]:PORT (got {text!r})")
    return (match.group(1) or match.group(3)), int(match.group(2) or match.group(4))


def _location(text: str) -> str:
    if "{n}" not in text or not re.fullmatch(r"[\x21-\x7e]{1,2048}", text):
        raise argparse.ArgumentTypeError(f"--location: must be 1-2048 visible ASCII octets with {{n}} (got {text!r})")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = _OneLineParser(description="Replay renard's spec vectors against a running server.")
    parser.add_argument("--addr", required=True, type=_address, help="HOST:PORT of the server")
    parser.add_argument("--count", type=_count, default=DEFAULT_COUNT)
    parser.add_argument("--location", type=_location, default=DEFAULT_LOCATION)
    parser.add_argument("--header-timeout", type=_positive_seconds("--header-timeout"), default=10.0)
    parser.add_argument("--idle-timeout", type=_positive_seconds("--idle-timeout"), default=60.0)
    parser.add_argument("--quick", action="store_true", help="fewer samples in the statistical checks")
    parser.add_argument("--skip-slow", action="store_true", help="skip cases that wait for a timeout")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead")
    parser.add_argument("--only", metavar="REGEX", help="only cases whose name matches")
    parser.add_argument(
        "--no-pipelining",
        action="store_true",
        help="the server answers one request per write: draws and probes send one at a time",
    )
    args = parser.parse_args(argv)
    if args.only:
        try:
            re.compile(args.only)
        except re.error as error:
            parser.error(f"--only: not a regular expression ({error})")
    host, port = args.addr
    target = Target(
        host, port, args.count, args.location, args.header_timeout, args.idle_timeout, not args.no_pipelining
    )
    outcomes = check_all(target, quick=args.quick, skip_slow=args.skip_slow, only=args.only)
    tally = {verdict: sum(o.verdict == verdict for o in outcomes) for verdict in ("pass", "alt", "fail")}
    if args.json:
        print(
            json.dumps(
                {"schema": 1, "target": asdict(target), "outcomes": [asdict(o) for o in outcomes], **tally}, indent=1
            )
        )
    else:
        for outcome in outcomes:
            if outcome.verdict == "pass":
                print(f"PASS {outcome.name}" + (f" ({outcome.detail})" if outcome.detail else ""))
            else:
                print(f"{outcome.verdict.upper()} {outcome.name}: {outcome.detail}")
        if tally["alt"]:
            print(f"({tally['alt']} of the passed are alt: answers allowed for peers, not the spec's)")
        print(f"{tally['pass'] + tally['alt']} passed, {tally['fail']} failed")
    return 1 if tally["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
