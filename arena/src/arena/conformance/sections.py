"""The conformance outcomes by section of the spec: the report's entry × section matrix.

A section is a vector group (the file name in spec/vectors/http/, or `seeds`); the runner's
statistical checks belong to the section whose rule they test. Each section links to the
SPEC.md heading of its rules (GitHub's anchor of that heading).
"""

from __future__ import annotations

from functools import cache

from renard_conformance.vectors import load_cases

# section -> the SPEC.md anchor of its rules, in the order the report shows them
SECTIONS: dict[str, str] = {
    "routing": "2-routing",
    "redirect": "3-the-redirect",
    "seeds": "31-finding-the-seed",
    "parsing": "5-parsing-requests-rfc-9112",
    "framing": "6-request-bodies-rfc-9112-63-93",
    "connection": "7-connections",
    "limits": "75-limits-and-timeouts",
    "abuse": "5-parsing-requests-rfc-9112",
}
STATISTICAL = {
    "uniform-k": "redirect",
    "every-k-reachable": "redirect",
    "date-changes-every-second": "redirect",
    "seeded-stable-across-connections": "seeds",
}
# The route every peer must answer: GET / is a 302 to a k drawn uniformly from 1..N.
CORE_ROUTE = ("uniform-k", "every-k-reachable")
DETAIL_CHARS = 300  # of a failure's detail kept in run.json


@cache
def section_of() -> dict[str, str]:
    """Case name -> section, for every vector and statistical check."""
    return {case.name: case.group for case in load_cases()} | STATISTICAL


def tally(outcomes: list) -> tuple[dict[str, dict[str, int]], list[dict[str, str]], bool]:
    """(section -> {"pass", "alt", "fail"} counts, the failed cases, whether the core route
    holds) of a runner's outcomes (objects with name, verdict, detail)."""
    where = section_of()
    counts: dict[str, dict[str, int]] = {}
    failures = []
    for o in outcomes:
        section = where.get(o.name, "other")
        counts.setdefault(section, {"pass": 0, "alt": 0, "fail": 0})[o.verdict] += 1
        if o.verdict == "fail":
            failures.append({"section": section, "name": o.name, "detail": o.detail[:DETAIL_CHARS]})
    verdict = {o.name: o.verdict for o in outcomes}
    core = all(verdict.get(name) in ("pass", "alt") for name in CORE_ROUTE)
    return counts, failures, core
