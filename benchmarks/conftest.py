"""Prints, after the run, each benchmark group's exponent over its sizes (see scaling.py).

A benchmark states its size as the `size` parameter; the median time is fitted."""

from __future__ import annotations

from collections import defaultdict

from scaling import exponent


def pytest_terminal_summary(terminalreporter, config):
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    groups: dict[str, list] = defaultdict(list)
    for bench in session.benchmarks:
        size = (bench.params or {}).get("size")
        if size is not None:
            groups[bench.group or bench.name.split("[")[0]].append((size, bench))
    write = terminalreporter.write_line
    write("")
    write("scaling (time ~ size**k, median of rounds; memory: peak Python allocation, or RSS)")
    for group, found in sorted(groups.items()):
        found.sort(key=lambda p: p[0])
        k = exponent([(s, b.stats.median) for s, b in found])
        shown = ", ".join(
            f"{s:,}: {b.stats.median:.3g} s"
            + (f" {b.extra_info['peak_mib']:.1f} MiB" if "peak_mib" in b.extra_info else "")
            + (f" RSS {b.extra_info['peak_rss_mib']} MiB" if "peak_rss_mib" in b.extra_info else "")
            for s, b in found
        )
        write(f"  {group}: k = {k:.2f}  ({shown})" if k is not None else f"  {group}: {shown}")
