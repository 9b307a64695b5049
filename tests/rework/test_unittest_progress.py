"""A real unittest suite with errors, failures and subtests, read right: the runner's summary is
no failing test, a subtest is its test, a test module that failed to import ran none of its
tests, and a fix that takes errors from 9 to 4 is progress, not a regression cascade
(fixtures: unittest-subtest-*.txt and pytest-subtests.txt, the project in the README)."""
from __future__ import annotations

from pathlib import Path

from git_retcon import rework

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = "/tmp/i32cap/ut"
DATES = ["tests.test_dates.DatesTest.test_invalid", "tests.test_dates.DatesTest.test_roundtrip",
         "tests.test_dates.DatesTest.test_valid"]


def parsed(name: str) -> rework.Parsed:
    return rework.parse((FIXTURES / name).read_text(), ROOT)


def observed(name: str, remaining: list[str]) -> rework.Observation:
    text = (FIXTURES / name).read_text()
    p = rework.parse(text, ROOT)
    return rework.observe("test", text, p, rework.blame(p, [], [], []), remaining)


def test_the_summary_is_no_test_and_a_subtest_is_its_test():
    before = parsed("unittest-subtest-before.txt")          # FAILED (errors=9)
    assert "(errors=9)" not in before.tests
    assert sorted(before.tests) == sorted(["tests.test_cli", "tests.test_fmt", "tests.test_report", *DATES])
    assert before.not_run == ["tests.test_cli", "tests.test_fmt", "tests.test_report"]
    assert before.failed == 9 and not before.interrupted
    for name in ("unittest-subtest-after.txt", "unittest-subtest-313.txt"):   # FAILED (failures=1, errors=4)
        after = parsed(name)
        assert sorted(after.tests) == sorted(["tests.test_cli", *DATES, "tests.test_report.ReportTest.test_heading"])
        assert after.not_run == ["tests.test_cli"] and after.failed == 5


def test_pytest_subtests_are_their_tests_and_a_collection_error_ran_nothing():
    p = parsed("pytest-subtests.txt")        # SUBFAILED[times] tests/test_dates.py::DatesTest::test_valid
    assert p.tests == ["tests/test_dates.py::DatesTest::test_invalid", "tests/test_dates.py::DatesTest::test_roundtrip",
                       "tests/test_dates.py::DatesTest::test_valid", "tests/test_report.py::ReportTest::test_heading",
                       "tests/test_cli.py"]
    assert p.not_run == ["tests/test_cli.py"] and p.failed == 5      # 4 failed, 1 error


def test_errors_going_from_nine_to_four_is_progress_not_a_regression_cascade():
    e = rework.Escalation()
    before = observed("unittest-subtest-before.txt", ["fmt", "dt", "times", "colors", "dash"])
    assert e.observe(before) is None
    e.attempt(before)
    # The fix took app/fmt.py and parse_datetime: test_report now imports, runs, and one of its tests
    # fails; it never passed before, and 9 failures are now 5.
    after = observed("unittest-subtest-after.txt", ["times", "colors", "dash"])
    assert e.observe(after, {"app/fmt.py", "app/dates.py"}) is None


def test_a_test_that_passed_before_and_fails_now_with_no_progress_is_a_cascade():
    e = rework.Escalation()
    before = observed("unittest-subtest-after.txt", ["times", "colors", "dash"])
    assert e.observe(before) is None
    e.attempt(before)
    # The same run, read again with the one failure moved to a test that ran and passed before.
    text = (FIXTURES / "unittest-subtest-after.txt").read_text().replace(
        "test_heading (tests.test_report.ReportTest.test_heading)",
        "test_underline (tests.test_report.ReportTest.test_underline)")
    p = rework.parse(text, ROOT)
    again = rework.observe("test", text, p, rework.blame(p, [], [], []), ["times", "colors"])
    verdict = e.observe(again, {"app/report.py"})
    assert verdict and "regression cascade" in verdict and "ReportTest.test_underline" in verdict
    assert "(errors" not in verdict and "(failures" not in verdict
    # A fix that edited the test's own file is not blamed for it.
    e2 = rework.Escalation()
    e2.observe(before)
    e2.attempt(before)
    assert e2.observe(again, {"tests/test_report.py"}) is None


def test_a_fix_is_better_when_it_passes_gets_further_or_fails_in_fewer_cases():
    before = observed("unittest-subtest-before.txt", ["a", "b"])
    after = observed("unittest-subtest-after.txt", ["a"])
    assert rework.better(before, after) and rework.better(before, None)
    assert not rework.better(after, before)                      # 5 failing cases -> 9
    assert not rework.better(after, observed("unittest-subtest-after.txt", ["a"]))   # the same failure
    text = (FIXTURES / "gcc-unknown-type.txt").read_text()
    p = rework.parse(text, "/tmp/i32cap/ctype")
    build = rework.observe("build", text, p, rework.blame(p, [], [], []), [])
    assert rework.better(build, after) and not rework.better(after, build)


def test_the_evidence_of_a_module_that_failed_to_import_keeps_the_projects_frames():
    text = (FIXTURES / "unittest-subtest-after.txt").read_text()
    ev = rework.evidence(rework.parse(text, ROOT), text)
    assert "unittest/loader.py" not in ev
    assert 'File "tests/test_cli.py", line 3, in <module>' in ev and 'File "app/cli.py", line 1, in <module>' in ev
    assert "ModuleNotFoundError: No module named 'app.colors'" in ev
