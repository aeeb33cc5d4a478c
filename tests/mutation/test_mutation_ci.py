"""CI's mutation check (tools/mutation_ci.py): which mutants it picks and which it forgives."""

from __future__ import annotations

import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))

import mutation  # noqa: E402
import mutation_ci  # noqa: E402


def test_a_changed_line_selects_its_function_or_method_by_mutmut_s_name(tmp_path):
    source = tmp_path / "judge.py"
    source.write_text(
        "def first():\n    return 1\n\n\n"  # lines 1-2
        "class Check:\n    def run(self):\n        return 2\n\n"  # lines 5-7
        "    def other(self):\n        return 3\n"  # lines 9-10
    )
    assert mutation_ci.changed_functions(source, {2}) == {"x_first"}
    assert mutation_ci.changed_functions(source, {7}) == {"xǁCheckǁrun"}
    assert mutation_ci.changed_functions(source, {3, 4, 8}) == set()


def test_the_sample_is_fixed_and_spread_evenly():
    names = [f"m{i:02}" for i in range(30)]
    assert mutation_ci.spread(names, 12) == mutation_ci.spread(names, 12)
    picked = mutation_ci.spread(names, 3)
    assert picked == ["m00", "m10", "m20"]
    assert mutation_ci.spread(names[:5], 12) == names[:5]


def test_survivors_listed_as_equivalent_are_forgiven_by_area_and_name():
    listed = mutation_ci.listed_equivalents()
    assert ("measure-check", "x__fmt__mutmut_3") in listed
    assert ("spec-detect", "x_no_device_reason__mutmut_36") in listed
    assert ("memory", "x__divisors_hint__mutmut_13") in listed
    killed_not_equivalent = ("spec-detect", "x_no_device_reason__mutmut_13")
    assert killed_not_equivalent not in listed


def test_a_listed_name_with_its_module_in_front_forgives_that_mutant_only():
    listed = mutation_ci.listed_equivalents()
    assert mutation_ci.is_listed(
        "rigcheck.memory.cli.x_job_from_args__mutmut_35", "memory-cli", listed
    )
    assert mutation_ci.is_listed("rigcheck.gate.epilog.x__machine_fault__mutmut_17", "gate", listed)
    assert mutation_ci.is_listed("rigcheck.require.x__typed__mutmut_10", "facts", listed)
    assert mutation_ci.is_listed(
        "suites.facts.test_kernel_log.x_test_no_machine_fault_xids__mutmut_41", "facts", listed
    )
    assert not mutation_ci.is_listed(
        "rigcheck.memory.report.x_job_from_args__mutmut_35", "memory-cli", listed
    )
    assert not mutation_ci.is_listed(
        "rigcheck.memory.cli.x_job_from_args__mutmut_35", "memory", listed
    )
    assert not mutation_ci.is_listed(
        "rigcheck.memory.cli.x_job_from_args__mutmut_3", "memory-cli", listed
    )


def test_a_mutant_is_applied_by_its_lines_wherever_the_function_is():
    text = "import os\n\n\ndef f(x):\n    return x <= 3\n"
    diff = (
        "--- a.py\n+++ a.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x <= 3\n+    return x < 3\n"
    )
    assert mutation.applied(text, diff) == "import os\n\n\ndef f(x):\n    return x < 3\n"
    assert mutation.applied(text.replace("3", "4"), diff) is None
