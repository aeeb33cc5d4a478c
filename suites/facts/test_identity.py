"""Is this the product the class promises: the right device, how many, how much memory."""

import re

import pytest

from rigcheck.detect import describe_device, identity_problems
from rigcheck.require import device_fact, fact, gpu_label
from rigcheck.spec import GIB

pytestmark = pytest.mark.facts


def test_product_matches_class(facts, spec):
    if spec.backend != "cpu":
        # The facts identity is judged by, typed first: a PCI id of 16 is no product at all.
        device_fact(facts.devices, "name")
        if spec.identity["pci_device_ids"]:
            device_fact(facts.devices, "pci.device_id", required=True)
    problems = identity_problems(facts, spec)
    assert not problems, (
        f"this machine is not a {spec.name}:\n  "
        + "\n  ".join(problems)
        + "\nRun `rigcheck detect` to see which class it is."
    )


def test_device_count(facts, spec, expected_gpus):
    found = facts.devices
    listing = ", ".join(f"{gpu_label(d)} {describe_device(d)}" for d in found) or "none"
    assert len(found) == expected_gpus, (
        f"expected {expected_gpus} accelerator(s) for {spec.name}, found {len(found)}: {listing}. "
        "A GPU missing: check `nvidia-smi -L` and the kernel log (`dmesg | grep -i xid`) for one "
        "that fell off the bus. A different node size: pass --gpus N."
    )


def test_device_name_matches(devices, spec):
    pattern = spec.identity["name_pattern"]
    if not devices or pattern is None:
        pytest.skip(f"{spec.name} has no device name to match")
    wrong = [
        f"{gpu_label(d)}: {name!r}"
        for d, name in device_fact(devices, "name", required=True)
        if not re.search(pattern, name)
    ]
    assert not wrong, (
        f"device name does not match {pattern!r} although the PCI id does: {'; '.join(wrong)}. "
        "A renamed SKU or a new board variant: check it and extend the spec's name_pattern."
    )


def test_memory_per_device(facts, spec, devices):
    floor = spec.expect("memory_per_device")["floor"]["value"]
    if spec.backend == "cpu":
        pairs = [({"index": "host"}, fact(facts, "host.memory_total_bytes"))]
    else:
        pairs = device_fact(devices, "memory_total_bytes", required=True)
    short = [f"{gpu_label(d)}: {total / GIB:.1f} GiB" for d, total in pairs if total < floor * GIB]
    assert not short, (
        f"memory below the {spec.name} floor of {floor} GiB: {'; '.join(short)}. "
        "A smaller SKU (e.g. 40GB instead of 80GB), or memory hidden by MIG or a vGPU profile."
    )
