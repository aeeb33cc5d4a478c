"""A coverage campaign: healthy nodes and nodes with one fault signature each, judged in a tier;
per cause, how often it is caught (with a 95% interval), by which check, and how often a
healthy node fails."""

from __future__ import annotations

import math
import random
import statistics
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.testing.coverage.acceptance import NOT_MEASURABLE
from rigcheck.testing.coverage.judge import judge
from rigcheck.testing.coverage.measurements import has_measurements, measured_classes
from rigcheck.testing.coverage.model import load_model
from rigcheck.testing.coverage.node import PROFILES, healthy_node, inject

Z95 = 1.959964  # the normal quantile of a two-sided 95% interval


@dataclass(frozen=True)
class Plan:
    cls: str
    tier: str = "quick"
    seed: int = 0
    healthy: int = 10  # healthy nodes judged for the false-fail rate
    per_signature: int = 3  # faulty nodes per signature


def wilson(hits: int, trials: int) -> tuple[float, float]:
    """The Wilson score 95% interval of a proportion (sound at 0 and at n, unlike p +- 2 se)."""
    if trials == 0:
        return (0.0, 1.0)
    p, n, z2 = hits / trials, trials, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def run(plan: Plan, folder: Path | None = None, progress=None) -> dict[str, Any]:
    """The campaign's results as data (rigcheck/testing/coverage/report.py renders them)."""
    if plan.cls not in PROFILES:
        raise ValueError(
            f"no coverage model for class {plan.cls!r}: choose one of {sorted(PROFILES)}"
        )
    if plan.tier != "quick" and not has_measurements(plan.cls):
        raise ValueError(
            f"no measurements for class {plan.cls!r} to replay in the {plan.tier} tier: "
            f"the {plan.tier} tier's campaign runs for {', '.join(measured_classes())}"
        )
    if plan.tier == "acceptance" and plan.cls in NOT_MEASURABLE:
        return not_measurable(plan, NOT_MEASURABLE[plan.cls])
    if folder is None:  # each node's sysfs tree and reports: gone after the campaign (mkdtemp
        # left ~2 MB in $TMPDIR per campaign, also after a Ctrl-C)
        with tempfile.TemporaryDirectory(prefix="rigcheck-coverage-") as scratch:
            return run(plan, Path(scratch), progress)
    rng = random.Random(plan.seed)
    causes, signatures, sources = load_model(PROFILES[plan.cls][0])
    jobs = [("healthy", None)] * plan.healthy
    jobs += [(c.name, s) for c in causes for s in c.signatures for _ in range(plan.per_signature)]
    trials: list[dict[str, Any]] = []
    for i, (cause, signature) in enumerate(jobs):
        node = healthy_node(plan.cls, rng)
        if signature and not _injected(node, plan.tier, signature, signatures[signature], rng):
            trials.append({"cause": cause, "signature": signature, "injected": False,
                           "tier_only": _tier_only(signatures[signature], plan.tier)})  # fmt: skip
            continue
        judged = judge(node, plan.tier, folder / f"node-{i}", rng)
        trials.append({"cause": cause, "signature": signature, "injected": True,
                       "verdict": judged.verdict, "failed": list(judged.failed),
                       "unjudged": list(judged.unjudged), "seconds": round(judged.seconds, 2),
                       "log": node.log_lines})  # fmt: skip
        if progress:
            progress(i + 1, len(jobs))
    return summarise(plan, causes, trials, sources)


def not_measurable(plan: Plan, reason: str) -> dict[str, Any]:
    """The cell of a class and tier that cannot be measured here: every cause unseen, for
    `reason`, and no healthy run."""
    causes, _, sources = load_model(PROFILES[plan.cls][0])
    result = summarise(plan, causes, [], sources)
    for row in result["causes"]:
        row["why_not"] = f"not measurable here: {reason}"
    return {**result, "not_measurable": reason, "seconds_median": 0.0}


