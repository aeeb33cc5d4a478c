"""A campaign's results for a person: the matrix as Markdown (docs/coverage.md) and a summary."""

from __future__ import annotations

from typing import Any

SEES = {
    "quick": "an idle check can see",
    "standard": "the tier's checks and measurements can see",
    "acceptance": "the tier's checks, measurements and burn-in can see",
}


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def interval(pair) -> str:
    low, high = pair
    return f"{pct(low)}-{pct(high)}"


def headline(result: dict[str, Any]) -> str:
    """One sentence: what the tier catches of the published interruptions, and how often it
    fails a healthy node."""
    if result.get("not_measurable"):
        return (
            f"{result['tier']} tier on {result['class']}: not measurable here: "
            f"{result['not_measurable']}."
        )
    seen = result["weighted"]["idle_visible"]
    every = result["weighted"]["all"]
    healthy = result["healthy"]
    runs = healthy["runs"]
    low, high = healthy["interval"]
    caught = (
        f"catches {pct(seen['detection'])} (95% {interval(seen['interval'])}) of the "
        f"Llama-3-style interruptions {SEES[result['tier']]} ({seen['share']} of 419), "
        f"{pct(every['detection'])} of all 419"
        if seen["share"]
        else "sees no signature of the Llama-3-style interruptions (each cause's reason below)"
    )
    return (
        f"{result['tier']} tier on {result['class']}: {caught}; false-fails "
        f"{healthy['false_fails']} of {runs} healthy runs (95% up to {high * 10000:.0f} in 10,000)"
        f"{'' if low == 0 else f', at least {low * 10000:.0f} in 10,000'}."
    )


def markdown(result: dict[str, Any]) -> str:
    if result.get("not_measurable"):  # one line, not a table of the same reason
        return f"### {result['class']}, {result['tier']} tier\n\n{headline(result)}\n"
    lines = [
        f"### {result['class']}, {result['tier']} tier",
        "",
        headline(result),
        "",
        "| cause | share | caught | 95% interval | check that fired | missed signatures |",
        "|---|---|---|---|---|---|",
    ]
    for row in result["causes"]:
        if not row["runs"]:
            why = row["why_not"] or "no signature could be injected: " + ", ".join(
                row["not_injected"]
            )
            lines.append(f"| {row['label']} | {row['share']} | 0 (not seen) | - | - | {why} |")
            continue
        checks = ", ".join(f"`{c}` {n}" for c, n in sorted(row["checks"].items()))
        missed = ", ".join(row["missed"]) or "-"
        if row["not_injected"]:  # e.g. no real log line of that event in the corpus yet
            missed += "; not injected: " + ", ".join(row["not_injected"])
        if row.get("later_tier"):
            missed += "; seen only in a later tier: " + ", ".join(row["later_tier"])
        lines.append(
            f"| {row['label']} | {row['share']} | {row['caught']}/{row['runs']} "
            f"| {interval(row['interval'])} | {checks or '-'} | {missed} |"
        )
    if result.get("unjudged"):
        lines += ["", "Not judged (no figure of the class to replay): " + ", ".join(
            f"`{key}`" for key in result["unjudged"]) + "."]  # fmt: skip
    plan = result["plan"]
    lines += [
        "",
        f"{plan['healthy']} healthy nodes and {plan['per_signature']} per signature, seed "
        f"{result['seed']}; median judging time per node {result['seconds_median']:.1f} s "
        "(replayed facts; a live run adds the probes' time).",
        "",
    ]
    return "\n".join(lines)
