"""`rigcheck facts` end to end over the simulated library: every NVML-reading probe of
collect_facts through the real pynvml, the torch side a stand-in (it is not NVML)."""

from __future__ import annotations

from rigcheck.detect import detect_class
from rigcheck.facts.collect import collect_facts
from rigcheck.spec import load_all, load_spec
from rigcheck.testing.nvml_sim import simulated_nvml
from rigcheck.testing.synthetic import synthetic_snapshot

SNAPSHOT = synthetic_snapshot(load_spec("h100"), gpus=8)


class TorchSide:
    """What the torch child process reports, taken from the synthetic h100 snapshot."""

    def release(self):
        pass

    def result(self):
        software = SNAPSHOT["software"]
        return {"torch": software["torch"], "flash_attn": software["flash_attn"],
                "smoke": SNAPSHOT["smoke"]}  # fmt: skip


def test_facts_of_an_hgx_h100_read_through_pynvml():
    with simulated_nvml("h100_hgx") as lib:
        facts = collect_facts(torch_probe=TorchSide())
    assert not lib.crashes, lib.crashes
    data = facts.data
    assert data["software"]["nvidia_driver"]["version"] == "580.105.08"
    assert [d["pci"]["bus_id"] for d in data["devices"]][:2] == ["0000:53:00.0", "0000:64:00.0"]
    assert all(d["fabric"]["state"] == "completed" for d in data["devices"])
    assert len(data["topology"]["pairs"]) == 28
    assert data["topology"]["pairs"][0]["nvlink"] == {"links": 18, "via": "nvswitch"}
    assert detect_class(facts, load_all())[0] == "h100"
