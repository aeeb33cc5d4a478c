"""How an NVML health check treats an AMD class (rigcheck/limits.py): judged as it is, a skip
naming its amdsmi counterpart, a skip where nothing applies, or an xfail saying what is not read
yet. Each table entry is decided member by member, with its whole message, so a check cannot
quietly pass, skip or xfail on the wrong vendor."""

from __future__ import annotations

import importlib

import pytest

from rigcheck import limits
from rigcheck.spec import load_spec

AMD, NVIDIA, CPU = load_spec("mi300x"), load_spec("h100"), load_spec("cpu")


def outcome(guard, spec, *args) -> tuple[str, str]:
    """What a guard does to the check that calls it: ("ran", "") when the check goes on."""
    try:
        guard(spec, "health facts", *args)
    except pytest.skip.Exception as e:
        return "skipped", str(e.msg)
    except pytest.xfail.Exception as e:
        return "xfailed", str(e.msg)
    return "ran", ""


@pytest.mark.parametrize("test", sorted(limits.AMD_JUDGED_AS_IS))
def test_checks_judged_as_they_are_run_on_amd_and_nvidia_only(test):
    assert outcome(limits.nvidia_counters, AMD, test) == ("ran", "")
    assert outcome(limits.nvidia_counters, NVIDIA, test) == ("ran", "")
    assert outcome(limits.nvidia_counters, CPU, test) == (
        "skipped",
        "health facts: only NVIDIA classes report them; cpu is none",
    )


@pytest.mark.parametrize("test", sorted(limits.AMD_EQUIVALENT))
def test_checks_with_an_amdsmi_counterpart_skip_on_amd_naming_it(test):
    file, counterpart = limits.AMD_EQUIVALENT[test].split("::")
    assert counterpart in vars(importlib.import_module(f"suites.facts.{file[:-3]}"))
    assert outcome(limits.nvidia_counters, AMD, test) == (
        "skipped",
        f"NVML's check: on AMD, suites/facts/{file}::{counterpart} judges this through amdsmi",
    )
    assert outcome(limits.nvidia_counters, NVIDIA, test) == ("ran", "")


@pytest.mark.parametrize("test", sorted(limits.AMD_NOT_READ))
def test_checks_not_read_on_amd_xfail_saying_what_is_missing(test):
    for guard in (limits.nvidia_counters, limits.nvidia_only):
        assert outcome(guard, AMD, test) == ("xfailed", limits.AMD_NOT_READ[test])
        assert outcome(guard, NVIDIA, test) == ("ran", "")


@pytest.mark.parametrize("test", sorted(limits.AMD_NOT_APPLICABLE))
def test_nvidia_only_settings_skip_on_amd(test):
    for guard in (limits.nvidia_counters, limits.nvidia_only):
        assert outcome(guard, AMD, test) == ("skipped", limits.AMD_NOT_APPLICABLE[test])
        assert outcome(guard, NVIDIA, test) == ("ran", "")


def test_an_unlisted_check_xfails_on_amd_and_skips_off_gpus():
    assert outcome(limits.nvidia_counters, AMD, "test_new") == (
        "xfailed",
        "AMD health facts are not probed yet: needs amdsmi",
    )
    assert outcome(limits.nvidia_only, CPU, None) == (
        "skipped",
        "health facts: only NVIDIA classes report them; cpu is none",
    )


def test_the_tables_do_not_overlap():
    tables = [
        set(limits.AMD_JUDGED_AS_IS),
        set(limits.AMD_EQUIVALENT),
        set(limits.AMD_NOT_READ),
        set(limits.AMD_NOT_APPLICABLE),
    ]
    for i, a in enumerate(tables):
        for b in tables[i + 1 :]:
            assert not a & b


def test_an_amd_fact_that_cannot_be_judged_says_how_to_read_it_with_amd_smi():
    from check_calls import call

    from rigcheck.require import device_value

    gpu = {"index": 0, "vendor": "amd", "pci": {"bus_id": "0000:05:00.0"}, "ras": "N/A"}
    outcome, message, _ = call(device_value, gpu, "ras")
    assert outcome == "failed"
    assert message.endswith(
        "`amd-smi static` and `amd-smi metric` show it; re-record with `rigcheck facts -o FILE`"
    ), message
    gpu["ras"] = None
    outcome, message, _ = call(device_value, gpu, "ras", True)
    assert "(amdsmi: NOT_SUPPORTED), as in an SR-IOV guest." in message, message
