"""test_no_gpu_recovery_action_pending on replayed snapshots: it names the GPU and what the
driver asks, and skips where the driver does not answer (before R565). The read itself:
tests/realnvml/test_recovery_action.py."""

from __future__ import annotations

from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

CHECK = "test_no_gpu_recovery_action_pending"


def _replay(replay, action):
    snapshot = synthetic_snapshot(load_spec("h100"), gpus=2)
    for device in snapshot["devices"]:
        device["recovery_action"] = action
    snapshot["devices"][1]["recovery_action"] = "node_reboot" if action == "none" else action
    return replay(snapshot, "-m", "h100", "--gpus", "2", "-k", "recovery_action")


def test_the_check_names_the_gpu_and_what_the_driver_asks(replay):
    result = _replay(replay, "none")
    message = result.failed[CHECK]
    assert (
        "the driver asks for recovery before these GPUs are used: GPU 1 (0000:2a:00.0): "
        "node_reboot. node_reboot: reboot the node." in message
    ), message
    assert "GPU 0" not in message, message


def test_the_check_skips_where_the_driver_does_not_answer(replay):
    result = _replay(replay, None)
    assert not result.failed and "1 skipped" in result.output, result.describe()
