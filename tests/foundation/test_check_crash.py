"""A check that raises anything but its verdict fails naming the check, the fact and the error."""

import rigcheck.plugin.core

CHECKS = """
from rigcheck.facts import typed

def test_reads_then_crashes():
    typed.note_read("devices.0.pcie.gen_max")
    "16" < 5

def test_asserts():
    assert 1 == 2, "its own verdict"
"""


def test_a_crash_is_a_failure_naming_check_fact_and_exception(pytester, monkeypatch):
    monkeypatch.setattr(rigcheck.plugin.core, "is_suite_item", lambda item: True)
    pytester.makepyfile(test_checks=CHECKS)
    result = pytester.runpytest_inprocess(
        "-p", "rigcheck.plugin.check_crash", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_reads_then_crashes could not judge (call): it raised TypeError: '<' not "
            "supported between instances of 'str' and 'int' after reading "
            "devices.0.pcie.gen_max*"
        ]
    )
    assert "its own verdict" in result.stdout.str()  # an assertion is left as it is


def test_checks_outside_the_suites_keep_their_traceback(pytester):
    pytester.makepyfile(test_checks=CHECKS)
    result = pytester.runpytest_inprocess(
        "-p", "rigcheck.plugin.check_crash", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=2)
    assert "could not judge" not in result.stdout.str()
