"""`nvidia-smi nvlink -s` (each GPU's links and their speed, `<inactive>` for a link down) as
the `nvidia_smi_log` tree the other readers write: one <gpu> per "GPU N: NAME (UUID: ...)"
line, with <product_name>, <uuid> and <nvlink_links> holding one <link id state> per link."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

GPU = re.compile(r"^GPU (?P<index>\d+): (?P<name>.+?) \(UUID: (?P<uuid>[^)]+)\)\s*$")
LINK = re.compile(r"^\s*Link (?P<link>\d+): (?P<state><inactive>|[\d.]+ GB/s)\s*$")


def is_nvlink_status(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and GPU.match(lines[0]) is not None and any(map(LINK.match, lines))


def parse_nvlink_status(text: str) -> ET.Element:
    root = ET.Element("nvidia_smi_log", form="nvlink -s")
    gpu = None
    for line in text.splitlines():
        if match := GPU.match(line):
            gpu = ET.SubElement(root, "gpu", index=match["index"])
            ET.SubElement(gpu, "product_name").text = match["name"]
            ET.SubElement(gpu, "uuid").text = match["uuid"]
            ET.SubElement(gpu, "nvlink_links")
        elif (match := LINK.match(line)) and gpu is not None:
            state = "inactive" if match["state"] == "<inactive>" else "active"
            ET.SubElement(gpu.find("nvlink_links"), "link", id=match["link"], state=state)
    return root
