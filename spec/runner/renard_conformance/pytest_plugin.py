"""pytest wiring of the suite: --renard-cmd starts a server, --renard-addr points at a running one.

Loaded by spec/runner/conftest.py (`pytest spec/runner`) and by `-p renard_conformance.pytest_plugin`
(`arena verify --full`). Without --renard-cmd or --renard-addr (nor RENARD_CMD / RENARD_ADDR),
the tests that need a server are skipped.

--renard-report FILE writes the outcome of every test, grouped by scenario (the
`@pytest.mark.scenario("name")` of the test), as JSON: the arena's entry × scenario table.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import time

import pytest

from . import conformance
from .launcher import ServerProcess, StartError, flag_value

STARTUP_TIMEOUT_S = 10.0
NO_SERVER = (
    'no server to test: pass --renard-cmd "PATH --listen 127.0.0.1:0 ..." or '
    "--renard-addr HOST:PORT (or set RENARD_CMD / RENARD_ADDR)"
)
REPORT_SCHEMA = 1


def rss_slack(text: str) -> float:
    """--renard-rss-slack's value: a multiple, at least 1 (the soak's growth bound)."""
    value = float(text)
    if not 1.0 <= value <= 100.0:
        raise argparse.ArgumentTypeError(f"{text} is not a multiple between 1 and 100")
    return value


def pytest_addoption(parser):
    group = parser.getgroup("renard")
    group.addoption(
        "--renard-cmd",
        default=os.environ.get("RENARD_CMD") or None,
        help="command that starts the server (its --listen should use port 0)",
    )
    group.addoption("--renard-cwd", default=None, help="working directory for --renard-cmd (default: the current one)")
    group.addoption(
        "--renard-addr",
        default=os.environ.get("RENARD_ADDR") or None,
        help="HOST:PORT of a running server (with its --count/--location defaults, "
        "or pass --renard-count/--renard-location/--renard-*-timeout)",
    )
    group.addoption("--renard-count", type=int, default=None)
    group.addoption("--renard-location", default=None)
    group.addoption("--renard-header-timeout", type=float, default=None)
    group.addoption("--renard-idle-timeout", type=float, default=None)
    group.addoption(
        "--renard-allow-alt", action="store_true", help="accept 'alt' verdicts (answers allowed for peers) as passes"
    )
    group.addoption(
        "--renard-soak-seconds",
        type=float,
        default=10.0,
        help="length of the wrk soak of the robustness suite [10; make soak: 600]",
    )
    group.addoption(
        "--renard-attack-seconds",
        type=float,
        default=10.0,
        help="length of the slowloris attack at the connection cap [10; make soak: 20]",
    )
    group.addoption(
        "--renard-rss-slack",
        type=rss_slack,
        default=1.10,
        help="the soak's bound on the growth of its resident set: each third's peak may grow over the one "
        "before by (slack - 1) / 2 of the first third's [1.10; a sanitizer build, whose allocator "
        "quarantines freed memory and shadows what it touches, passes more and leaves leaks to "
        "LeakSanitizer]",
    )
    group.addoption(
        "--renard-diff-inputs",
        type=int,
        default=None,
        help="inputs of the differential against the flagship [3000; with --renard-soak-seconds >= 300: 50000]",
    )
    group.addoption(
        "--renard-report",
        default=None,
        metavar="FILE",
        help="write every test's outcome, grouped by scenario, to FILE as JSON",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: waits for one of the server's timeouts")
    config.addinivalue_line("markers", "server: needs a running renard")
    config.addinivalue_line("markers", "scenario(name): the row of the entry x scenario table")
    if config.getoption("--renard-report"):
        config.pluginmanager.register(ScenarioReport(config.getoption("--renard-report")), "renard-scenario-report")


def command_argv(config) -> list[str] | None:
    command = config.getoption("--renard-cmd")
    return shlex.split(command) if command else None


def server_process(argv: list[str], config, env: dict | None = None) -> ServerProcess:
    """A ServerProcess for argv in --renard-cwd (not started)."""
    return ServerProcess(argv, cwd=config.getoption("--renard-cwd"), env=env)


def start_ready(server: ServerProcess) -> ServerProcess:
    """start() and wait_ready(); the `listening on` line must be the first on stderr (§1)."""
    try:
        server.start().wait_ready(STARTUP_TIMEOUT_S)
    except StartError as error:
        raise RuntimeError(f"--renard-cmd: {error}") from None
    if server.ready_line_number != 1:
        server.stop()
        raise RuntimeError(
            f"{server.argv[0]}: `listening on` is line {server.ready_line_number} of "
            f"stderr, not the first (SPEC §1):\n{server.output_tail()}"
        )
    return server


def target_of(server: ServerProcess) -> conformance.Target:
    """The Target a started server listens on, with the configuration its argv gives."""
    target = conformance.Target(host=server.host, port=server.port)
    for flag, attribute, parse in (
        ("--count", "count", int),
        ("--location", "location", str),
        ("--header-timeout", "header_timeout", float),
        ("--idle-timeout", "idle_timeout", float),
    ):
        value = flag_value(server.argv, flag)
        if value is not None:
            setattr(target, attribute, parse(value))
    return target


class SessionServer:
    """The server of --renard-cmd shared by the session; `target` is updated in place on restart."""

    def __init__(self, argv: list[str], config):
        self.server = server_process(argv, config)
        self.argv = argv
        self.target = conformance.Target(host="", port=0)

    def start(self) -> None:
        start_ready(self.server)
        vars(self.target).update(vars(target_of(self.server)))

    def stop(self) -> int | None:
        return self.server.stop()


@pytest.fixture(scope="session")
def renard_server(request):
    """The SessionServer started from --renard-cmd, or None."""
    argv = command_argv(request.config)
    if not argv:
        yield None
        return
    session = SessionServer(argv, request.config)
    session.start()
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def target(request, renard_server) -> conformance.Target:
    if renard_server is not None:
        return renard_server.target
    address = request.config.getoption("--renard-addr")
    if not address:
        pytest.skip(NO_SERVER)
    host, port = conformance._address(address)
    config = request.config
    return conformance.Target(
        host,
        port,
        count=config.getoption("--renard-count") or conformance.DEFAULT_COUNT,
        location=config.getoption("--renard-location") or conformance.DEFAULT_LOCATION,
        header_timeout=config.getoption("--renard-header-timeout") or 10.0,
        idle_timeout=config.getoption("--renard-idle-timeout") or 60.0,
    )


@pytest.fixture(scope="module")
def base_argv(request) -> list[str]:
    """The words of --renard-cmd, for tests that start their own servers; skips without it."""
    argv = command_argv(request.config)
    if not argv:
        pytest.skip(
            "these checks start their own servers: pass --renard-cmd "
            '"PATH --listen 127.0.0.1:0 ..." (or set RENARD_CMD)'
        )
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("these checks read /proc (Linux only)")
    return argv


@pytest.fixture(scope="session")
def allow_alt(request) -> bool:
    return bool(request.config.getoption("--renard-allow-alt"))


# --- the entry x scenario table ----------------------------------------------------------


class ScenarioReport:
    """Collects each test's outcome under its scenario; writes FILE at the end of the session."""

    def __init__(self, path: str):
        self.path = path
        self.started = time.time()
        self.scenario_of: dict[str, str] = {}
        self.tests: dict[str, dict] = {}

    def pytest_collection_modifyitems(self, items):
        for item in items:
            marker = item.get_closest_marker("scenario")
            self.scenario_of[item.nodeid] = marker.args[0] if marker else "other"

    def pytest_runtest_logreport(self, report):
        outcome = "skipped" if report.skipped else ("failed" if report.failed else "passed")
        if report.when != "call" and outcome == "passed":
            return
        previous = self.tests.get(report.nodeid)
        if previous and previous["outcome"] == "failed":
            return  # a teardown error does not hide the call's failure (and vice versa)
        detail = ""
        if outcome == "failed":
            detail = str(report.longrepr)[-2000:]
        elif outcome == "skipped" and isinstance(report.longrepr, tuple):
            detail = str(report.longrepr[2])
        self.tests[report.nodeid] = {
            "scenario": self.scenario_of.get(report.nodeid, "other"),
            "outcome": outcome,
            "seconds": round(report.duration, 3),
            "detail": detail,
            "figures": dict(report.user_properties),  # what the test measured (record_property)
        }

    def pytest_sessionfinish(self, session, exitstatus):
        scenarios: dict[str, dict] = {}
        for nodeid, test in self.tests.items():
            row = scenarios.setdefault(
                test["scenario"], {"passed": 0, "failed": 0, "skipped": 0, "seconds": 0.0, "failures": []}
            )
            row[test["outcome"]] += 1
            row["seconds"] = round(row["seconds"] + test["seconds"], 3)
            if test["outcome"] == "failed":
                row["failures"].append({"test": nodeid, "detail": test["detail"]})
            if test["figures"]:
                row.setdefault("figures", {})[nodeid.rpartition("::")[2]] = test["figures"]
        document = {
            "schema": REPORT_SCHEMA,
            "started": self.started,
            "seconds": round(time.time() - self.started, 3),
            "exit_status": int(exitstatus),
            "scenarios": scenarios,
        }
        with open(self.path, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=1)
