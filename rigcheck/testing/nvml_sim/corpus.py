"""The public nvidia-smi captures in fixtures/nvidia_smi, as machine profiles for the simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rigcheck.testing.nvml_sim.capture_text import read_capture
from rigcheck.testing.nvml_sim.make_profiles import capture_profile

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "nvidia_smi"


def captures(folder: Path = CAPTURES) -> list[dict[str, Any]]:
    """The index: each capture's file, source, class, what it shows and what must fail."""
    return json.loads((folder / "captures.json").read_text())["captures"]


def capture_machine(entry: dict[str, Any], folder: Path = CAPTURES) -> dict[str, Any]:
    """The machine profile of one capture of the index."""
    root = read_capture((folder / entry["file"]).read_text())
    source = f"{entry['source']} (fixtures/nvidia_smi/{entry['file']})"
    restored = entry.get("restored", {})
    for gpu in root.findall("gpu"):
        for path, value in restored.get("values", {}).items():
            gpu.find(path).text = value
    if restored:
        source += f"; restored by hand: {restored['why']}"
    return capture_profile(root, Path(entry["file"]).stem, source)
