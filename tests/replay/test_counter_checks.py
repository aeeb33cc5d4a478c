"""The counter and kernel-log checks on replayed snapshots: application Xids are reported, not
failed; a counter of the wrong type or a placeholder fails closed, naming the fact."""

import copy
import json
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
H100 = json.loads((SNAPSHOTS / "h100.json").read_text())
APP_XID = {"t_s": 50.0, "bus_id": "0000:18:00.0", "code": 31, "pid": 77, "text": "MMU Fault"}


def test_application_xids_are_reported_not_failed(replay):
    snapshot = copy.deepcopy(H100)
    snapshot["kernel_log"].update(xid_events=[APP_XID], xid_count=1)
    result = replay(snapshot, "-m", "h100", "-k", "xid", "-W", "default")
    assert result.ret == 0, result.describe()
    assert "Xid events that are no machine fault: Xid 31" in result.output


def test_application_xids_are_named_apart_when_a_fault_fails(replay):
    snapshot = copy.deepcopy(H100)
    fault = dict(APP_XID, code=95, text="Uncontained ECC error")
    snapshot["kernel_log"].update(xid_events=[APP_XID, fault], xid_count=2)
    result = replay(snapshot, "-m", "h100", "-k", "xid")
    message = result.failed["test_no_machine_fault_xids"]
    assert "Xid 95 x1 on GPU 0 (0000:18:00.0): Uncontained memory error" in message
    assert (
        "no machine fault and not judged: Xid 31 x1 on GPU 0 (0000:18:00.0) (application)"
        in message
    )


def test_an_xid_on_a_bus_no_gpu_answers_is_still_a_fault(replay):
    snapshot = copy.deepcopy(H100)
    lost = dict(APP_XID, code=79, bus_id="0000:db:00.0", text="GPU has fallen off the bus.")
    snapshot["kernel_log"].update(xid_events=[lost], xid_count=1)
    result = replay(snapshot, "-m", "h100", "-k", "xid")
    assert "PCI 0000:db:00.0 (no GPU NVML sees)" in result.failed["test_no_machine_fault_xids"]


@pytest.mark.parametrize("placeholder", ["N/A", "[Not Supported]", True, -1, 2.5, {"x": 1}])
def test_a_counter_that_is_not_a_count_fails_closed(replay, placeholder):
    snapshot = copy.deepcopy(H100)
    snapshot["devices"][0]["pcie_replays"] = placeholder
    result = replay(snapshot, "-m", "h100", "-k", "pcie_replays")
    assert set(result.failed) == {"test_pcie_replays_within_limit"}, result.describe()
    assert "cannot judge" in result.failed["test_pcie_replays_within_limit"]


def test_a_class_without_the_limit_fails_closed(replay, tmp_path, monkeypatch):
    """A spec with no health_limits cannot pass a counter check by having nothing to compare."""
    spec_dir = tmp_path / "expected"
    spec_dir.mkdir()
    for path in (SNAPSHOTS.parents[1] / "expected").glob("*.json"):
        data = json.loads(path.read_text())
        data.pop("health_limits", None)
        (spec_dir / path.name).write_text(json.dumps(data))
    monkeypatch.setenv("RIGCHECK_EXPECTED_DIR", str(spec_dir))
    result = replay(H100, "-m", "h100", "-k", "pcie_replays")
    assert "has no health_limits.pcie_replays_max" in result.failed.get(
        "test_pcie_replays_within_limit", ""
    ), result.describe()


def test_iommu_passthrough_by_its_generic_flag_passes(replay):
    """iommu.passthrough=1 is iommu=pt by another name: the IOMMU leaves GPU DMA untranslated."""
    from rigcheck.spec import load_spec
    from rigcheck.testing.synthetic import synthetic_snapshot

    snapshot = synthetic_snapshot(load_spec("h100"), gpus=8)
    iommu = {"groups": 120, "cmdline": ["intel_iommu=on", "iommu.passthrough=1"]}
    snapshot["host_limits"]["iommu"] = iommu
    result = replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "iommu")
    assert result.ret == 0 and "1 passed" in result.output, result.describe()
    snapshot["host_limits"]["iommu"] = dict(iommu, cmdline=["intel_iommu=on"])
    result = replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "iommu")
    assert "test_iommu_not_translating_p2p" in result.failed, result.describe()
