"""python -m rigcheck.testing.coverage.doc [--healthy N] [--per-signature N] [--seed N]

Writes docs/coverage.md and docs/coverage.html: the coverage matrix of every class with a
coverage model, in each tier modelled for it, and each campaign's results as JSON under
fixtures/coverage/CLASS-TIER.json (rigcheck/testing/coverage)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from rigcheck.coverage_cli import count
from rigcheck.layout import ROOT_DIR
from rigcheck.testing.coverage.campaign import Plan, run
from rigcheck.testing.coverage.measurements import measured_classes
from rigcheck.testing.coverage.node import PROFILES
from rigcheck.testing.coverage.page import page
from rigcheck.testing.coverage.report import interval, markdown, pct

INTRO = """# What each tier catches

How much of what stops large training jobs does `rigcheck check CLASS --tier quick` (or
`standard`, or `acceptance`) catch, and how often does it fail a healthy node? No other health
checker states this. The numbers below are measured, not claimed: `rigcheck coverage`
(rigcheck/testing/coverage) builds nodes, injects one published fault signature per faulty node
below rigcheck's probes, and judges every node in the tier with the packaged suites. The causes
and their shares are the 419 unexpected interruptions of Llama 3 405B's pre-training on 16,384
H100s (arXiv:2407.21783, Table 5); each signature names the document that says what it means
(rigcheck/testing/coverage/causes.json). The same matrix as a page: [coverage.html](coverage.html).

Where the nodes come from:

- **h100, b200, a100_40gb**: real `nvidia-smi -q -x` captures (the NVML simulator's machine
  profiles) read through pynvml over `nvml_sim`; each GPU's readings drawn from the capture's
  own GPUs; real application Xid lines in some healthy nodes' logs. Signatures go into the NVML
  answers or the kernel log as real lines from fixtures/realworld/kernel_log.json.
- **mi300x**: the MI300X platform profile (public `amd-smi` outputs, each value with its source)
  read through the real amdsmi over `amdsmi_sim`; real benign amdgpu lines (application page
  faults, informational resets) in some healthy nodes' logs. Signatures go into libamd_smi's
  answers (xGMI link status, per-block ECC counts, bad pages, hotspot temperature, PCIe width,
  violation status) or the log as real amdgpu lines (hangs, RAS and ACA hardware errors). The
  profile is one device's values, so healthy MI300X nodes vary only in their logs.
- **cpu**: the project's CI machine as recorded by the real probes (fixtures/snapshots/cpu-ci.json),
  replayed as it was: it measures the false-fail rate only. It has no RDMA device, and no fabric
  is expected of it: the network and NIC rows say so.
