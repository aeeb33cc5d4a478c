"""python -m rigcheck.testing.coverage --class h100 [--tier quick|standard] [--seed N] [--healthy N]
[--per-signature N] [--json FILE] [--markdown FILE] [--html FILE] [--baseline FILE]

Runs a coverage campaign (rigcheck/testing/coverage/campaign.py) and prints, per published
cause, how often the tier catches it; with --baseline, exits 1 naming each cause whose detection
fell or a false-fail rate that rose against a saved result (the CI gate)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rigcheck.coverage_cli import baseline_problem, parser
from rigcheck.testing.coverage.campaign import Plan, run
from rigcheck.testing.coverage.gate import regressions
from rigcheck.testing.coverage.measurements import has_measurements, measured_classes
from rigcheck.testing.coverage.node import PROFILES
from rigcheck.testing.coverage.page import page
from rigcheck.testing.coverage.report import headline, markdown


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.cls not in PROFILES:
        known = ", ".join(sorted(PROFILES))
        print(f"rigcheck coverage: no coverage model for class {args.cls!r}: choose {known}",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.tier != "quick" and not has_measurements(args.cls):
        known = ", ".join(measured_classes())
        print(f"rigcheck coverage: no measurements of class {args.cls!r} to replay in the "
              f"{args.tier} tier: choose {known}, or --tier quick", file=sys.stderr)  # fmt: skip
        return 2
    baseline = _read_baseline(args.baseline) if args.baseline else None
    plan = Plan(args.cls, args.tier, args.seed, args.healthy, args.per_signature)

    def progress(done: int, total: int) -> None:
        print(f"\rjudged {done}/{total} nodes", end="", file=sys.stderr, flush=True)

    result = run(plan, progress=progress)
    print(file=sys.stderr)
    print(markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(result))
    if args.html:
        args.html.write_text(page([result]))
    if baseline is None:
        return 0
    found = regressions(baseline, result)
    for line in found:
        print(f"coverage fell: {line}", file=sys.stderr)
    print(headline(result))
    return 1 if found else 0


def _read_baseline(path: Path) -> dict:
    problem = baseline_problem(path)
    if problem:  # bad input: 2, not the gate's 1 ("coverage fell")
        print(f"rigcheck coverage: {problem}", file=sys.stderr)
        raise SystemExit(2)
    return json.loads(path.read_text())


if __name__ == "__main__":
    sys.exit(main())
