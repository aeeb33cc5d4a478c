"""Grace-Blackwell trays (GB200/GB300 NVL72): can this tray share GPU memory with its NVLink
domain? Only for classes whose spec expects an IMEX channel (rigcheck/facts/nvidia/imex.py)."""

from __future__ import annotations

import pytest

from rigcheck.require import expected, require

pytestmark = pytest.mark.facts

IMEX_GUIDE = "https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/imexchannels.html"


def test_imex_channel_present(spec, facts):
    expected(spec, "imex_channel")
    imex = require(facts, "host_limits.imex")
    if not isinstance(imex, dict) or not isinstance(imex.get("channels"), list):
        problem = f"cannot check: host_limits.imex is {imex!r}, not a channel list"
        pytest.fail(problem, pytrace=False)
    where = "/dev/nvidia-caps-imex-channels"
    found = "the folder does not exist" if not imex.get("channel_dir") else "it holds no channel"
    assert imex["channels"], (
        f"no IMEX channel on this {spec.name} tray: {where}/channelN expected, {found}. Without "
        "one, CUDA cannot import memory another tray exports, and multi-node NVLink jobs fail "
        "(cuMemImportFromShareableHandle). Load the driver with NVreg_CreateImexChannel0=1 or "
        f"create channel0 with mknod, and check `systemctl status nvidia-imex` ({IMEX_GUIDE})."
    )
