"""The human view of a fit: a table of the parts, in bytes, GiB and GB, and the verdict."""

from rich.console import Console
from rich.table import Table

from rigcheck.memory.units import format_bytes, to_gb, to_gib

_PARTS = (
    ("weights_bytes", "weights"),
    ("grads_bytes", "gradients"),
    ("master_bytes", "fp32 master weights"),
    ("optimizer_bytes", "optimizer state"),
    ("activations_bytes", "activations"),
    ("kv_cache_bytes", "KV cache"),
    ("working_bytes", "gathered layers / 16-bit copies / DDP buckets"),
    ("overhead_bytes", "CUDA context + allocator (--overhead)"),
)


def _row(table: Table, label: str, n_bytes: int, style: str = "") -> None:
    table.add_row(
        label, f"{n_bytes:,}", f"{to_gib(n_bytes):.2f}", f"{to_gb(n_bytes):.2f}", style=style
    )


def parts_table(report: dict) -> Table:
    """Per-GPU bytes of each part, the total and the device."""
    title = f"{report['params']:,} parameters, {report['trainable_params']:,} trainable; per GPU"
    table = Table(title=title)
    for name, justify in (("part", "left"), ("bytes", "right"), ("GiB", "right"), ("GB", "right")):
        table.add_column(name, justify=justify)
    for key, label in _PARTS:
        _row(table, label, report[key])
    _row(table, "total", report["total_bytes"], style="bold")
    _row(table, "device", report["device_bytes"])
    if report.get("usable_bytes", report["device_bytes"]) != report["device_bytes"]:
        _row(table, "usable (--gpu-memory-utilization)", report["usable_bytes"])
    return table


def verdict(report: dict) -> str:
    """One line: fits or not, and by how much."""
    headroom = report["headroom_bytes"]
    if report["fits"]:
        return f"[green]fits[/green]: {format_bytes(headroom)} headroom"
    return f"[red]does not fit[/red]: {format_bytes(-headroom)} short"


def sources(report: dict) -> str:
    """How each figure was obtained: traced on transformers' meta-device model, or formula."""
    line = f"parameters: {report['params_source']}; activations: {report['activations_source']}"
    traced = report.get("trace")
    if traced:
        parts = ", ".join(f"{k} {v:,}" for k, v in traced["parts"].items() if v)
        line += f" ({traced['model_class']} on meta: {parts})"
    return line


def print_table(report: dict, console: Console | None = None) -> None:
    """Print the table, the notes that qualify it, and the verdict."""
    console = console or Console()
    console.print(parts_table(report))
    console.print(f"framework: {report.get('framework', '?')}; layout: {report['convention']}")
    if report.get("active_params", report["params"]) != report["params"]:
        console.print(
            f"mixture of experts: {report['active_params']:,} parameters active per token"
        )
    console.print(sources(report))
    if not report["activations_modelled"]:
        why = report.get("trace", {}).get("activations_not_traced")
        console.print(
            f"note: activations not modelled: {why or '--params gives no shapes; use --model'}"
        )
    if report["host_bytes"]:
        console.print(
            f"note: offloaded to host memory per rank: {format_bytes(report['host_bytes'])}"
        )
    console.print(verdict(report))
