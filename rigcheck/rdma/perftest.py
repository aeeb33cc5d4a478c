"""perftest (linux-rdma/perftest; Debian's perftest package): the command lines rigcheck runs,
and their outputs read back, as text or as --out_json files.

Formats from perftest's src/perftest_parameters.h: the bandwidth table's header names its unit
(`BW average[Gb/sec]` with --report_gbits, else `[MB/sec]`, since perftest 4.5 `[MiB/sec]`, both
2^20 bytes: `format_factor = 0x100000`); the latency table's columns are t_min, t_max,
t_typical (the median), t_avg, t_stdev, 99% and 99.9% percentiles, in microseconds. With
--out_json perftest writes {"test_info": {...}, "results": {...}} to --out_json_file.
"""

from __future__ import annotations

import json
import re
from typing import Any

MIB_PER_S_IN_GBPS = 2**20 * 8 / 1e9
# Layouts read (perftest_parameters.h and its history): RESULT_FMT(_G) "#bytes #iterations BW
# peak BW average MsgRate" (5 columns), the per-port variants (more columns after those 5),
# RESULT_FMT_QOS with a "#sl" column after #bytes, and perftest 1.x's 4 columns (no MsgRate).
BW_HEADER = re.compile(r"#bytes\s+(?:#sl\s+)?#iterations\s+BW peak\[(Gb/sec|MB/sec|MiB/sec)\]")
LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\]")
NUMBER = r"[-+]?\d+(?:\.\d+)?"
ROW = re.compile(rf"^\s*(\d+)\s+(\d+)(?:\s+((?:{NUMBER}\s+)*{NUMBER}))?\s*$")
INFO = re.compile(r"(?<![\w-])(Device|Link type|Mtu|GID index)\s*:\s*(\S+)")
LAT_COLUMNS = ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p99_9")


class PerftestOutputError(ValueError):
    """perftest's output has no result table rigcheck can read."""


def _info(text: str) -> dict[str, str]:
    """Device, link type, MTU and GID index from the header block (both sides print it)."""
    found: dict[str, str] = {}
    for m in INFO.finditer(text):
        found.setdefault(m.group(1), m.group(2))
    return {
        "device": found.get("Device"),
        "link_type": found.get("Link type"),
        "mtu": int(found["Mtu"].split("[")[0]) if "Mtu" in found else None,
    }


def _rows(text: str, header: re.Pattern[str]) -> tuple[str, list[list[float]], str]:
    """The unit, the rows of the last table, and its last row's line (for saying what is wrong);
    a table with a "#sl" column (RESULT_FMT_QOS) has it dropped, so every row starts with
    bytes, iterations."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if header.search(line)]
    if not starts:
        raise PerftestOutputError("no result table in perftest's output (did it connect?)")
    found = header.search(lines[starts[-1]])
    unit = found.group(1) if header.groups else ""
    qos = "#sl" in found.group(0)
    rows, last = [], ""
    for line in lines[starts[-1] + 1 :]:
        m = ROW.match(line)
        if m:
            row = [float(m.group(1)), float(m.group(2)), *map(float, (m.group(3) or "").split())]
            rows.append(row[:1] + row[2:] if qos else row)
            last = line.strip()
        elif line.startswith("-"):
            break
    if not rows:
        raise PerftestOutputError("perftest printed its table header but no result row")
    return unit, rows, last


def parse_bw_text(text: str) -> dict[str, Any]:
    """The last table of an ib_*_bw run: its last row (the only one without -a), in Gb/s."""
    unit, rows, line = _rows(text, BW_HEADER)
    if len(rows[-1]) < 4:
        raise PerftestOutputError(
            f"bandwidth row {line!r} has {len(rows[-1])} columns, expected bytes, iterations, "
            "BW peak, BW average (and MsgRate)"
        )
    size, iterations, peak, average = rows[-1][:4]
    rate = rows[-1][4] if len(rows[-1]) > 4 else None  # perftest 1.x prints no MsgRate
    scale = 1.0 if unit == "Gb/sec" else MIB_PER_S_IN_GBPS
    return {
        **_info(text),
        "bytes": int(size),
        "iterations": int(iterations),
        "bw_peak_gbps": round(peak * scale, 3),  # 0.00 when perftest did not measure it
        "bw_avg_gbps": round(average * scale, 3),
        "msg_rate_mpps": rate,
        "unit_read": unit,
    }


def parse_lat_text(text: str) -> dict[str, Any]:
    """The last row of an ib_*_lat table, in microseconds."""
    _, rows, line = _rows(text, LAT_HEADER)
    row = rows[-1]
    if len(row) < 2 + len(LAT_COLUMNS):
        raise PerftestOutputError(f"latency row {line!r} has {len(row)} columns, expected 9")
    return {
        **_info(text),
        "bytes": int(row[0]),
        "iterations": int(row[1]),
        **{f"{c}_us": v for c, v in zip(LAT_COLUMNS, row[2:], strict=False)},
    }


def parse_json(text: str) -> dict[str, Any]:
    """An --out_json file, in the keys the text parsers use. BW_* are in the unit the run
    reported in: rigcheck always passes --report_gbits, which this reads as Gb/s."""
    try:
        data = json.loads(text)
        info, results = data["test_info"], data["results"]
    except (ValueError, KeyError, TypeError) as exc:
        raise PerftestOutputError(f"not a perftest --out_json file: {exc}") from None
    try:
        return _from_json(info, results)
    except (KeyError, TypeError, AttributeError) as exc:
        raise PerftestOutputError(f"perftest --out_json file lacks {exc}") from None


def _from_json(info: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    common = {"device": info.get("Device"), "link_type": info.get("Link_type"),
              "mtu": info.get("Mtu")}  # fmt: skip
    common.update(bytes=results["MsgSize"], iterations=results["n_iterations"])
    if "BW_average" in results:
        return {**common, "bw_peak_gbps": results["BW_peak"], "bw_avg_gbps": results["BW_average"],
                "msg_rate_mpps": results.get("MsgRate")}  # fmt: skip
    keys = ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "percentile_99", "percentile_99.9")
    return {**common, **{f"{c}_us": results[k] for c, k in zip(LAT_COLUMNS, keys, strict=True)}}


def bw_argv(device: str, port: int, seconds: int, server: str | None, cuda: int | None) -> list:
    """ib_write_bw's command line: 8 MiB messages (as Azure NHC's GPUDirect check) for
    `seconds`, in Gb/s (-F: do not fail on a CPU frequency governor; --use_cuda: the buffer in
    GPU memory)."""
    argv = ["ib_write_bw", "-d", device, "-i", str(port), "-s", str(2**23), "-D", str(seconds),
            "-F", "--report_gbits"]  # fmt: skip
    if cuda is not None:
        argv.append(f"--use_cuda={cuda}")
    return argv + ([server] if server else [])


def lat_argv(device: str, port: int, server: str | None) -> list:
    """ib_read_lat's command line: 2-byte reads, 1000 iterations (perftest's defaults)."""
    argv = ["ib_read_lat", "-d", device, "-i", str(port), "-F"]
    return argv + ([server] if server else [])
