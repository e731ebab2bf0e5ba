"""The conformance matrix: outcomes tallied by spec section, the core route, and the report's
entry × section table with each entry's failing cases one click away."""

import copy
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.conformance.sections import SECTIONS, section_of, tally
from arena.core.model import Run, SchemaError, validate
from arena.report import build, html, markdown

FIXTURE = Path(__file__).parent / "fixtures" / "run_sample.json"


@dataclass
class Outcome:  # as the runner returns it
    name: str
    verdict: str
    detail: str = ""


def a_case_of(section: str) -> str:
    return next(name for name, s in section_of().items() if s == section)


def test_every_vector_group_has_a_section_with_a_link():
    assert set(section_of().values()) <= set(SECTIONS)


def test_outcomes_are_counted_in_their_sections_and_failures_kept():
    outcomes = [
        Outcome(a_case_of("parsing"), "pass"),
        Outcome(a_case_of("routing"), "alt"),
        Outcome(a_case_of("framing"), "fail", "expected 400, got 200"),
        Outcome("uniform-k", "pass"),
        Outcome("every-k-reachable", "pass"),
    ]
    counts, failures, core = tally(outcomes)
    assert counts["parsing"] == {"pass": 1, "alt": 0, "fail": 0}
    assert counts["routing"] == {"pass": 0, "alt": 1, "fail": 0}
    assert counts["redirect"] == {"pass": 2, "alt": 0, "fail": 0}  # the statistical checks
    assert failures == [{"section": "framing", "name": a_case_of("framing"), "detail": "expected 400, got 200"}]
    assert core is True


def test_the_core_route_fails_when_k_is_not_uniform_or_a_k_is_never_drawn():
    assert tally([Outcome("uniform-k", "fail"), Outcome("every-k-reachable", "pass")])[2] is False
    assert tally([Outcome("uniform-k", "alt"), Outcome("every-k-reachable", "fail")])[2] is False
    assert tally([Outcome("uniform-k", "alt")])[2] is False  # not checked is not held


@pytest.fixture
def run_with_sections() -> dict:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    for entry in doc["entries"]:
        if entry["name"] == "java-seed":
            entry["verify"].update(
                sections={"parsing": {"pass": 40, "alt": 8, "fail": 2}, "redirect": {"pass": 3, "alt": 0, "fail": 0}},
                failures=[{"section": "parsing", "name": "bare-cr-in-field", "detail": "expected 400 <got> 200"}],
                core_route=True,
            )
        if entry["name"] == "rust":
            entry["verify"].update(
                sections={"parsing": {"pass": 50, "alt": 0, "fail": 0}}, failures=[], core_route=True
            )
    return doc


def test_the_matrix_shows_each_entry_by_section_with_links_to_the_spec(run_with_sections):
    md = markdown.render(build(Run.load(validate(run_with_sections)), "nginx-lua"))
    assert "### By section of the spec" in md
    assert "[parsing](../../spec/SPEC.md#5-parsing-requests-rfc-9112)" in md
    row = next(line for line in md.splitlines() if line.startswith("| java-seed | yes |"))
    assert "40 · 8 · 2" in row and "3 · 0 · 0" in row
    assert "<details><summary>java-seed: 1 failing cases</summary>" in md
    assert "`bare-cr-in-field`: expected 400 &lt;got&gt; 200" in md
    assert "<summary>rust:" not in md  # no failures, no collapsed list


def test_the_html_matrix_collapses_the_failing_cases(run_with_sections):
    page = html.render(build(Run.load(validate(run_with_sections)), "nginx-lua"))
    assert '<a href="../../spec/SPEC.md#2-routing">routing</a>' in page
    assert "<details><summary>java-seed: 1 failing cases</summary><ul><li>parsing <code>bare-cr-in-field</code>" in page
    assert "expected 400 &lt;got&gt; 200" in page


def test_a_run_without_sections_reads_and_reports_without_the_matrix():
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))  # schema 1 as first written
    run = Run.load(validate(doc))
    assert all(e.verify is None or e.verify.core_route is None for e in run.entries)
    assert "By section of the spec" not in markdown.render(build(run, "nginx-lua"))


def test_sections_survive_a_save_and_a_load(run_with_sections):
    run = Run.load(validate(run_with_sections))
    again = Run.load(validate(json.loads(json.dumps(run.to_json()))))
    (seed,) = [e for e in again.entries if e.name == "java-seed"]
    assert seed.verify.sections["parsing"] == {"pass": 40, "alt": 8, "fail": 2} and seed.verify.core_route is True


def test_a_malformed_failure_record_is_rejected(run_with_sections):
    doc = copy.deepcopy(run_with_sections)
    doc["entries"][2]["verify"]["failures"] = [{"section": "parsing"}]
    with pytest.raises(SchemaError, match=r"entries\[2\]\.verify\.failures\[0\]\.name"):
        validate(doc)