def _injected(node, tier: str, name: str, signature: dict, rng: random.Random) -> bool:
    """Inject the signature; one that shows only under load is not injected in the quick tier,
    which loads nothing, and one that shows only in the burn-in only in the acceptance tier
    (a tier is not judged on what it cannot see)."""
    if signature.get("load") and tier == "quick":
        return False
    if signature.get("tier") == "acceptance" and tier != "acceptance":
        return False  # shows only in the burn-in's minutes of load
    return inject(node, name, signature, rng)


def _tier_only(signature: dict, tier: str) -> str | None:
    """Why a signature is not injected in this tier: it shows only in a later one."""
    if signature.get("tier") == "acceptance" and tier != "acceptance":
        return "the acceptance tier's burn-in"
    if signature.get("load") and tier == "quick":
        return "load (the standard tier's measurements)"
    return None


def summarise(plan: Plan, causes, trials: list[dict], sources: dict) -> dict[str, Any]:
    healthy = [t for t in trials if t["cause"] == "healthy"]
    false_fails = sum(t["verdict"] != "pass" for t in healthy)
    rows = [_cause_row(c, [t for t in trials if t["cause"] == c.name]) for c in causes]
    return {
        "class": plan.cls,
        "tier": plan.tier,
        "seed": plan.seed,
        "plan": {"healthy": plan.healthy, "per_signature": plan.per_signature},
        "sources": sources,
        "healthy": {
            "runs": len(healthy),
            "false_fails": false_fails,
            "interval": wilson(false_fails, len(healthy)),
            "failed_checks": dict(Counter(c for t in healthy for c in t["failed"])),
        },
        "causes": rows,
        # measurements the class's replay file has no figure for: not judged in this campaign
        "unjudged": sorted({c for t in trials for c in t.get("unjudged", [])}),
        "weighted": weighted(rows),
        "seconds_median": _median_seconds(trials),
        "trials": trials,
    }


def _median_seconds(trials: list[dict]) -> float:
    return statistics.median([t["seconds"] for t in trials if "seconds" in t] or [0.0])


def _cause_row(cause, trials: list[dict]) -> dict[str, Any]:
    judged = [t for t in trials if t["injected"]]
    caught = sum(t["verdict"] == "fail" for t in judged)
    return {
        "name": cause.name,
        "label": cause.label,
        "share": cause.share,
        "signatures": list(cause.signatures),
        # not injected here: could not be (no real line of it, a board without the feature)...
        "not_injected": sorted(
            {t["signature"] for t in trials if not t["injected"] and not t.get("tier_only")}
        ),
        # ...or shows only in a later tier (load, the burn-in)
        "later_tier": sorted({t["signature"] for t in trials if t.get("tier_only")}),
        "runs": len(judged),
        "caught": caught,
        "detection": caught / len(judged) if judged else 0.0,
        "interval": wilson(caught, len(judged)) if judged else (0.0, 0.0),
        "checks": dict(Counter(c for t in judged for c in t["failed"])),
        "missed": sorted({t["signature"] for t in judged if t["verdict"] != "fail"}),
        "why_not": cause.why_not or _later(trials),
    }


def _later(trials: list[dict]) -> str | None:
    """A cause none of whose signatures this tier can see: which tier sees them."""
    later = {t.get("tier_only") for t in trials}
    if not trials or any(t["injected"] for t in trials) or None in later:
        return None
    shown = ", ".join(sorted({t["signature"] for t in trials}))
    return f"shows only under {' or '.join(sorted(later))}: {shown}"


def weighted(rows: list[dict]) -> dict[str, Any]:
    """Detection weighted by the causes' published shares: over all interruptions, and over the
    causes that leave a signature an idle check can read. The interval weights each cause's
    Wilson bounds (conservative: it treats the causes' errors as moving together)."""

    def over(selected: list[dict]) -> dict[str, Any]:
        total = sum(r["share"] for r in selected)
        if not total:
            return {"detection": 0.0, "interval": (0.0, 0.0), "share": 0}
        point = sum(r["share"] * r["detection"] for r in selected) / total
        low = sum(r["share"] * r["interval"][0] for r in selected) / total
        high = sum(r["share"] * r["interval"][1] for r in selected) / total
        return {"detection": point, "interval": (low, high), "share": total}

    visible = [r for r in rows if r["runs"]]
    return {"all": over(rows), "idle_visible": over(visible)}
