"""The one root-cause line a drain reason, a taint and the terminal repeat."""

from __future__ import annotations

from rigcheck.reports.root_cause import MAX_CHARS, cause_key, root_cause


def check(name: str, outcome: str = "fail", message: str | None = "bad", area: str = "facts"):
    return {"name": name, "outcome": outcome, "message": message, "area": area,
            "file": f"suites/{area}/test_x.py"}  # fmt: skip


def certificate(verdict: str, checks=(), **extra) -> dict:
    return {"verdict": verdict, "checks": list(checks), "partial_reason": None, **extra}


def test_a_pass_has_no_root_cause():
    assert root_cause(certificate("pass", [check("test_a", "pass")])) is None
    assert root_cause(certificate("warn", [check("test_a", "warn")])) is None


def test_the_first_failure_is_named_by_its_check_and_message():
    found = certificate("fail", [check("test_a", "pass"), check("test_ecc_zero", message="2 ECC")])
    assert root_cause(found) == "ecc_zero: 2 ECC"


def test_the_wrong_product_comes_first_and_the_others_are_counted():
    found = certificate(
        "fail",
        [
            check("test_device_count", message="expected 8 GPUs, found 7\nmore text"),
            check("test_product_matches_class", message="an A100, not an H100"),
            check("test_matmul_tflops[gpu0]", area="perf", message="slow"),
        ],
    )
    # test_matmul_tflops is explained by the identity failure; the device count is not.
    assert root_cause(found) == "product_matches_class: an A100, not an H100 (+1 more failed)"


def test_a_failure_without_message_still_says_failed():
    assert root_cause(certificate("fail", [check("test_x", message=None)])) == "x: failed"
    assert root_cause(certificate("fail", [])).startswith("fail: ")


def test_incomplete_and_regressed_say_why():
    stopped = certificate("incomplete", partial_reason="stopped: tier quick: its 10 s ran out")
    assert root_cause(stopped) == "incomplete: stopped: tier quick: its 10 s ran out"
    assert root_cause(certificate("incomplete")) == "incomplete: not every check ran"
    slow = certificate("regressed", regressions=[{"benchmark": "mm", "reason": "30% slower"}])
    assert root_cause(slow) == "regressed: mm: 30% slower"


def test_a_long_message_is_cut_to_one_short_ascii_line():
    line = root_cause(certificate("fail", [check("test_x", message="word " * 100)]))
    assert len(line) == MAX_CHARS and line.endswith("...") and "\n" not in line
    many = [check("test_x", message="word " * 100), check("test_y")]
    line = root_cause(certificate("fail", many))
    assert len(line) == MAX_CHARS and line.endswith("... (+1 more failed)")
    assert root_cause(certificate("fail", [check("test_x", message="x" * 150)])).endswith("x" * 5)


def test_the_key_is_what_comes_before_the_first_colon():
    assert cause_key("ecc_zero: 2 ECC: more") == "ecc_zero"
    assert cause_key("incomplete: stopped") == "incomplete"


def test_a_line_of_exactly_the_limit_is_not_cut_and_a_cut_drops_a_trailing_space():
    exact = "m" * (MAX_CHARS - 3)
    assert root_cause(certificate("fail", [check("test_x", message=exact)])) == f"x: {exact}"
    spaced = "a" * 153 + " " + "b" * 10  # the cut lands just after the space
    assert root_cause(certificate("fail", [check("test_x", message=spaced)])) == (
        "x: " + "a" * 153 + "..."
    )


def test_the_report_page_names_a_failed_runs_root_cause(tmp_path):
    import json
    from pathlib import Path

    from rigcheck.reports.html import write_html

    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "certificates"
    failed = json.loads((fixtures / "h100-node-after.json").read_text())
    write_html(tmp_path / "failed.html", failed)
    assert (
        "root cause: driver_meets_class_minimum: driver 525.60.13 is older"
        in (tmp_path / "failed.html").read_text()
    )
    passed = json.loads((fixtures / "h100-node-before.json").read_text())
    write_html(tmp_path / "passed.html", passed)
    assert "root cause:" not in (tmp_path / "passed.html").read_text()


def test_a_wrong_product_names_what_was_found_after_the_colon():
    # suites/facts/test_identity.py's message: a first line that only introduces the problem
    # (issue 38: the drain reason and taint read "this machine is not a h100:" and nothing more)
    message = (
        "this machine is not a h100:\n  GPU 0 (0000:18:00.0) is NVIDIA A100-SXM4-80GB, not an "
        "H100 SXM5\nRun `rigcheck detect` to see which class it is."
    )
    found = certificate("fail", [check("test_product_matches_class", message=message)])
    assert root_cause(found) == (
        "product_matches_class: this machine is not a h100: GPU 0 (0000:18:00.0) is NVIDIA "
        "A100-SXM4-80GB, not an H100 SXM5"
    )
