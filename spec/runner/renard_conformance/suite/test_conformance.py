"""Every vector, every statistical check, the CLI rules of SPEC §1 and restart stability,
against the server of --renard-cmd or --renard-addr (skipped without one)."""

from __future__ import annotations

import os
import subprocess

import pytest

from .. import conformance, reference, wire
from ..pytest_plugin import server_process, start_ready, target_of

CASES = conformance.load_cases()
CLI_TIMEOUT_S = 5.0


def judge(outcome: conformance.Outcome, allow_alt: bool) -> None:
    """Turns an Outcome into a pytest result: skip, pass, or fail with the detail."""
    if outcome.verdict == "pass" and outcome.detail.startswith("skipped"):
        pytest.skip(outcome.detail)
    if outcome.verdict == "fail" or (outcome.verdict == "alt" and not allow_alt):
        pytest.fail(f"{outcome.verdict}: {outcome.detail}", pytrace=False)


@pytest.mark.server
@pytest.mark.scenario("vectors")
@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow else []) for c in CASES]
)
def test_vector(case, target, allow_alt):
    judge(conformance.replay(case, target), allow_alt)


@pytest.fixture(scope="session")
def statistical_outcomes(target) -> dict[str, conformance.Outcome]:
    return {o.name: o for o in conformance.statistical_checks(target, quick=True)}


@pytest.mark.server
@pytest.mark.scenario("statistics")
@pytest.mark.parametrize("name", conformance.STATISTICAL_CHECK_NAMES)
def test_statistical(name, statistical_outcomes, allow_alt):
    judge(statistical_outcomes[name], allow_alt)


# --- SPEC §1: the command line (only with --renard-cmd) -----------------------------------


@pytest.fixture(scope="session")
def executable(renard_server) -> list[str]:
    """The words of --renard-cmd before its first --flag (e.g. ["java", "-jar", "x.jar"])."""
    if renard_server is None:
        pytest.skip("the command-line checks need --renard-cmd")
    words = renard_server.argv
    first_flag = next((i for i, w in enumerate(words) if i > 0 and w.startswith("--")), len(words))
    return words[:first_flag]


