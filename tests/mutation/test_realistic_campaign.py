"""The realistic-mutant campaign (tests/mutation/realistic/, tools/realistic_mutants.py) stays
runnable as the code changes: every mutant's snippet is still in the file it names, exactly
once, and its tests exist. Running the campaign takes minutes and is not part of CI; this check
takes milliseconds. A failure here means a mutant went stale: rewrite its old snippet for
today's code (and its new one to the same bug), or delete it if the bug can no longer be written.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))

import realistic_mutants as campaign  # noqa: E402

MUTANTS = campaign.campaign()
AREAS = {"facts", "counters", "logs", "amd", "fabric_host", "burnin", "pairs", "fleet", "memory",
         "reports", "kernel_log", "nvml_fields", "amdsmi_fields", "branches",
         "gate_outcomes"}  # fmt: skip


def test_every_mutant_can_be_applied_and_names_tests_that_exist():
    problems = [p for m in MUTANTS for p in campaign.problems(m)]
    assert not problems, "\n".join(problems)


def test_the_campaign_covers_every_area_with_60_mutants_or_more():
    per_area = Counter(m.area for m in MUTANTS)
    assert set(per_area) == AREAS, per_area
    assert len(MUTANTS) >= 60 and min(per_area.values()) >= 5, per_area


def test_mutant_ids_are_unique():
    repeated = [i for i, n in Counter(m.id for m in MUTANTS).items() if n > 1]
    assert not repeated, repeated


def test_a_mutant_is_written_in_only_where_its_snippet_occurs_once(tmp_path):
    mutant = campaign.Mutant("x-01", "x", "judge.py", "a or b", "a and b", "and-for-or", ("t",))
    assert campaign.applied("if a or b:\n", mutant) == "if a and b:\n"
    assert campaign.applied("if a or b or (a or b):\n", mutant) is None
    assert campaign.applied("if b or a:\n", mutant) is None
    (tmp_path / "judge.py").write_text("if a or b:\n")
    (tmp_path / "t").write_text("")
    assert campaign.problems(mutant, tmp_path) == []
    (tmp_path / "judge.py").write_text("if b or a:\n")
    assert campaign.problems(mutant, tmp_path) == [
        "x-01: its old snippet occurs 0 times in judge.py"
    ]


def test_only_a_test_failure_or_a_stopped_run_counts_as_a_kill():
    assert campaign.outcome(0) == "survived"
    assert campaign.outcome(1) == "killed"
    assert campaign.outcome(124) == "killed"  # ran out of time: a user's run would hang too
    assert campaign.outcome(4).startswith("error")  # a test path that does not exist
    assert campaign.outcome(5).startswith("error")  # nothing collected


def test_the_kill_rate_is_per_area_and_lists_what_was_not_killed():
    results = [
        {"id": "a-1", "area": "a", "kind": "k", "file": "f", "outcome": "killed"},
        {"id": "a-2", "area": "a", "kind": "k", "file": "f", "outcome": "survived"},
        {"id": "b-1", "area": "b", "kind": "k", "file": "f", "outcome": "killed"},
    ]
    lines = campaign.summary(results)
    assert "| a | 2 | 1 | 1 | 0 | 50.0% |" in lines
    assert "| b | 1 | 1 | 0 | 0 | 100.0% |" in lines
    assert "| all | 3 | 2 | 1 | 0 | 66.7% |" in lines
    assert lines[-1] == "not killed: a-2 (survived; k; f)"
