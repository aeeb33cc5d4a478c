"""The small readers of what amdsmi releases answer differently (facts/amd/smi_releases.py); the
whole probe runs through each real release in tests/amdsmi_real."""

import pytest

from rigcheck.facts.amd import smi_releases as releases


@pytest.mark.parametrize(
    ("answer", "watts"),
    [
        (750, 750.0),  # ROCm 6.0-6.1.1: watts
        (750_000_000, 750.0),  # ROCm 6.1.2 on: microwatts
        (100_000, 100_000.0),  # the largest figure still read as watts
        (100_001, 0.100001),  # the smallest read as microwatts
        (0, 0.0),
    ],
)
def test_power_caps_in_either_unit(answer, watts):
    assert releases.watts(answer) == pytest.approx(watts)


def test_no_bad_pages_as_a_sentence_is_an_empty_list():
    assert releases.bad_page_list("No bad pages found.") == []
    assert releases.bad_page_list([{"status": 0}]) == [{"status": 0}]


def test_any_other_sentence_is_not_taken_for_no_pages():
    with pytest.raises(ValueError, match="not a page list"):
        releases.bad_page_list("Bad pages: see dmesg")


def test_import_advice_names_the_fix():
    assert "export ROCM_PATH" in releases.import_advice(KeyError("ROCM_PATH"))
    undefined = AttributeError("libamd_smi.so: undefined symbol: amdsmi_get_gpu_xcp_info")
    assert "ships with the host's ROCm" in releases.import_advice(undefined)
    assert "pip install /opt/rocm/share/amd_smi" in releases.import_advice(
        KeyError("libamd_smi.so")
    )