- **RDMA fabric (h100, b200, a100_40gb, mi300x)**: each node is judged with the `--fabric` file
  a user of that node passes (docs/fabric: dgx-h100, dgx-b200, dgx-a100, azure-nd-mi300x-v5)
  and has a `/sys/class/infiniband` tree read by rigcheck's fabric probe: one InfiniBand NIC per
  GPU on its PCIe switch, each port's counter files those of a real healthy port
  (fixtures/fabric/counters/procfs-healthy.txt; every error counter is 0 there, the traffic and
  mlx5 driver counters vary). Signatures go into that tree (rigcheck/testing/coverage/fabric.py):
  a port down (Polling, Disabled) or INIT (no subnet manager), trained at 2X/1X or at the previous
  lane speed, symbol or receive errors above the counters' limit, an HCA gone from the bus, its
  PCIe link at x8 or a generation down, and in the acceptance tier a link that goes down or
  retrains during the burn-in (the trace's counter samples before and after the load). RoCE
  and EFA fabrics are not modelled yet.
- **standard tier**: each node also replays its timed measurements. A figure is its class's
  level over the median of five repeat times drawn from recorded ones, each over its recording's
  median, so only the relative dispersion is used. cpu draws the CI machine's own repeats
  (fixtures/measurements/cpu-ci-recorded.json `samples_s`, a 2-core VM shared with other jobs).
  GPU classes draw from public recordings of real GPUs (fixtures/measurements/gpu-variation/,
  written by tools/gpu_variation.py from the sources it keeps): each GPU its own offset from the
  spread between the healthy GPUs of one node (8 x A100-SXM4-80GB gpu_burn rates,
  microsoft/superbenchmark; 8 x H100 SXM local copies, NVIDIA/nccl#1264), each repeat from the
  spread between repeats on one GPU (50 + 50 cuBLASLt GEMMs on one H100 PCIe, yqg9651/cuda_test).
  h100 borrows the A100's between-GPU GEMM spread and a100_40gb the H100's copy spread; b200 and
  mi300x take h100's (no recording of theirs was found); variation.json says why for each.
  Levels: cpu's are recorded on the CI machine; h100's are
  fixtures/measurements/h100-synthetic.json (public MAMF figures and one hand-written copy
  figure); a100_40gb's, b200's and mi300x's are the class's own "achievable" figures in
  expected/CLASS.json, each citing the public run it comes from. A figure with no achievable
  level, or of a kind never timed here (host links, attention, the training step), is not
  replayed and is listed as not judged. A GPU that
  throttles only under load (NVML's HW thermal or power-brake slowdown: "reducing the core
  clocks by a factor of 2 or more") has its compute figures' repeats slowed by 2 and healthy
  idle facts; the quick tier cannot see it, and does not count it.
- **acceptance tier**: the standard tier's node plus a burn-in trace, judged by the real reader
  (`--burn-in-trace`). cpu replays the trace recorded on the CI machine
  (fixtures/burnin/cpu-ci.json). No GPU trace has been recorded, and the public GPU telemetry
  found does not stand for a healthy node's burn-in (coverage/acceptance.py says what was searched
  and found): a GPU node's trace is the
  project's synthetic H100 trace (rigcheck/testing/synthetic_trace.py, invented figures) fitted to
  the node (its GPUs, bus ids, clock ceiling, power limit and slowdown temperature as its NVML
  answers them), one sample a second over 180 s. Faults whose onset falls during the run are
  written into it as the recorder would have sampled them: a thermal slowdown or a power brake
  from a moment after the first minute (clocks halved, the reasons NVML gives, the GEMM rate
  falling with it), an Xid 79 mid-run, one GEMM window disagreeing with its reference (silent data
  corruption), one flipped bit in the memory pattern test. The acceptance tier's false-fail rate
  therefore adds nothing measured from real burn-ins: it is the standard tier's plus the synthetic
  trace's. The torchrun collective job is not replayed: the project's collective results are
  synthetic and exist only for 8x H100 and 8x L40S (fixtures/distributed), so a rank that hangs or
  lags in the collective is not measured here, and the collective checks are skipped, as a
  replayed run without `--collectives` skips them.
- **mi300x's burn-in** (acceptance tier): not the H100 trace but one read by rigcheck's AMD
  sampler through the real amdsmi over the simulated libamd_smi (coverage/amd_burnin.py): its
  idle answers, limits and the clock collapse (ROCm/legacy-rocm-build#4414: 59 MHz under full
  load) are public MI300X outputs, its load timeline is synthetic (no MI300X GEMM recording was
  found), and its faults (thermal onset, a power brake, that clock collapse, ECC errors) are
  answered by libamd_smi from their onset.

Read the figures as: of the interruptions whose cause leaves a signature the tier can see, the
share it catches, with a 95% Wilson interval per cause and the share-weighted interval (the
causes' bounds weighted together, a conservative interval); and the false-fail rate on healthy
nodes with its 95% interval. Small campaigns give wide intervals: the counts are in every row.

A detection of 100% says that every signature modelled here is read by a check, not that the
tier catches every fault of a cause: the signatures in causes.json are the contract, and it
grows. Gaps the campaign found and that are now fixed:

- NVML's GPU recovery action: a GPU the driver asks to reset or drain passed once its Xid 154
  had left the log; now judged by `test_no_gpu_recovery_action_pending`.
- The MI300X's violation status: an MI300X held down at idle by a power limit (PVIOL) or a
  thermal one (PROCHOT, socket, voltage regulator, HBM) passed every check, because on MI300
  Series only `amdsmi_get_violation_status` reports it (`throttle_status` is N/A there). The
  AMD probe now reads it (amdsmi from ROCm 6.3 on; not judged before), and
  `test_amd_no_violation_at_idle` fails a GPU whose active flag is set. The campaign missed
  the signature before the fix (tests/coverage/test_gate.py shows the same node passing with
  the old probe and failing now).
- A NIC's degraded PCIe link: a 400 Gb/s NIC whose link trained at x8 of x16, or a generation
  down, passed every check, its port ACTIVE at full rate. The fabric probe now reads each NIC's
  link and its slot's, and `test_rdma_nic_pcie_link` fails a NIC below what both run
  (tests/coverage/test_fabric_causes.py shows the node passing with the old probe).
- A NIC whose firmware died: the ConnectX driver's records (mlx5_core: health compromised,
  a fatal syndrome, a failed recovery, the PCI slot lost, a command timeout) were no rule's, so
  the node passed an idle check. rigcheck/facts/kernel_log/mlx5.py reads them and
  `test_no_nic_faults` fails the node naming the NIC (tests/coverage/test_nic_log_cause.py shows
  the node passing with the mlx5 reader removed).

## What no tier here can catch

A third of the interruptions leave nothing on a node between jobs: software bugs (54),
unplanned host maintenance (32), NCCL watchdog timeouts (7; their cause, if a machine, is
another row), dependencies (2). Silent data corruption (6) shows only in a computation checked
against a reference: the acceptance tier's burn-in.
Network switch, cable and NIC faults (42) are judged against the node's fabric file
(`--fabric`): without one, no tier judges a port. A link that flaps only under traffic shows in
the acceptance tier's burn-in, not at idle (the quick tier sees only the counts it left, which
warn below the failing limit); a switch that flaps between jobs, congestion, a bad route or a
NIC firmware reset the driver recovers from leave nothing on an idle node (their signatures are
in a job: `rigcheck blame`, the collective job). Crusoe's H200 fleet reports InfiniBand in 34% of
its failures but names no signature: they are counted under these two rows, whose shares stay
Llama 3's. SSD, CPU and host memory faults (7) are not read by rigcheck. Faults that appear
only inside a job are for `rigcheck blame`.

## Limits of this campaign

Not modelled yet: the torchrun collective job (see the acceptance tier above), an AMD GPU lost
under load (AMD logs no Xid; the MI300X load is synthetic). Healthy variation
comes from one real capture per class (8 GPUs for h100 and b200, 1 for A100 40GB), so it is
narrow. The time per node is rigcheck judging a replayed snapshot on a 2-core machine shared
with other jobs; a live run adds the probes' and kernels' time.

With the CI VM's CPU repeats as every class's noise (as before the GPU recordings), the
standard tier failed 19 of 60 healthy h100 nodes (seed 1; 95% 21-44%), every one at
test_memory_bandwidth_spread_across_devices: those copy repeats run from 0.90 to 1.14 times their
median, so one of eight GPUs often landed more than the check's 10% under the others. Real
healthy GPUs spread far less: 0.990-1.005 between the GPUs of a node in GEMM, 0.9965-1.0056 in
local copy, 0.969-1.031 between repeats; with them the same campaign fails 0 of 60 (95% up to
6.0%), and neither the spread check (10% under the others) nor the floors (80% of achievable)
can fire on a healthy GPU drawn from these recordings. They are one node or one GPU each: the
spread across a cluster (SC'22, "Not All GPUs Are Created Equal", arXiv 2208.11035: 8% on
average, outliers 1.5x slower than the median; its artifact publishes code, not per-GPU
figures) is not in them. b200
and mi300x replay no copy figure (their specs give no achievable copy level), so that check is
not judged there.

"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rigcheck.testing.coverage.doc")
    p.add_argument("--healthy", type=count, default=20)
    p.add_argument("--per-signature", type=count, default=2)
    p.add_argument("--seed", type=count, default=1)
    p.add_argument("--jobs", type=count, default=1, help="campaigns run at once (processes)")
    p.add_argument("--out", type=Path, default=Path(ROOT_DIR) / "docs" / "coverage.md")
    args = p.parse_args(argv)
    command = (
        f"python -m rigcheck.testing.coverage.doc --healthy {args.healthy} "
        f"--per-signature {args.per_signature} --seed {args.seed} --jobs {args.jobs}"
    )
    started, todo = time.monotonic(), campaigns()
    plans = [Plan(cls, tier, args.seed, args.healthy, args.per_signature) for cls, tier in todo]
    done: dict[tuple[str, str], dict] = {}
    # Each campaign is seeded by its plan alone, so running them at once changes no figure.
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for result in _as_done(pool, plans):
            key = (result["class"], result["tier"])
            print(f"campaign done: {key[0]}, {key[1]} tier", file=sys.stderr)
            saved = Path(ROOT_DIR) / "fixtures" / "coverage" / f"{key[0]}-{key[1]}.json"
            saved.write_text(json.dumps(result, indent=1) + "\n")
            done[key] = result
            # written after each campaign: a run stopped part-way leaves the matrix so far
            results = [done[k] for k in todo if k in done]
            left = [k for k in todo if k not in done]
            _write(args.out, results, command, time.monotonic() - started, left)
    return 0


