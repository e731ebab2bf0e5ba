"""The differential against the flagship: every `ours` entry must answer any octets exactly
as servers/rust/bin/renard does (two entries that differ hold a bug in one of them, or a gap
in the spec). The inputs, the sending and the normalisation: renard_conformance.differential.

Both servers run with the entry's --count, --location and timeouts and --threads 1. Bounded:
--renard-diff-inputs inputs (3000, 6-9 s here; 50 000 with --renard-soak-seconds >= 300, but
`make soak`'s `-k "soak or attack"` does not select this test) within the budget.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from .. import differential
from ..launcher import argv_with
from .support import started

DEFAULT_INPUTS = 3000
SOAK_INPUTS = 50_000
SOAK_SECONDS = 300.0  # --renard-soak-seconds from which the run is a soak (`make soak`: 600)
DIFF_BUDGET_S = 120.0  # inputs not started by then are not sent (the figure `inputs` says how many were)
SOAK_BUDGET_S = 900.0


def program_path(argv0: str, cwd: str | None) -> Path | None:
    """The executable argv0 names, as the launcher would run it from cwd, or None."""
    if "/" in argv0:
        return Path(cwd or ".", argv0).resolve()
    found = shutil.which(argv0)
    return Path(found).resolve() if found else None


def is_flagship(argv0: str, cwd: str | None) -> bool:
    program = program_path(argv0, cwd)
    # the flagship may not be built yet: ensure_flagship, below, builds it for the comparison
    flagship = differential.FLAGSHIP
    return program is not None and program.is_file() and flagship.is_file() and program.samefile(flagship)


@pytest.mark.scenario("same bytes as the flagship")
def test_same_octets_as_the_flagship_on_mutated_and_split_inputs(base_argv, request, record_property):
    config = request.config
    if is_flagship(base_argv[0], config.getoption("--renard-cwd")):
        pytest.skip("this is the flagship: the reference of the differential")
    problem = differential.ensure_flagship()
    if problem:
        pytest.fail(problem, pytrace=False)
    soak = config.getoption("--renard-soak-seconds") >= SOAK_SECONDS
    count = config.getoption("--renard-diff-inputs") or (SOAK_INPUTS if soak else DEFAULT_INPUTS)
    flags = differential.pair_flags(base_argv)
    with (
        started(request, [str(differential.FLAGSHIP)], flags) as flagship,
        started(request, base_argv, flags) as entry,
    ):
        pair = differential.Pair(
            (flagship.host, flagship.port),
            (entry.host, entry.port),
            flags.get("--location", differential.DEFAULT_LOCATION),
            differential.close_bound(flags),
        )
        budget = SOAK_BUDGET_S if soak else DIFF_BUDGET_S
        result = differential.compare(pair, differential.inputs(count), budget)
    built = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(differential.FLAGSHIP.stat().st_mtime))
    record_property("flagship", f"{differential.FLAGSHIP} built {built}")
    record_property("seed", differential.SEED)
    record_property("flags", argv_with([], flags))
    for name, value in result.figures().items():
        record_property(name, value)
    shown = "\n".join(d.report() for d in result.differences[: differential.MAX_REPORTED])
    assert not result.differences, (
        f"{len(result.differences)} of {result.inputs} inputs answered otherwise than by the flagship "
        f"(Date values and the k of unseeded draws aside; each difference seen twice); the first:\n{shown}"
    )
    assert result.inputs == count, f"only {result.inputs} of {count} inputs answered within {budget:g} s"
