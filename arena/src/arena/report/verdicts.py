"""The gate's verdicts as files a CI reads, all rendered from one GateVerdicts:
- to_json: every criterion with its ratio B ÷ A, the interval, the test and its p-value, the
  pairs, the verdict and the samples it rests on, and the run error if any (schema 1);
- to_junit: JUnit XML, one test case per entry and criterion, a <failure> per regression, a
  <skipped> per inconclusive criterion (the gate could not tell; exit status 3 says it too),
  and a test case `gate.run` with an <error> when the gate could not run (exit status 4);
- to_markdown: a table for a CI's step summary ($GITHUB_STEP_SUMMARY).
A verdict's state (STATES) is decided once here, and the overall status from the states and
the run error: an error makes the status "error" whatever was decided before it, since the
gate's answer is then incomplete (the criteria decided before it are still listed)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from ..analysis.compare import CONFIDENCE, TESTS, Verdict, factor

SCHEMA = 1
STATES = ("regression", "inconclusive", "worse within the threshold", "better", "no change")
# the gate's exit status by overall status; 2 is bad usage, found before anything is measured
EXIT = {"no regression": 0, "regression": 1, "inconclusive": 3, "error": 4}
RUN_CASE = ("gate", "run")  # the JUnit test case (classname, name) that carries a run error


@dataclass
class GateVerdicts:
    """What the gate compared and found: A (baseline) and B (change) in words, its
    thresholds as fractions (0.05: 5%), every (entry, verdict), notes on what could not
    be measured, and why the gate could not run to its end (None: it did)."""

    baseline: str
    change: str
    threshold: float
    noise: float
    alpha: float
    verdicts: list[tuple[str, Verdict]]
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    def state(self, verdict: Verdict) -> str:
        """One of STATES."""
        if verdict.regression(self.threshold):
            return "regression"
        if verdict.outcome == "inconclusive":
            return "inconclusive"
        if verdict.outcome == "significant":
            return "worse within the threshold" if verdict.worse else "better"
        return "no change"

    @property
    def status(self) -> str:
        """ "error" when the gate could not run to its end, else "regression" when a criterion
        regressed, else "inconclusive" when one could not be decided (at the cap on pairs),
        else "no regression"."""
        if self.error is not None:
            return "error"
        states = {self.state(v) for _, v in self.verdicts}
        for status in ("regression", "inconclusive"):
            if status in states:
                return status
        return "no regression"

    @property
    def exit_status(self) -> int:
        return EXIT[self.status]


def _interval(v: Verdict) -> str:
    return "–" if v.p is None else f"{v.lo:.3f}–{v.hi:.3f}"


def to_json(g: GateVerdicts) -> str:
    criteria = [
        {
            "entry": entry,
            "criterion": v.name,
            "metric": v.metric,
            "ratio": v.ratio,
            "lo": v.lo,
            "hi": v.hi,
            "confidence": CONFIDENCE if v.p is not None else None,
            "higher_is_better": v.higher_is_better,
            "test": v.test,
            "test_description": TESTS[v.test],
            "p": v.p,
            "pairs": v.pairs,
            "outcome": v.outcome,
            "verdict": g.state(v),
            "words": v.words(),
            "a": list(v.a),
            "b": list(v.b),
        }
        for entry, v in g.verdicts
    ]
    doc = {
        "schema": SCHEMA,
        "baseline": g.baseline,
        "change": g.change,
        "status": g.status,
        "exit_status": g.exit_status,
        "threshold": g.threshold,
        "noise": g.noise,
        "alpha": g.alpha,
        "notes": g.notes,
        "error": g.error,
        "criteria": criteria,
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def to_junit(g: GateVerdicts) -> str:
    states = [g.state(v) for _, v in g.verdicts]
    suite = ET.Element(
        "testsuite",
        name="arena gate",
        tests=str(len(states)),
        failures=str(states.count("regression")),
        skipped=str(states.count("inconclusive")),
        errors=str(int(g.error is not None)),
    )
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="baseline", value=g.baseline)
    for (entry, v), state in zip(g.verdicts, states, strict=True):
        case = ET.SubElement(suite, "testcase", classname=f"gate.{entry}", name=v.name)
        if state == "regression":
            ET.SubElement(case, "failure", type="regression", message=v.words()).text = _failure_text(g, v)
        elif state == "inconclusive":
            ET.SubElement(case, "skipped", message=f"inconclusive: {v.words()}")
        else:
            ET.SubElement(case, "system-out").text = f"{state}: {v.words()}"
    if g.error is not None:
        suite.set("tests", str(len(states) + 1))
        case = ET.SubElement(suite, "testcase", classname=RUN_CASE[0], name=RUN_CASE[1])
        ET.SubElement(case, "error", type="run error", message=g.error).text = _error_text(g)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _failure_text(g: GateVerdicts, v: Verdict) -> str:
    return f"B ({g.change}) against A ({g.baseline}): {v.words()}; worse beyond the threshold {g.threshold:.0%}"


def _error_text(g: GateVerdicts) -> str:
    return f"B ({g.change}) against A ({g.baseline}): the gate could not run to its end (exit status 4): {g.error}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(g: GateVerdicts) -> str:
    lines = [
        f"### arena gate: {g.status}",
        "",
        f"B = `{_cell(g.change)}` against A = `{_cell(g.baseline)}`; a regression is significant "
        f"(p < {g.alpha:g}) and worse by more than {g.threshold:.0%}; the noise floor is ±{g.noise:.0%}.",
        "",
    ]
    if g.error is not None:
        lines += [f"**The gate could not run to its end** (exit status 4): {g.error}", ""]
    lines += [
        f"| entry | criterion | B ÷ A | {CONFIDENCE:.0%} CI | test | p | pairs | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry, v in g.verdicts:
        p = "–" if v.p is None else f"{v.p:.3g}"
        state = g.state(v)
        shown = f"**{state}**" if state == "regression" else state
        direction = "higher" if v.ratio > 1 else "lower" if v.ratio < 1 else "the same"
        lines.append(
            f"| {entry} | {_cell(v.name)} | {v.ratio:.3f} ({factor(v.ratio):.2f}× {direction}) "
            f"| {_interval(v)} | {v.test} | {p} | {v.pairs} | {shown} |"
        )
    lines += [""] + [f"- {note}" for note in g.notes] + ([""] if g.notes else [])
    return "\n".join(lines)
