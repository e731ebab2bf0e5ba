"""What the three load generators' drivers (wrk: load/wrk, h2load: load/h2load.py, oha:
load/oha.py) share: one error type, and one bounded run of the generator that turns a
timeout, a non-zero exit or output without figures into that error.

A driver is a function `(url, seconds, …) -> figures` that calls `run_load` with its argv
and its reader; callers catch LoadError alone, whichever generator ran."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..entries.process import Timed, TimedOut, run_timed

Figures = TypeVar("Figures")


class LoadError(Exception):
    """A load generator that did not finish in time, exited non-zero, or printed no figures:
    str() names the generator and says which."""


def run_load(argv: list[str], seconds: int, name: str, read: Callable[[Timed], Figures]) -> tuple[Figures, Timed]:
    """Runs argv (a load generator told to run `seconds`) to its end, bounded by seconds + 30 s;
    (read(its output), the run). read raises LoadError when the output has no figures; an exit
    status other than 0 is a LoadError ending with the last lines of its output."""
    try:
        done = run_timed(argv, seconds, name)
    except TimedOut as err:
        raise LoadError(str(err)) from None
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise LoadError(f"{name} exited {done.returncode}: " + " | ".join(tail))
    return read(done), done
