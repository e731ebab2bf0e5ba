"""renard's conformance runner: spec/vectors replayed against a server, judged byte by byte,
and the suite (conformance, limits, robustness) that every `ours` entry must pass.

The library (stdlib only): `Target`, `Outcome`, `load_cases`, `replay`, `check_all`,
`check_redirect`; the server launcher: `launcher.ServerProcess`. The suite:
`python -m pytest -p renard_conformance.pytest_plugin --pyargs renard_conformance.suite
--renard-cmd "PROGRAM --listen 127.0.0.1:0 --header-timeout 2 --idle-timeout 3"`.
"""

from .conformance import (
    DEFAULT_COUNT,
    DEFAULT_LOCATION,
    Outcome,
    Target,
    check_all,
    check_redirect,
    load_cases,
    replay,
)

SUITE = "renard_conformance.suite"  # the suite's package, for `pytest --pyargs`
PLUGIN = "renard_conformance.pytest_plugin"  # its pytest plugin, for `pytest -p`
# The flags a suite run gives the server: short timeouts keep the slow cases short.
SUITE_FLAGS = ["--listen", "127.0.0.1:0", "--header-timeout", "2", "--idle-timeout", "3"]

__all__ = [
    "DEFAULT_COUNT",
    "DEFAULT_LOCATION",
    "Outcome",
    "Target",
    "check_all",
    "check_redirect",
    "load_cases",
    "replay",
    "SUITE",
    "PLUGIN",
    "SUITE_FLAGS",
]
