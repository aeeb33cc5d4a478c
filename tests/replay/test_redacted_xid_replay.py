"""A snapshot whose kernel log held an Xid with a redacted address (`PCI:...`, issue 36: kept
with no GPU named) replays and fails naming the line, instead of being refused as an invalid
snapshot (found by the coverage campaign, issue 40: facts.schema.json still wanted a string)."""

from __future__ import annotations

import pytest

from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot


def test_a_redacted_xid_is_judged_not_refused(replay):
    snapshot = synthetic_snapshot(load_spec("h100"), gpus=2)
    event = {"t_s": 7.25, "bus_id": None, "code": 79, "pid": None,
             "text": "GPU has fallen off the bus"}  # fmt: skip
    snapshot["kernel_log"].update(xid_count=1, xid_events=[event])
    result = replay(snapshot, "-m", "h100", "--gpus", "2", "-k", "machine_fault_xids")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.describe()
    assert "Xid 79" in result.failed["test_no_machine_fault_xids"], result.describe()
