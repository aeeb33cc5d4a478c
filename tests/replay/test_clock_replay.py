"""Clock ceilings and idle clock events on replayed snapshots: a capped boost clock fails naming
the GPU; a refused read fails closed; each idle reason's message says how to undo it."""

import copy

from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

H100 = synthetic_snapshot(load_spec("h100"), gpus=8)
CEILING = "test_boost_clock_ceiling_at_board_max"


def test_a_capped_boost_clock_fails_naming_the_gpu_and_the_fix(replay):
    snapshot = copy.deepcopy(H100)
    snapshot["devices"][3]["clock_limits"]["sm_customer_boost_max_mhz"] = 1500
    message = replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "clock_ceiling").failed[CEILING]
    assert "GPU 3" in message and "1500 MHz at most, its maximum is 1980 MHz" in message
    assert "GPU 2" not in message and "nvidia-smi -rgc" in message


def test_a_refused_clock_read_fails_closed_and_not_supported_is_not_judged(replay):
    snapshot = copy.deepcopy(H100)
    snapshot["devices"][0]["clock_limits"] = {"error": "NoPermission: Insufficient Permissions"}
    message = replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "clock_ceiling").failed[CEILING]
    assert "Insufficient Permissions" in message
    snapshot["devices"][0]["clock_limits"] = None  # Not Supported: the others are judged
    snapshot["devices"][0]["clock_limits"] = None
    assert replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "clock_ceiling").ret == 0


def test_idle_reasons_say_how_to_undo_them(replay):
    snapshot = copy.deepcopy(H100)
    snapshot["devices"][0]["throttle_reasons"] = ["gpu_idle", "hw_slowdown"]
    snapshot["devices"][1]["throttle_reasons"] = ["sw_power_cap"]
    snapshot["devices"][1]["power"]["limit_w"] = 500.0  # lowered from the default 700 W
    message = replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "throttle_at_idle").failed[
        "test_no_throttle_at_idle"
    ]
    assert "GPU 0" in message and "GPU 1" in message
    assert "reset the GPU (`nvidia-smi -r`)" in message and "nvidia-smi -pl" in message


def test_sw_power_cap_at_the_default_limit_is_the_boards_budget_not_a_fault(replay):
    """An idle GPU reporting SW power cap with its enforced limit at the default (telegraf's
    RTX 3090 capture, 35 W of 350 W at P8): nobody lowered a limit, nothing to undo."""
    snapshot = copy.deepcopy(H100)
    snapshot["devices"][1]["throttle_reasons"] = ["gpu_idle", "sw_power_cap"]
    assert replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "throttle_at_idle").ret == 0
    snapshot["devices"][1]["power"]["limit_w"] = 500.0
    failed = replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "throttle_at_idle").failed
    assert "GPU 1" in failed["test_no_throttle_at_idle"]
