"""The human view of the advice: what would fit, one line each, with the options to give."""

from rich.console import Console

from rigcheck.memory.units import format_bytes


def _largest_lines(report: dict) -> list[str]:
    advice, job = report["advice"], report["job"]
    what = "concurrent sequences" if job.get("inference") else "micro-batch per GPU"
    batch, seq = advice["largest_batch"], advice["largest_seq"]
    lines = [
        f"largest {what} that fits at --seq {report['seq']}: {batch}"
        if batch
        else f"no {what} fits at --seq {report['seq']}",
        f"longest --seq that fits at --batch {report['batch']}: {seq}"
        if seq
        else f"no --seq fits at --batch {report['batch']}",
    ]
    return lines


def _smallest_lines(advice: dict) -> list[str]:
    lines = []
    if advice["smallest_gpus"] is not None:
        lines.append(f"fewest GPUs that fit (data parallel): --gpus {advice['smallest_gpus']}")
    if advice["smallest_tp"] is not None:
        tp, gpus = advice["smallest_tp"], advice["smallest_tp_gpus"]
        lines.append(f"smallest tensor-parallel size that fits: --tp {tp} --gpus {gpus}")
    if advice["smallest_zero"] is not None:
        lines.append(f"lowest ZeRO stage that fits: --zero {advice['smallest_zero']}")
    return lines


def _lever_line(lever: dict) -> str:
    verdict = "fits" if lever["fits"] else "still short"
    saved = lever["saved_bytes"]
    change = f"saves {format_bytes(saved)}" if saved >= 0 else f"costs {format_bytes(-saved)}"
    return f"{lever['change']}: {change} -> {format_bytes(lever['total_bytes'])}, {verdict}"


def capacity_line(capacity: dict) -> str:
    """vLLM's startup figures: KV cache tokens and the concurrency at the request length."""
    return (
        f"vLLM {capacity['vllm_version']} KV cache: "
        f"{format_bytes(capacity['kv_bytes_available'])} = "
        f"{capacity['kv_tokens']:,} tokens; maximum concurrency for "
        f"{capacity['tokens_per_request']:,} tokens per request: {capacity['max_concurrency']}x"
    )


def print_advice(report: dict, console: Console | None = None) -> None:
    """What fits, when the job does not; vLLM's capacity view for inference either way."""
    console = console or Console()
    advice = report.get("advice")
    if not advice:
        return
    if "kv_capacity" in advice:
        console.print(capacity_line(advice["kv_capacity"]))
    if report["fits"]:
        return
    console.print("[bold]what would fit[/bold]")
    for line in _largest_lines(report) + _smallest_lines(advice):
        console.print(f"  {line}")
    for lever in advice["levers"]:
        console.print(f"  {_lever_line(lever)}")