def run_cli(executable: list[str], *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RENARD_")}
    environment.update(env or {})
    try:
        return subprocess.run(
            [*executable, *args],
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            env=environment,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"{' '.join(executable + list(args))}: still running after {CLI_TIMEOUT_S:.0f} s (it should have exited)",
            pytrace=False,
        )


BAD_CLI_INPUT = [  # (test id, arguments, environment, what the one stderr line must name)
    ("count-zero", ["--count", "0"], {}, "--count"),
    ("count-too-large", ["--count", "1000001"], {}, "--count"),
    ("count-not-integer-equals-form", ["--count=abc"], {}, "--count"),
    ("location-without-n", ["--location", "https://x.test/no-placeholder.png"], {}, "--location"),
    ("location-with-space", ["--location", "https://x.test/{n} .png"], {}, "--location"),
    ("threads-zero", ["--threads", "0"], {}, "--threads"),
    ("header-timeout-zero", ["--header-timeout", "0"], {}, "--header-timeout"),
    ("idle-timeout-negative", ["--idle-timeout", "-1"], {}, "--idle-timeout"),
    ("max-connections-zero", ["--max-connections", "0"], {}, "--max-connections"),
    ("drain-timeout-negative", ["--drain-timeout", "-1"], {}, "--drain-timeout"),
    ("drain-timeout-too-large", ["--drain-timeout", "86401"], {}, "--drain-timeout"),
    ("drain-timeout-not-a-number-equals-form", ["--drain-timeout=soon"], {}, "--drain-timeout"),
    ("listen-hostname-not-numeric", ["--listen", "localhost:8080"], {}, "--listen"),
    ("listen-port-too-large", ["--listen", "127.0.0.1:65536"], {}, "--listen"),
    ("missing-value", ["--count"], {}, "--count"),
    ("unknown-flag", ["--no-such-flag"], {}, "--no-such-flag"),
    ("positional-argument", ["positional"], {}, "positional"),
    ("bad-variable-named", [], {"RENARD_COUNT": "0"}, "RENARD_COUNT"),
    ("bad-drain-variable-named", [], {"RENARD_DRAIN_TIMEOUT": "-0.5"}, "RENARD_DRAIN_TIMEOUT"),
]


@pytest.mark.scenario("command line")
@pytest.mark.parametrize("args, env, names", [pytest.param(*row[1:], id=row[0]) for row in BAD_CLI_INPUT])
def test_cli_bad_input_one_line_exit_2(executable, args, env, names):
    result = run_cli(executable, "--listen", "127.0.0.1:0", *args, env=env)
    lines = result.stderr.splitlines()
    assert result.returncode == 2, f"exit {result.returncode}, stderr {result.stderr!r}"
    assert len(lines) == 1 and lines[0].startswith("renard: ") and names in lines[0], result.stderr


@pytest.mark.scenario("command line")
def test_cli_version_prints_renard_version(executable):
    result = run_cli(executable, "--version")
    assert result.returncode == 0
    assert (result.stdout + result.stderr).startswith("renard "), result.stdout + result.stderr


@pytest.mark.scenario("command line")
def test_cli_help_exits_0_on_stdout(executable):
    result = run_cli(executable, "--help")
    assert result.returncode == 0 and result.stdout.strip(), result.stderr


@pytest.mark.scenario("command line")
def test_cli_flag_wins_over_variable_and_count_1_always_picks_1(executable, request):
    server = _started(request, [*executable, "--listen", "127.0.0.1:0", "--count", "1"], {"RENARD_COUNT": "7"})
    try:
        target = target_of(server)
        responses = conformance._fetch(target, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 20)
        assert {r.values("location")[0] for r in responses} == {reference.render_location(target.location, 1)}
    finally:
        assert server.stop() == 0


@pytest.mark.scenario("command line")
@pytest.mark.parametrize(
    "args, env",
    [
        pytest.param(["--drain-timeout", "0"], {}, id="drain-timeout-0-flag"),
        pytest.param(["--drain-timeout=86400"], {}, id="drain-timeout-86400-equals-form"),
        pytest.param([], {"RENARD_DRAIN_TIMEOUT": "0.25"}, id="drain-timeout-variable"),
    ],
)
def test_cli_drain_timeout_in_range_is_accepted_and_served(executable, request, args, env):
    server = _started(request, [*executable, "--listen", "127.0.0.1:0", *args], env)
    try:
        assert conformance.check_redirect(target_of(server)) == ""
    finally:
        assert server.stop() == 0


# --- restart stability and SIGTERM (SPEC §3, §7.6; only with --renard-cmd) ---------------

SEED_QUERIES = ["seed=", "seed=renard", "seed=caf%C3%A9", "seed=a+b", "se%65d=x"]


def _answers(target: conformance.Target) -> tuple[list[str], list[str]]:
    """(seeded Locations for SEED_QUERIES, 30 unseeded Locations)."""
    seeded = []
    for query in SEED_QUERIES:
        seeded += [
            r.values("location")[0]
            for r in conformance._fetch(target, f"GET /?{query} HTTP/1.1\r\nHost: a\r\n\r\n".encode(), 1)
        ]
    unseeded = [r.values("location")[0] for r in conformance._fetch(target, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 30)]
    return seeded, unseeded


def _started(request, argv: list[str], env: dict):
    """A second server process for the CLI checks: argv, with env added to a clean environment."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RENARD_")}
    environment.update(env)
    return start_ready(server_process(argv, request.config, environment))


@pytest.mark.server
@pytest.mark.scenario("restart")
def test_zz_restart_keeps_seeded_answers_and_reseeds_random(renard_server, target):
    """Runs last (name): stops the session server with SIGTERM and starts it again."""
    if renard_server is None:
        pytest.skip("the restart check needs --renard-cmd")
    idle = wire.Connection.open(target.host, target.port)  # SIGTERM must not wait for it
    seeded_before, unseeded_before = _answers(target)
    status = renard_server.stop()
    idle.close()
    assert status == 0, f"SIGTERM: exit status {status} (None: still running after 5 s, killed)"
    renard_server.start()
    seeded_after, unseeded_after = _answers(renard_server.target)
    assert seeded_after == seeded_before, "seeded answers changed across a restart"
    assert unseeded_after != unseeded_before, "the same 30 random draws after a restart: not seeded from entropy"
