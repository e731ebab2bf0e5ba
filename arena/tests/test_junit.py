"""Test counts come from the runners' own JUnit reports, whatever their shape, and a declared
report that is missing, unreadable or holds a failure fails the check."""

import subprocess
import sys
from pathlib import Path

import pytest

from arena.entries.junit import Counts, ReportError, count, count_file, failed_cases, remove_stale
from arena.entries.manifest import load_manifest
from arena.workflows.check import FAIL, PASS, check_tests

# As node --test writes it: cases straight under <testsuites>, no counts on any element.
NODE = """<?xml version="1.0" encoding="utf-8"?>
<testsuites>
  <testcase name="a" time="0.001" classname="test"/>
  <testcase name="b" time="0.000" classname="test"><skipped type="skipped" message="true"/></testcase>
  <testcase name="c" time="0.002" classname="test"><failure type="testCodeFailure" message="x"/></testcase>
</testsuites>
"""
# As Maven Surefire writes it: one file per class, <testsuite> at the root.
SUREFIRE = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="renard.ConnTest" tests="3" failures="0" errors="1" skipped="0">
  <testcase name="one" classname="renard.ConnTest"/>
  <testcase name="two" classname="renard.ConnTest"/>
  <testcase name="three" classname="renard.ConnTest"><error message="boom"/></testcase>
</testsuite>
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_each_failed_case_is_named_with_its_class_and_its_message(tmp_path):
    write(tmp_path / "build" / "node.xml", NODE)
    write(tmp_path / "target" / "TEST-renard.ConnTest.xml", SUREFIRE)
    write(tmp_path / "build" / "broken.xml", "<testsuite>")
    found = failed_cases(tmp_path, ["build/*.xml", "target/TEST-*.xml"])
    assert found == [("test.c", "x"), ("renard.ConnTest.three", "boom")]


def test_each_case_counts_once_by_its_outcome_without_suite_attributes(tmp_path):
    assert count_file(write(tmp_path / "node.xml", NODE)) == Counts(passed=1, failed=1, skipped=1)


def test_an_error_is_a_failure_and_reports_of_many_files_add_up(tmp_path):
    write(tmp_path / "out" / "TEST-a.xml", SUREFIRE)
    write(tmp_path / "out" / "TEST-b.xml", SUREFIRE)
    assert count(tmp_path, ["out/TEST-*.xml"]) == Counts(passed=4, failed=2)


def test_a_report_pytest_really_wrote_is_counted(tmp_path):
    write(
        tmp_path / "test_x.py",
        "import pytest\ndef test_a(): pass\ndef test_b(): pass\n@pytest.mark.skip\ndef test_c(): pass\n",
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={tmp_path / 'r.xml'}",
            str(tmp_path / "test_x.py"),
        ],
        capture_output=True,
        check=True,
        cwd=tmp_path,
    )
    assert count(tmp_path, ["r.xml"]) == Counts(passed=2, skipped=1)


def test_no_matching_file_is_none_not_zero(tmp_path):
    assert count(tmp_path, ["out/*.xml"]) is None


def test_a_file_that_is_not_xml_is_an_error_naming_it(tmp_path):
    with pytest.raises(ReportError, match="broken.xml"):
        count(tmp_path, [write(tmp_path / "broken.xml", "PASS 12 tests").name])


def test_stale_reports_are_removed_and_nothing_else(tmp_path):
    old, kept = write(tmp_path / "out" / "a.xml", NODE), write(tmp_path / "out" / "a.txt", "")
    remove_stale(tmp_path, ["out/*.xml"])
    assert not old.exists() and kept.exists()


def test_line_names_failures_first():
    assert Counts(passed=3, failed=1, skipped=2).line() == "1 failed, 3 passed, 2 skipped"


MANIFEST = """[[entry]]
name = "demo"
language = "Shell"
kind = "ours"
description = "a test double"
requires = ["sh"]
build = []
run = "true"
artifacts = []
version = "echo 1"
command = "true"
junit = ["out/*.xml"]
"""


@pytest.mark.parametrize(
    ("test", "mark", "words"),
    [
        ("mkdir -p out && cp ../passing.xml out/", PASS, "2 passed, from its JUnit reports"),
        ("mkdir -p out && cp ../failing.xml out/", FAIL, "1 failed, 1 passed in its JUnit reports, though it exited 0"),
        ("true", FAIL, "no JUnit report matches out/*.xml"),
        ("mkdir -p out && echo nonsense > out/r.xml", FAIL, "not a JUnit XML report"),
    ],
)
def test_check_counts_from_the_reports_the_entry_declares(tmp_path, test, mark, words):
    write(tmp_path / "passing.xml", "<testsuites><testcase name='a'/><testcase name='b'/></testsuites>")
    write(
        tmp_path / "failing.xml",
        "<testsuites><testcase name='a'/><testcase name='b'><failure/></testcase></testsuites>",
    )
    write(tmp_path / "demo" / "out" / "stale.xml", "<testsuites><testcase name='old'/></testsuites>")
    (entry,) = load_manifest(
        write(tmp_path / "demo" / "entry.toml", MANIFEST.replace("junit", f"test = [{test!r}]\njunit"))
    )
    (tmp_path / "logs").mkdir()
    item = check_tests(entry, tmp_path / "logs")
    assert item.mark == mark and words in item.reason, item.reason
