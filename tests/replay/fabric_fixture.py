"""fixtures/fabric/hgx-h100-8x-ndr.json: the fabric facts of a healthy 8x H100 HGX node (eight
400 Gb/s NDR NICs, one on each GPU's PCIe switch, and the VM's Ethernet VF), as the probe reads
them from the fake sysfs. The fabric broken variants break it. Regenerate after changing the
probe or the fake node:

    PYTHONPATH=.:tests/replay python tests/replay/fabric_fixture.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from fake_sysfs import build_node

from rigcheck.facts.fabric.nics import probe_fabric
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "fabric" / "hgx-h100-8x-ndr.json"


def healthy_fabric() -> dict[str, Any]:
    devices = synthetic_snapshot(load_spec("h100"), gpus=8)["devices"]
    with tempfile.TemporaryDirectory() as root:
        node = build_node(Path(root), [d["pci"]["bus_id"] for d in devices])
        return probe_fabric(devices, node)


def render(fabric: dict[str, Any]) -> str:
    return json.dumps(fabric, indent=1) + "\n"


if __name__ == "__main__":
    FIXTURE.write_text(render(healthy_fabric()))
    print(f"wrote {FIXTURE}")
