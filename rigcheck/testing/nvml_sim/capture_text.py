"""Text `nvidia-smi -q` (what users paste into bug reports) as the tree `nvidia-smi -q -x` prints.

The text form is the XML form's labels, indented four spaces a level. Each label becomes the
element name `-q -x` uses for it (nvsmi_device_v10-v13.dtd), so one reader (make_profiles.py)
takes both forms. Labels not named below become snake_case, which is what the DTDs do for most.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

# Labels whose element name is not their snake_case, whatever section they are in.
NAMES = {
    "GPU UUID": "uuid",
    "Serial Number": "serial",
    "VBIOS Version": "vbios_version",
    "Image Version": "img_version",
    "Bus Id": "pci_bus_id",
    "Device Id": "pci_device_id",
    "Sub System Id": "pci_sub_system_id",
    "GPU Link Info": "pci_gpu_link_info",
    "PCIe Generation": "pcie_gen",
    "Link Width": "link_widths",
    "Replays Since Reset": "replay_counter",
    "Replays since reset": "replay_counter",
    "SRAM Uncorrectable SEC-DED": "sram_uncorrectable_secded",
    "GPU Current Temp": "gpu_temp",
    "GPU Shutdown Temp": "gpu_temp_max_threshold",
    "GPU Slowdown Temp": "gpu_temp_slow_threshold",
    "GPU Max Operating Temp": "gpu_temp_max_gpu_threshold",
    "GPU T.Limit Temp": "gpu_temp_tlimit",
    "GPU Shutdown T.Limit Temp": "gpu_temp_max_tlimit_threshold",
    "GPU Slowdown T.Limit Temp": "gpu_temp_slow_tlimit_threshold",
    "GPU Max Operating T.Limit Temp": "gpu_temp_max_gpu_tlimit_threshold",
    "Instantaneous Power Draw": "instant_power_draw",
    "CliqueId": "cliqueId",
    "Single Bit ECC": "single_bit_ecc",
    "Double Bit ECC": "double_bit_ecc",
    "Correctable Error": "remapped_row_corr",
    "Uncorrectable Error": "remapped_row_unc",
    "Remapping Failure Occurred": "remapped_row_failure",
    "Process ID": "pid",
    "Name": "process_name",
    "Used GPU Memory": "used_memory",
}
# Labels named by their section: "Max" is a generation under PCIe Generation, a width under Link
# Width; "Current" and "Pending" are a mode's states.
IN_SECTION = {
    "pcie_gen": {
        "Max": "max_link_gen",
        "Current": "current_link_gen",
        "Device Max": "max_device_link_gen",
        "Device Current": "current_device_link_gen",
        "Host Max": "max_host_link_gen",
    },
    "link_widths": {"Max": "max_link_width", "Current": "current_link_width"},
    "ecc_mode": {"Current": "current_ecc", "Pending": "pending_ecc"},
    "mig_mode": {"Current": "current_mig", "Pending": "pending_mig"},
    "remapped_rows": {"Pending": "remapped_row_pending"},
}
CLOCK_SECTIONS = {
    "clocks",
    "max_clocks",
    "applications_clocks",
    "default_applications_clocks",
    "max_customer_boost_clocks",
}
CLOCK_NAMES = {"Graphics": "graphics_clock", "SM": "sm_clock", "Memory": "mem_clock",
               "Video": "video_clock"}  # fmt: skip
# Clock event (throttle) reasons: nested in the text (HW Thermal Slowdown under HW Slowdown),
# flat in the XML, each named <section's singular>_<reason>.
REASON_SECTIONS = {"clocks_event_reasons": "clocks_event_reason_",
                   "clocks_throttle_reasons": "clocks_throttle_reason_"}  # fmt: skip
REASON_NAMES = {"Idle": "gpu_idle", "Display Clock Setting": "display_clocks_setting"}
LINE = re.compile(r"^( *)([^:]+?)\s*(?::\s?(.*))?$")
GPU_HEADING = re.compile(r"^GPU [0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f.]+\s*$")  # a bus id


def snake(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def element_name(label: str, section: str) -> str:
    if section in IN_SECTION and label in IN_SECTION[section]:
        return IN_SECTION[section][label]
    if section in CLOCK_SECTIONS and label in CLOCK_NAMES:
        return CLOCK_NAMES[label]
    if section in REASON_SECTIONS:
        return REASON_SECTIONS[section] + REASON_NAMES.get(label, snake(label))
    return NAMES.get(label) or snake(label)


def parse_text(text: str) -> ET.Element:
    """The `nvidia_smi_log` tree of a text capture: one <gpu id=BUS> per "GPU BUS" heading."""
    root = ET.Element("nvidia_smi_log")
    stack: list[tuple[int, ET.Element]] = [(-1, root)]
    for raw in text.splitlines():
        match = LINE.match(raw.rstrip())
        if not raw.strip() or match is None or raw.lstrip().startswith("="):
            continue
        indent, label, value = len(match[1]), match[2].strip(), match[3]
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if GPU_HEADING.match(raw):
            gpu = ET.SubElement(root, "gpu", id=raw.split(" ", 1)[1].strip())
            stack.append((indent, gpu))
            continue
        if parent.tag in REASON_SECTIONS and value is None:
            continue
        while parent.tag.startswith(tuple(REASON_SECTIONS.values())):
            parent = _reason_section(stack)  # HW Thermal Slowdown is HW Slowdown's sibling
        if parent.tag == "processes":
            parent = _process(parent, label)
        elif parent.tag == "pid" and len(stack) > 1 and stack[-2][1].tag == "processes":
            # R535 nests Type, Name and memory under "Process ID": they are its process's
            parent = stack[-2][1].findall("process_info")[-1]
        node = ET.SubElement(parent, element_name(label, parent.tag))
        node.text = (value or "").strip() if value is not None else None
        stack.append((indent, node))
    return _headless(root)


HEADER = {"timestamp", "driver_version", "cuda_version", "attached_gpus"}


def _headless(root: ET.Element) -> ET.Element:
    """An excerpt of one GPU's sections without its "GPU BUS" heading (a bug report quoting
    only its Remapped Rows): those sections are one GPU's."""
    if root.find("gpu") is not None:
        return root
    sections = [child for child in root if child.tag not in HEADER]
    if sections:
        gpu = ET.SubElement(root, "gpu")
        for child in sections:
            root.remove(child)
            gpu.append(child)
    return root


def _reason_section(stack: list[tuple[int, ET.Element]]) -> ET.Element:
    while stack[-1][1].tag not in REASON_SECTIONS:
        stack.pop()
    return stack[-1][1]


def _process(processes: ET.Element, label: str) -> ET.Element:
    """Each process of the text form starts at its "GPU instance ID" (or, without MIG
    columns, its "Process ID"); the XML form wraps each in <process_info>."""
    last = processes.find("process_info[last()]")
    starts = label in ("GPU instance ID", "GPU Instance ID") or (
        label == "Process ID" and (last is None or last.find("pid") is not None)
    )
    if last is None or starts:
        last = ET.SubElement(processes, "process_info")
    return last


def read_capture(text: str) -> ET.Element:
    """A capture as pasted: `-q -x` XML or `-q` text."""
    if text.lstrip().startswith("<"):
        return ET.fromstring(text.encode())
    return parse_text(text)
