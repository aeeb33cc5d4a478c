"""Detection and identity: by PCI device id, never by name alone."""

from rigcheck.detect import detect_class, identity_problems
from rigcheck.facts import Facts
from rigcheck.spec import load_all, load_spec


def machine(*device_ids, name="NVIDIA H100 80GB HBM3"):
    devices = [
        {"index": i, "vendor": "nvidia", "name": name, "pci": {"device_id": d}}
        for i, d in enumerate(device_ids)
    ]
    software = {"torch": {"build": "cpu", "version": "2.13.0+cpu"}}
    return Facts({"devices": devices, "software": software, "origin": {"kind": "synthetic"}})


def test_a_gpu_machine_is_detected_by_its_pci_id():
    name, how = detect_class(machine("0x2330", "0x2330"), load_all())
    assert name == "h100"
    assert "2 x NVIDIA H100 80GB HBM3 (PCI 0x2330)" in how


def test_a_machine_without_accelerators_is_the_cpu_class():
    name, how = detect_class(machine(), load_all())
    assert name == "cpu"
    assert "CPU-only build" in how


def test_an_unknown_gpu_matches_no_class_and_says_how_to_proceed():
    name, how = detect_class(machine("0xBEEF", name="NVIDIA Mystery"), load_all())
    assert name is None
    assert "NVIDIA Mystery (PCI 0xBEEF) matches no class" in how and "-m CLASS" in how


def test_the_name_alone_does_not_make_an_h100():
    problems = identity_problems(machine("0x20B2"), load_spec("h100"))
    assert problems == [
        "GPU 0: expected NVIDIA H100 SXM5 80GB (HBM3) (PCI 0x2330), "
        "found NVIDIA H100 80GB HBM3 (PCI 0x20B2): that is class a100; check it as a100"
    ]


def test_a_gpu_on_the_cpu_class_is_an_identity_problem():
    problems = identity_problems(machine("0x2330"), load_spec("cpu"))
    assert len(problems) == 1 and "expected a CPU-only host" in problems[0]


def test_no_accelerator_on_a_gpu_class_says_why():
    (problem,) = identity_problems(machine(), load_spec("h100"))
    assert "found no accelerator (torch 2.13.0+cpu is a CPU-only build)" in problem
