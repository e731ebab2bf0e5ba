"""The gate's verdict files (report/verdicts.py) from verdicts whose answer is known: the
overall status and exit status, JSON with every criterion, JUnit XML with a test case per
entry and criterion and a failure per regression, the Markdown summary; a run error (the
gate could not run to its end) as exit status 4 in every file, the verdicts before it kept."""

import json
import xml.etree.ElementTree as ET

import pytest

from arena.analysis.compare import decide_count, decide_paired
from arena.report.verdicts import GateVerdicts, to_json, to_junit, to_markdown

SLOWER = decide_paired([10.0] * 8, [20.0 + i / 10 for i in range(8)], "CPU per request (keepalive)", 0.05, 0.01, False)
SAME = decide_paired([10.0] * 8, [10.0 + (-1) ** i * 0.01 for i in range(8)], "CPU per request (keepalive)", 0.05)
UNSURE = decide_paired([10.0] * 3, [9.0, 12.0, 10.5], "CPU per request (keepalive)", 0.05, 0.01, False)
COUNT = decide_count(1000.0, 1000.2, "instructions per request (keepalive)")


def gate(*verdicts, error: str | None = None) -> GateVerdicts:
    return GateVerdicts("old {listen}", "new | {listen}", 0.05, 0.05, 0.01, list(verdicts), ["a note"], error)


@pytest.mark.parametrize(
    ("verdicts", "status", "exit_status"),
    [
        ([("rust", SAME), ("rust", COUNT)], "no regression", 0),
        ([("rust", SAME), ("go", SLOWER)], "regression", 1),
        ([("rust", UNSURE), ("go", SLOWER)], "regression", 1),
        ([("rust", UNSURE), ("go", SAME)], "inconclusive", 3),
    ],
)
def test_the_status_is_regression_before_inconclusive_before_no_regression(verdicts, status, exit_status):
    assert (gate(*verdicts).status, gate(*verdicts).exit_status) == (status, exit_status)


@pytest.mark.parametrize("verdicts", [[], [("rust", SAME)], [("rust", SLOWER)], [("rust", UNSURE)]])
def test_a_run_error_is_status_error_and_exit_4_whatever_was_decided_before_it(verdicts):
    failed = gate(*verdicts, error="go: B (the change): does not start")
    assert (failed.status, failed.exit_status) == ("error", 4)


def test_a_run_error_is_in_the_json_an_error_case_in_junit_and_said_in_the_summary():
    failed = gate(("rust", SLOWER), error="go: B (the change): does not start")
    doc = json.loads(to_json(failed))
    assert (doc["status"], doc["exit_status"], doc["error"]) == ("error", 4, "go: B (the change): does not start")
    assert [c["verdict"] for c in doc["criteria"]] == ["regression"]  # decided before the error: kept
    suite = ET.fromstring(to_junit(failed)).find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "1")
    (run,) = [c for c in suite.iter("testcase") if c.find("error") is not None]
    assert (run.get("classname"), run.get("name")) == ("gate", "run")
    assert run.find("error").get("message") == "go: B (the change): does not start"
    text = to_markdown(failed)
    assert text.startswith("### arena gate: error\n") and "could not run to its end** (exit status 4): go: B" in text
    assert json.loads(to_json(gate(("rust", SAME))))["error"] is None
    assert ET.fromstring(to_junit(gate(("rust", SAME)))).find("testsuite").get("errors") == "0"


def test_json_holds_every_criterion_with_its_ratio_interval_test_p_pairs_verdict_and_samples():
    doc = json.loads(to_json(gate(("rust", SAME), ("go", SLOWER), ("c", COUNT))))
    assert (doc["schema"], doc["status"], doc["exit_status"], doc["baseline"]) == (1, "regression", 1, "old {listen}")
    same, slower, count = doc["criteria"]
    assert slower["entry"] == "go" and slower["criterion"] == "CPU per request (keepalive)"
    assert slower["verdict"] == "regression" and slower["test"] == "wilcoxon" and slower["pairs"] == 8
    assert slower["p"] == pytest.approx(2 / 2**8) and 1.9 < slower["lo"] <= slower["ratio"] <= slower["hi"] < 2.2
    assert slower["a"] == [10.0] * 8 and len(slower["b"]) == 8 and slower["higher_is_better"] is False
    assert same["verdict"] == "no change" and count["verdict"] == "no change"
    assert count["test"] == "count" and count["p"] is None and count["confidence"] is None


def test_junit_has_a_case_per_entry_and_criterion_a_failure_per_regression_and_skips_the_inconclusive():
    root = ET.fromstring(to_junit(gate(("rust", SAME), ("go", SLOWER), ("c", UNSURE))))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert set(cases) == {(f"gate.{e}", "CPU per request (keepalive)") for e in ("rust", "go", "c")}
    failure = cases["gate.go", "CPU per request (keepalive)"].find("failure")
    assert failure.get("type") == "regression" and "higher" in failure.get("message")
    assert cases["gate.c", "CPU per request (keepalive)"].find("skipped") is not None
    assert cases["gate.rust", "CPU per request (keepalive)"].find("failure") is None


def test_markdown_is_one_table_row_per_criterion_with_the_pipes_of_a_command_escaped():
    text = to_markdown(gate(("rust", SAME), ("go", SLOWER)))
    assert text.startswith("### arena gate: regression\n") and "`new \\| {listen}`" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "wilcoxon" in line]
    assert len(rows) == 2 and rows[1].endswith("| **regression** |") and "- a note" in text