def _as_done(pool: ProcessPoolExecutor, plans: list[Plan]):
    futures = [pool.submit(run, plan) for plan in plans]
    for future in as_completed(futures):
        yield future.result()


def _write(out: Path, results: list[dict], command: str, seconds: float,
           left: list[tuple[str, str]]) -> None:  # fmt: skip
    made = (f"Made with `{command}` in {seconds / 60:.0f} min on the project's shared 2-core "
            "machine; the results: fixtures/coverage/CLASS-TIER.json.")  # fmt: skip
    if left:
        made += " NOT FINISHED: still to run: " + ", ".join(f"{c} {t}" for c, t in left) + "."
    out.write_text("\n".join([INTRO, summary(results), *map(markdown, results), made + "\n"]))
    out.with_suffix(".html").write_text(page(results, "What each rigcheck tier catches"))


def campaigns() -> list[tuple[str, str]]:
    """Every class's quick tier, then the standard tier of each class with measurements."""
    tiers = [("quick", sorted(PROFILES)), ("standard", measured_classes()),
             ("acceptance", sorted(PROFILES))]  # fmt: skip
    return [(c, tier) for tier, classes in tiers for c in classes]


def summary(results: list[dict]) -> str:
    """One row per campaign: detection of what the tier can see, and false fails."""
    lines = ["## Summary", "",
             "| class | tier | caught (share-weighted) | 95% interval | healthy nodes failed "
             "| 95% interval |", "|---|---|---|---|---|---|"]  # fmt: skip
    for r in results:
        if r.get("not_measurable"):
            lines.append(f"| {r['class']} | {r['tier']} | not measurable here | - | - | - |")
            continue
        seen, healthy = r["weighted"]["idle_visible"], r["healthy"]
        caught = f"{pct(seen['detection'])} of {seen['share']}" if seen["share"] else "nothing seen"
        span = interval(seen["interval"]) if seen["share"] else "-"
        lines.append(
            f"| {r['class']} | {r['tier']} | {caught} | {span} "
            f"| {healthy['false_fails']}/{healthy['runs']} | {interval(healthy['interval'])} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
