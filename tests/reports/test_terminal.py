"""The last screen: failures root cause first, dependents "not judged", -v for every check."""

from rigcheck.reports.terminal import failure_rows, render


def check(name, outcome="fail", area="facts", file="suites/facts/test_x.py", message="bad"):
    return {
        "id": f"{file}::{name}", "name": name, "area": area, "file": file, "outcome": outcome,
        "message": message, "figures": [],
    }  # fmt: skip


def certificate(*checks):
    return {"checks": list(checks)}


COLLECTIVE = check("test_allreduce", area="distributed", file="suites/distributed/test_c.py")
TORCH = check("test_torch_imports", file="suites/facts/test_software_stack.py", message="no torch")
DRIVER = check("test_driver_meets_class_minimum", file="suites/facts/test_software_stack.py")
IDENTITY = check("test_product_matches_class", file="suites/facts/test_identity.py")


def test_torch_failure_comes_first_and_explains_what_needs_torch():
    shown, explained = failure_rows([COLLECTIVE, DRIVER, TORCH])
    assert [c["name"] for c in shown] == ["test_torch_imports", "test_driver_meets_class_minimum"]
    assert [c["name"] for c in explained["test_torch_imports"]] == ["test_allreduce"]


def test_the_wrong_product_explains_every_other_failure_but_the_count():
    count = check("test_device_count", file="suites/facts/test_identity.py")
    shown, explained = failure_rows([DRIVER, count, TORCH, IDENTITY])
    names = [c["name"] for c in shown]
    assert names == ["test_product_matches_class", "test_torch_imports", "test_device_count"]
    assert [c["name"] for c in explained["test_product_matches_class"]] == [
        "test_driver_meets_class_minimum"
    ]


def test_without_a_root_failure_every_failure_is_shown():
    shown, explained = failure_rows([COLLECTIVE, DRIVER])
    assert len(shown) == 2 and explained == {}


def test_the_table_says_not_judged_and_v_lists_every_check():
    passed = check("test_host_fact_readable", outcome="pass", message=None)
    text = render(certificate(COLLECTIVE, TORCH, passed), verbose=False, width=200, color=False)
    assert "not judged: test_torch_imports failed" in text and "no torch" in text
    assert "test_host_fact_readable" not in text
    everything = render(
        certificate(COLLECTIVE, TORCH, passed), verbose=True, width=200, color=False
    )
    assert "test_host_fact_readable" in everything


def test_a_passing_run_prints_no_table():
    assert render(certificate(check("t", outcome="pass")), False, 100, False) == ""


def test_an_80_column_table_keeps_the_message_readable():
    # Issue 38, as run on this 2-core VM (2026-11-29): at 80 columns the measured/expected
    # columns left the message "what it sa" / "all-reduce": every message cut to a stub.
    said = "all-reduce bus bandwidth below the floor: measured 0.222 GB/s (floor 0.4)"
    slow = check("test_allreduce_bus_bandwidth", area="distributed", message=said)
    slow["figures"] = [{"verdict": "fail", "measured": 0.2215, "floor": 0.4, "unit": "GB/s"}]
    matmul = check("test_matmul_tflops[cpu-fp32]", area="perf", message="cpu: matmul below")
    matmul["figures"] = [
        {"verdict": "fail", "measured": 0.004441, "floor": 0.01, "unit": "TFLOP/s"}
    ]
    text = render(certificate(slow, matmul), verbose=False, width=80, color=False)
    assert "all-reduce bus bandwidth below the floor" in text, text
    assert max(len(line) for line in text.splitlines()) <= 80
