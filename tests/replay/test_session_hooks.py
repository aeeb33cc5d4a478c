"""Session hooks (header, detection, certificate) on odd facts: a verdict, never INTERNALERROR."""

import copy
import json
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"


def snapshot(name: str, **edits) -> dict:
    data = copy.deepcopy(json.loads((SNAPSHOTS / f"{name}.json").read_text()))
    for path, value in edits.items():
        *parents, last = path.split("__")
        node = data
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = value
    return data


HOSTILE = {
    "driver reason {}": snapshot("cpu", software__nvidia_driver__reason={}),
    "driver reason [] on a GPU-less host": snapshot(
        "cpu", software__nvidia_driver={"present": False, "reason": []}
    ),
    "torch a string": snapshot("h100", software__torch="N/A"),
    "torch error not a string": snapshot("h100", software__torch={"error": {"x": 1}}),
    "driver version a number": snapshot("h100", software__nvidia_driver__version=550),
    "PCI id a number": snapshot("h100", devices__0__pci__device_id=8960),
    "PCI a list": snapshot("h100", devices__0__pci=[]),
    "name a list": snapshot("h100", devices__0__name=["H100"]),
    "host an error": snapshot("h100", host={"error": "psutil: no /proc"}),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_detection_header_and_reports_give_a_verdict(replay, case):
    result = replay(HOSTILE[case], "-m", "facts", reports=True)  # no class: it is detected
    assert "INTERNALERROR" not in result.output, result.describe()
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.describe()
