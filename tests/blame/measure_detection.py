"""Detection figures of `rigcheck blame` on real torchrun jobs (gloo, CPU), run by hand once:

    python tests/blame/measure_detection.py --trials 40 --hangs 10 --out /tmp/blame-figures

Slowed: one launch of NPROC ranks running TRIALS jobs in a row, trial t slowing rank t % NPROC
by --slow-by of its work; hit when blame names that rank (and so its host). Clean: the same with
no rank slowed; a miss is any rank named. With --competitor the work is CPU-bound, each rank is
pinned to core rank % cores, and the slowed rank shares its core with a busy process instead
(host contention). Hung: HANGS launches, each stopping one rank (SIGSTOP, rotating) at step 5;
hit when blame names it. With --inspector each rank also writes its all-reduce times in NCCL
Inspector's layout, and the Inspector reader alone is scored the same way (inspector_*).
"""

import argparse
import json
import sys
from pathlib import Path

from live_job import run_job

from rigcheck.blame.inspector import late_ranks, read_collectives
from rigcheck.blame.suspects import find_suspect, read_job


def named(job_dir: Path):
    suspect = find_suspect(read_job(job_dir))
    return None if suspect is None else (suspect.kind, suspect.ranks[:1], suspect.host)


def late(job_dir: Path):
    found = late_ranks(read_collectives(job_dir / "nccl_inspector"))
    return None if not found else ("slow", [found[0].rank], found[0].host)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--hangs", type=int, default=10)
    parser.add_argument("--slow-by", type=float, default=0.3)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--nproc", type=int, default=3)
    parser.add_argument("--work-s", type=float, default=0.02)
    parser.add_argument(
        "--competitor",
        action="store_true",
        help="CPU work, a busy process on the slowed rank's core",
    )
    parser.add_argument("--inspector", action="store_true", help="also score the Inspector reader")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    n = args.nproc
    common = [f"--trials={args.trials}", f"--steps={args.steps}", f"--work-s={args.work_s}"]
    common += ["--work=cpu", "--competitor"] if args.competitor else []
    common += ["--inspector"] if args.inspector else []
    rc = run_job(args.out / "slowed", n, *common, "--slow-rank=rotate",
                 f"--slow-by={args.slow_by}", timeout_s=1800)  # fmt: skip
    assert rc == 0, rc
    slowed = [named(args.out / "slowed" / f"trial{t:03d}") for t in range(args.trials)]
    hits = sum(s == ("slow", [t % n], f"node{t % n:02d}") for t, s in enumerate(slowed))
    assert run_job(args.out / "clean", n, *common, timeout_s=1800) == 0
    clean = [named(args.out / "clean" / f"trial{t:03d}") for t in range(args.trials)]
    hung = []
    for h in range(args.hangs):
        folder = args.out / f"hung{h:02d}"
        run_job(folder, n, f"--stop-rank={h % n}", "--stop-at=5", "--steps=20", timeout_s=300)
        hung.append((h % n, named(folder)))
    figures = {}
    if args.inspector:
        by_tool = [late(args.out / "slowed" / f"trial{t:03d}") for t in range(args.trials)]
        quiet = [late(args.out / "clean" / f"trial{t:03d}") for t in range(args.trials)]
        figures["inspector_slowed_named"] = (
            f"{sum(s == ('slow', [t % n], f'node{t % n:02d}') for t, s in enumerate(by_tool))}"
            f"/{args.trials}"
        )
        figures["inspector_clean_blamed"] = f"{sum(q is not None for q in quiet)}/{args.trials}"
    figures |= {
        "slowed_named": f"{hits}/{args.trials}",
        "slow_by": args.slow_by,
        "clean_blamed": f"{sum(c is not None for c in clean)}/{args.trials}",
        "hung_named": f"{sum(n == ('hung', [r], f'node{r:02d}') for r, n in hung)}/{args.hangs}",
        "misses": {
            "slowed": [
                (t, s) for t, s in enumerate(slowed) if s != ("slow", [t % n], f"node{t % n:02d}")
            ],
            "clean": [(t, c) for t, c in enumerate(clean) if c is not None],
            "hung": [(r, n) for r, n in hung if n != ("hung", [r], f"node{r:02d}")],
        },
        "command": " ".join(sys.argv),
    }
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
