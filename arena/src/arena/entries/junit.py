"""Test counts from the runners' own reports: JUnit XML, the format pytest, Maven Surefire,
ctest, cmocka, node --test, deno test and bun test each write.

Counted per <testcase>, not from a <testsuite>'s attributes (node --test writes none): a case
holding <failure> or <error> failed, one holding <skipped> was skipped, any other passed.
Standard library only (xml.etree): the files are our runners' output, not untrusted input.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path


class ReportError(Exception):
    """A report that is not JUnit XML. str() names the file."""


@dataclass(frozen=True)
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.passed + other.passed, self.failed + other.failed, self.skipped + other.skipped)

    def line(self) -> str:
        """`412 passed, 3 skipped` (failures first when there are any)."""
        parts = [f"{self.failed} failed"] if self.failed else []
        parts.append(f"{self.passed} passed")
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        return ", ".join(parts)


def _root(path: Path) -> ET.Element:
    try:
        return ET.parse(path).getroot()
    except (ET.ParseError, OSError) as err:
        raise ReportError(f"{path}: not a JUnit XML report ({err})") from err


def count_file(path: Path) -> Counts:
    root = _root(path)
    counts = Counts()
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        if kinds & {"failure", "error"}:
            counts += Counts(failed=1)
        elif "skipped" in kinds:
            counts += Counts(skipped=1)
        else:
            counts += Counts(passed=1)
    return counts


def failed_cases(folder: Path, patterns: list[str]) -> list[tuple[str, str]]:
    """(test, the first line of its failure) for each failed case of the reports the globs
    find: the test as `classname.name` (`name` alone without a class); unreadable reports are
    left out (count() names them)."""
    found = []
    for path in report_files(folder, patterns):
        try:
            root = _root(path)
        except ReportError:
            continue
        for case in root.iter("testcase"):
            for outcome in (child for child in case if child.tag in ("failure", "error")):
                said = (outcome.get("message") or outcome.text or outcome.tag).strip().splitlines()
                test = ".".join(part for part in (case.get("classname"), case.get("name")) if part)
                found.append((test, said[0] if said else outcome.tag))
                break
    return found


def report_files(folder: Path, patterns: list[str]) -> list[Path]:
    """The files matching an entry's `junit` globs (relative to its folder), in order."""
    return sorted({path for pattern in patterns for path in folder.glob(pattern) if path.is_file()})


def count(folder: Path, patterns: list[str]) -> Counts | None:
    """The sum over every report the globs find; None when they find none."""
    files = report_files(folder, patterns)
    if not files:
        return None
    total = Counts()
    for path in files:
        total += count_file(path)
    return total


def remove_stale(folder: Path, patterns: list[str]) -> None:
    """Delete the reports of an earlier run, so that a runner that writes none is not credited."""
    for path in report_files(folder, patterns):
        path.unlink()
