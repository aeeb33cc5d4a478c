"""The `nvidia-smi` table (what most bug reports paste) as the tree `nvidia-smi -q -x` prints.

The table holds a few facts per GPU: name, persistence mode, bus id, the volatile uncorrected
ECC count (or On/Off/N/A), temperature, performance state, power draw and cap, memory used and
total, utilisation, compute mode and MIG mode; and the processes with their memory. Only the
elements the table printed are written, under the names `-q -x` uses, so make_profiles.py and
partial.py read both forms alike; everything else is absent, not guessed.

Both layouts are read: the narrow one up to R525 and the wide one from R530 (and R610's
"KMD Version" header); a prefix before each line (an indent, a log tag) is dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

HEADER = re.compile(
    r"NVIDIA-SMI\s+\S+\s+(?:Driver|KMD) Version:\s*(?P<driver>\S+)"
    r"\s+(?:CUDA(?: UMD)? Version:\s*(?P<cuda>[\d.]+))?"
)
PROCESS = re.compile(
    r"^\s*(?P<gpu>\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(?P<pid>\d+)\s+(?P<type>C\+G|C|G|M\+C|M)"
    r"\s+(?P<name>.*?)\s+(?P<mib>\d+)MiB\s*$"
)
TABLE_START = "| GPU  Name"


def is_table(text: str) -> bool:
    return TABLE_START in text and "Persistence-M" in text


def parse_table(text: str) -> ET.Element:
    """The `nvidia_smi_log` tree of a table capture; root attribute form="table"."""
    lines = _unprefixed(text.splitlines())
    root = ET.Element("nvidia_smi_log", form="table")
    for line in lines:
        match = HEADER.search(line)
        if match:
            ET.SubElement(root, "driver_version").text = match["driver"]
            if match["cuda"]:
                ET.SubElement(root, "cuda_version").text = match["cuda"]
            break
    gpus = [_gpu(root, rows) for rows in _gpu_rows(lines)]
    _processes(lines, {g.get("index"): g for g in gpus})
    return root


def _unprefixed(lines: list[str]) -> list[str]:
    """Each line from its first '|' or '+' (a table line): drops a log tag or an indent."""
    out = []
    for line in lines:
        starts = [i for i in (line.find("|"), line.find("+-")) if i >= 0]
        out.append(line[min(starts) :].rstrip() if starts else line.strip())
    return out


def _gpu_rows(lines: list[str]) -> list[list[list[str]]]:
    """The cells of each GPU's rows (2 or 3) in the device table, between +---+ rules."""
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith(TABLE_START))
    except StopIteration:
        return []
    body = lines[start:]
    first = next(i for i, line in enumerate(body) if line.startswith("|==="))
    groups: list[list[list[str]]] = [[]]
    for line in body[first + 1 :]:
        if line.startswith("+") or line.startswith("|---"):
            groups.append([])
            continue
        if not line.startswith("|") or "Processes" in line or "MIG devices" in line:
            break
        groups[-1].append([cell.strip() for cell in line.strip("|").split("|")])
    return [g for g in groups if g and re.match(r"^\d+\s", g[0][0])]


def _gpu(root: ET.Element, rows: list[list[str]]) -> ET.Element:
    first, second = rows[0], rows[1]
    index, rest = first[0].split(None, 1)
    name, persistence = rest.rsplit(None, 1)
    gpu = ET.SubElement(root, "gpu", id=first[1].split()[0], index=index)
    _put(gpu, "product_name", None if name.endswith("...") else name)  # cut to the column
    _put(gpu, "persistence_mode", {"On": "Enabled", "Off": "Disabled"}.get(persistence))
    _put(gpu, "pci/pci_bus_id", first[1].split()[0])
    _ecc(gpu, first[2])
    fan_temp_perf, _, power = second[0].partition("W /") if "W /" in second[0] else (
        second[0], "", "")  # fmt: skip
    parts = fan_temp_perf.split()
    temp = next((p for p in parts if p.endswith("C") and p[:-1].isdigit()), None)
    _put(gpu, "temperature/gpu_temp", temp and f"{temp[:-1]} C")
    _put(gpu, "performance_state", next((p for p in parts if re.fullmatch(r"P\d+", p)), None))
    if power:
        draw = parts[-1] if parts[-1].isdigit() else None
        cap = power.strip().removesuffix("W").strip()
        _put(gpu, "gpu_power_readings/power_draw", draw and f"{draw}.00 W")
        _put(gpu, "gpu_power_readings/current_power_limit", cap.isdigit() and f"{cap}.00 W")
    else:  # "N/A" usage and cap: NVML answered Not Supported (a vGPU guest)
        _put(gpu, "gpu_power_readings/power_draw", "N/A")
        _put(gpu, "gpu_power_readings/current_power_limit", "N/A")
    used, _, total = second[1].partition("/")
    _put(gpu, "fb_memory_usage/used", used.strip().replace("MiB", " MiB"))
    _put(gpu, "fb_memory_usage/total", total.strip().replace("MiB", " MiB"))
    util, *mode = second[2].split()
    _put(gpu, "utilization/gpu_util", util)
    _put(gpu, "compute_mode", mode[0] if mode else None)
    if len(rows) > 2 and rows[2][2]:
        _put(gpu, "mig_mode/current_mig", rows[2][2])
    return gpu


def _ecc(gpu: ET.Element, cell: str) -> None:
    """A count (ECC on), 'On' (ECC on, counts per MIG instance), 'Off', or 'N/A' (no ECC)."""
    if cell.isdigit():
        _put(gpu, "ecc_mode/current_ecc", "Enabled")
        _put(gpu, "ecc_errors/volatile/total_uncorrectable", cell)
    else:
        _put(gpu, "ecc_mode/current_ecc", {"On": "Enabled", "Off": "Disabled"}.get(cell, "N/A"))


def _processes(lines: list[str], gpus: dict[str | None, ET.Element]) -> None:
    """The processes the table lists. An empty list is not written: nvidia-smi in a container
    lists none ("No running processes found", or no rows) while processes of the host's PID
    namespace hold the GPU, so it does not say the GPU is free. A capture cut inside the
    table leaves every GPU without <processes> too: the list is not known to be whole."""
    try:
        start = next(i for i, line in enumerate(lines) if "Processes:" in line)
        rule = next(i for i, line in enumerate(lines[start:]) if line.startswith("|==="))
    except StopIteration:
        return
    rows: list[re.Match[str]] = []
    for line in lines[start + rule + 1 :]:
        if line.startswith("+"):  # the table's closing rule: every process is in
            break
        match = PROCESS.match(line.strip("|"))
        if match and match["gpu"] in gpus:
            rows.append(match)
    else:
        return
    if not rows:
        return
    for gpu in gpus.values():
        ET.SubElement(gpu, "processes")
    for match in rows:
        proc = ET.SubElement(gpus[match["gpu"]].find("processes"), "process_info")
        _put(proc, "pid", match["pid"])
        _put(proc, "type", match["type"])
        _put(proc, "process_name", match["name"])
        _put(proc, "used_memory", f"{match['mib']} MiB")


def _put(parent: ET.Element, path: str, value: str | None) -> None:
    if value is None:
        return
    node = parent
    for part in path.split("/"):
        child = node.find(part)
        node = child if child is not None else ET.SubElement(node, part)
    node.text = value
