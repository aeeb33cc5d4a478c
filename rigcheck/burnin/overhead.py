"""What the telemetry costs the load: GEMM throughput with and without the sampler running.

    python -m rigcheck.burnin.overhead --seconds 10 --rounds 4 [--device cuda:0]

Rounds alternate (off, on, off, on, ...) so drift on a busy host hits both alike; each round's
figure is the median of its 1 s windows. Also prints the sampler's own busy time per tick, the
cost it puts on the host whatever the neighbours do. Not part of CI: a 2-core shared machine is
too noisy for a sub-percent gate; run it on the machine you care about and note the figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from rigcheck.burnin.gemm import gemm_phase
from rigcheck.burnin.sampler import INTERVAL_S, Sampler


def _readers(torch, device):
    if device.type == "cuda":
        import pynvml

        from rigcheck.burnin.sampler import nvml_reader

        pynvml.nvmlInit()
        return [nvml_reader(pynvml, pynvml.nvmlDeviceGetHandleByIndex(device.index or 0))]
    from rigcheck.burnin.sampler import host_reader

    return [host_reader()[0]]


def measure(torch, device, precision: str, seconds: float, rounds: int) -> dict:
    readers, off, on, busy = _readers(torch, device), [], [], []
    for k in range(2 * rounds):
        t0 = time.monotonic()
        if k % 2:
            with Sampler(readers, t0, INTERVAL_S) as s:
                w = gemm_phase(torch, device, precision, t0, t0 + seconds)
            busy.append(s.busy_s / max(1, len(s.columns[0]["t_s"])))
            on.append(statistics.median(w["tflops"]))
        else:
            off.append(
                statistics.median(gemm_phase(torch, device, precision, t0, t0 + seconds)["tflops"])
            )
    return {"off": off, "on": on, "sampler_s_per_tick": statistics.median(busy)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--rounds", type=int, default=4)
    args = p.parse_args(argv)
    import torch

    r = measure(torch, torch.device(args.device), args.precision, args.seconds, args.rounds)
    off, on = statistics.median(r["off"]), statistics.median(r["on"])
    tick = r["sampler_s_per_tick"]
    print(
        f"without telemetry: {off:.4f} TFLOP/s (rounds {', '.join(f'{v:.4f}' for v in r['off'])})"
    )
    print(f"with telemetry:    {on:.4f} TFLOP/s (rounds {', '.join(f'{v:.4f}' for v in r['on'])})")
    print(
        f"difference: {on / off - 1:+.2%} (median of rounds); round-to-round spread without "
        f"telemetry {(max(r['off']) - min(r['off'])) / off:.1%}"
    )
    print(
        f"sampler: {tick * 1e3:.2f} ms per tick every {INTERVAL_S:g} s = "
        f"{tick / INTERVAL_S:.2%} of one core"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
