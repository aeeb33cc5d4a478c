"""The human view of the time estimate: one paragraph, its model and its sources stated."""

from rich.console import Console


def _duration(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds:.0f} s"


def _interval(estimate: dict) -> str:
    """The wall time at the fastest and slowest achieved fraction of the published runs."""
    interval = estimate.get("wall_s_interval")
    if not interval:
        return ""
    fast, slow = interval
    return f" ({_duration(fast)} to {_duration(slow)} over the published runs' spread)"


def print_time(report: dict, console: Console | None = None) -> None:
    """Tokens/s, steps and wall time, then the model and the figures it used."""
    estimate = report.get("time")
    if not estimate:
        return
    console = console or Console()
    console.print(
        f"[bold]will it finish[/bold]: {estimate['steps']:,} steps of "
        f"{estimate['tokens_per_step']:,} tokens at {estimate['tokens_per_s']:,.0f} tokens/s "
        f"({estimate['tokens_per_s_per_gpu']:,.0f} per GPU): {_duration(estimate['wall_s'])}"
        + _interval(estimate)
    )
    console.print(
        f"  step {estimate['step_s']:.3f} s (compute {estimate['compute_s']:.3f} s, gradient "
        f"traffic {estimate['communication_s']:.3f} s, overlapped); model: 6N + 12Lqs = "
        f"{estimate['model_flops_per_token']:,} FLOPs/token, "
        f"{estimate['hardware_flops_per_token']:,} run; "
        f"{estimate['mfu_of_matmul']:.0%} of the matmul rate"
    )
    if estimate.get("bubble_fraction"):
        console.print(f"  pipeline bubble: {estimate['bubble_fraction']:.1%} of each step")
    console.print(f"  figures: {estimate['rates']['source']}")
