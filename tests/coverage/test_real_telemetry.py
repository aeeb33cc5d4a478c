"""The burn-in's floors judged on a real GPU's readings under load, not the synthetic trace's: an
H100 PCIe's SM clock and power while cuBLASLt ran fp16 GEMMs on random data
(fixtures/burnin/real/, cut from a public nvidia-smi log by tools/gpu_telemetry.py). A floor
tightened past what this healthy GPU sustained fails here."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from rigcheck.burnin import judge as burn
from rigcheck.burnin.limits import Limits
from rigcheck.spec import load_spec

LOG = (
    Path(__file__).resolve().parents[2] / "fixtures/burnin/real/h100-pcie-cublaslt-fp16-random.csv"
)


def _trace() -> dict:
    """The loaded rows as one device of a burn-in trace (only the columns the log has)."""
    lines = [line for line in LOG.read_text().splitlines() if not line.startswith("#")]
    rows = [line.split(", ") for line in lines[1:]]
    stamps = [datetime.strptime(r[0], "%Y/%m/%d %H:%M:%S.%f").timestamp() for r in rows]
    t = [round(s - stamps[0], 3) for s in stamps]
    samples = {"t_s": t, "power_w": [float(r[1].removesuffix(" W")) for r in rows],
               "clock_mhz": [float(r[2].removesuffix(" MHz")) for r in rows]}  # fmt: skip
    device = {"id": "gpu0", "index": 0, "name": "NVIDIA H100 PCIe", "samples": samples,
              "limits": {"clock_max_mhz": 1755, "power_limit_w": 350}}  # fmt: skip
    return {"phases": [{"name": "gemm", "start_s": 0.0, "end_s": t[-1]}], "devices": [device]}


def test_a_real_h100_pcie_under_gemm_load_clears_the_clock_and_power_floors():
    trace, limits = _trace(), Limits(load_spec("h100_pcie"))
    assert len(trace["devices"][0]["samples"]["t_s"]) == 599
    assert burn.clock_floor(trace, limits) == []  # median 1,680 MHz, floor 60% of 1,755
    assert burn.power(trace, limits) == []  # 90th percentile 339 W, floor 75% of 350 W


def test_the_floors_would_fail_it_if_tightened_past_what_it_sustained():
    trace, spec = _trace(), load_spec("h100_pcie")
    spec.data["burn_in"]["clock_floor_fraction"]["value"] = 0.97  # above its 0.957 median
    spec.data["burn_in"]["power_fraction_of_tdp"]["value"] = 0.98  # above its 0.97 p90
    limits = Limits(spec)
    (clock,) = burn.clock_floor(trace, limits)
    (power,) = burn.power(trace, limits)
    assert "1,680 MHz median under load" in clock and "339 W" in power
