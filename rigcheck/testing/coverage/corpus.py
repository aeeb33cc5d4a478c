"""Real kernel-log lines from fixtures/realworld/kernel_log.json, by the event each must give."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from rigcheck.layout import ROOT_DIR

CORPUS = Path(ROOT_DIR) / "fixtures" / "realworld" / "kernel_log.json"
BUS = re.compile(r"(?i)\b([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})(\.[0-7])?\b")


CONTINUATION = 3  # lines after an event's line that may finish its record (NVRM's multi-line)


@cache
def lines_by_event(driver: str = "nvidia") -> dict[str, list[tuple[str, str | None, str]]]:
    """event ('Xid 79', 'amdgpu ras_fatal') -> [(text, gpu it names, cause)], the driver's lines
    ("nvidia", "amdgpu", or "mlx5": then the device named is a NIC).
    The text is the event's line and the lines after it up to the next event: a record NVRM
    prints over several lines ("The NVIDIA GPU ... has fallen off the bus") is one event."""
    data = json.loads(CORPUS.read_text())
    found: dict[str, list[tuple[str, str | None, str]]] = {}
    for excerpt in data[driver]:
        lines = excerpt["lines"]
        for i, (line, expect) in enumerate(lines):
            if not expect:
                continue
            rest = []
            for after, said in lines[i + 1 : i + 1 + CONTINUATION]:
                if said:
                    break
                rest.append(after)
            text = "\n".join([line, *rest])
            found.setdefault(expect["event"], []).append((text, expect["gpu"], expect["cause"]))
    return found


def benign_lines(driver: str = "nvidia") -> list[str]:
    """Lines a healthy node's log may hold: application and informational events."""
    return [
        line
        for found in lines_by_event(driver).values()
        for line, _, cause in found
        if cause in ("application", "informational")
    ]


def retarget(line: str, bus_id: str) -> str:
    """The same line naming this node's GPU (bus id '0000:53:00.0') instead of the reporter's."""
    domain, bus, device = bus_id.lower().split(".")[0].split(":")

    def swap(match: re.Match) -> str:
        return f"{domain}:{bus}:{device}{match[4] or ''}"

    return BUS.sub(swap, line)
