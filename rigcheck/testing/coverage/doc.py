"""python -m rigcheck.testing.coverage.doc [--healthy N] [--per-signature N] [--seed N]

Writes docs/coverage.md: the coverage matrix of every class with a coverage model, and each
campaign's results as JSON under fixtures/coverage/ (rigcheck/testing/coverage)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rigcheck.coverage_cli import count
from rigcheck.layout import ROOT_DIR
from rigcheck.testing.coverage.campaign import Plan, run
from rigcheck.testing.coverage.node import PROFILES
from rigcheck.testing.coverage.report import markdown

INTRO = """# What each tier catches

How much of what stops large training jobs does `rigcheck check CLASS --tier quick` catch on an
idle node, and how often does it fail a healthy one? No other health checker states this. The
numbers below are measured, not claimed: `rigcheck coverage` (rigcheck/testing/coverage) builds
nodes from real `nvidia-smi -q -x` captures (the simulator's machine profiles), varies each GPU's
readings as the capture's own GPUs vary, adds real application Xid lines to some healthy nodes'
logs, injects one published fault signature per faulty node below rigcheck's probes (into the
NVML answers pynvml reads, or as a real kernel-log line the reader parses), and judges every node
in the tier. The causes and their shares are the 419 unexpected interruptions of Llama 3 405B's
pre-training on 16,384 H100s (arXiv:2407.21783, Table 5); each signature names the document
that says what it means (rigcheck/testing/coverage/causes.json).

Read the figures as: of the interruptions whose cause leaves a signature an idle node shows,
the share the tier catches, with a 95% Wilson interval per cause and the share-weighted interval
(the causes' bounds weighted together, a conservative interval); and the false-fail rate on
healthy nodes with its 95% upper bound. Small campaigns give wide intervals: the counts are in
every row.

A detection of 100% says that every signature modelled here is read by a check, not that the
tier catches every fault of a cause: the signatures in causes.json are the contract, and it
grows. The campaign's first run found one that no check read (NVML's GPU recovery action: a GPU
the driver asks to reset or drain passed once its Xid 154 had left the log), now judged by
`test_no_gpu_recovery_action_pending`.

## What no idle check can catch

A third of the interruptions leave nothing on an idle node: software bugs (54), unplanned host
maintenance (32), NCCL watchdog timeouts (7; their cause, if a machine, is another row),
dependencies (2). Silent data corruption (6) shows only in a computation checked against a
reference (the acceptance tier's burn-in). Network switch, cable and NIC faults (42) show as RDMA
ports down or slow, which the quick tier judges only with a fabric file (`--fabric`); this
campaign does not give one yet. SSD, CPU and host memory faults (7) are not read by rigcheck.
Faults that appear only under load or inside a job are for the burn-in and `rigcheck blame`.

## Limits of this campaign

The quick tier only (facts); the standard and acceptance tiers' measurements and burn-in traces
are not injected yet, nor AMD (mi300x) and cpu classes. Healthy variation comes from one real
capture per class (8 GPUs for h100 and b200, 1 for A100 40GB: the only A100 capture the project
holds), so it is narrow. The time per node is rigcheck judging a replayed snapshot on a 2-core
machine; a live run adds the probes' own time.

"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rigcheck.testing.coverage.doc")
    p.add_argument("--healthy", type=count, default=20)
    p.add_argument("--per-signature", type=count, default=3)
    p.add_argument("--seed", type=count, default=1)
    p.add_argument("--out", type=Path, default=Path(ROOT_DIR) / "docs" / "coverage.md")
    args = p.parse_args(argv)
    parts = [INTRO]
    for cls in sorted(PROFILES):
        print(f"campaign: {cls}", file=sys.stderr)
        result = run(Plan(cls, "quick", args.seed, args.healthy, args.per_signature))
        saved = Path(ROOT_DIR) / "fixtures" / "coverage" / f"{cls}-quick.json"
        saved.write_text(json.dumps(result, indent=1) + "\n")
        parts.append(markdown(result))
    command = (
        f"python -m rigcheck.testing.coverage.doc --healthy {args.healthy} "
        f"--per-signature {args.per_signature} --seed {args.seed}"
    )
    parts.append(f"Made with `{command}`; the results: fixtures/coverage/CLASS-quick.json.\n")
    args.out.write_text("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
