"""Cuts a public nvidia-smi telemetry log down to the rows where the GPU was under load, verbatim,
with its source, for tests/coverage/test_real_telemetry.py (the burn-in's floors judged on a real
GPU's readings).

    git -C MIRROR show 90c2039b:cuBLASLt_h100/0831_trace/fp16_half_random.csv > /tmp/log.csv
    python tools/gpu_telemetry.py /tmp/log.csv

MIRROR is github.com/yqg9651/cuda_test. The log is `nvidia-smi --query-gpu=timestamp,
power.draw.instant,clocks.sm -lms 1 --format=csv` (its cuBLASLt_h100/gpu_monitor.sh) taken while
cuBLASLt timed 32 x 8192^3 fp16 GEMMs on random data (0831_trace/fp16_half_random.log). Rows
drawing more than LOADED_W are kept; the GPU idles at 75-80 W in the same log.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "fixtures" / "burnin" / "real" / "h100-pcie-cublaslt-fp16-random.csv"
LOADED_W = 150.0
HEADER = """\
# Rows of github.com/yqg9651/cuda_test cuBLASLt_h100/0831_trace/fp16_half_random.csv at commit
# 90c2039ba9f7ae0159091c3db1708c2b03263762 (2023-08-30, one NVIDIA H100 PCIe: SM clock at most
# 1755 MHz, 350 W class) whose power.draw.instant exceeds 150 W, copied verbatim by
# tools/gpu_telemetry.py; the other rows are the GPU idling between GEMMs (75-80 W).
"""


def loaded_rows(text: str) -> list[str]:
    lines = text.splitlines()
    keep = [lines[0]]
    for line in lines[1:]:
        fields = line.split(", ")
        if len(fields) == 3 and fields[1].endswith(" W") and float(fields[1][:-2]) > LOADED_W:
            keep.append(line)
    return keep


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/gpu_telemetry.py NVIDIA_SMI_LOG.csv", file=sys.stderr)
        return 2
    rows = loaded_rows(Path(argv[0]).read_text())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(HEADER + "\n".join(rows) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(rows) - 1} rows under load")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
