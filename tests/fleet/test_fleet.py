"""`rigcheck fleet`: 16 nodes, two bad ones (one failing, one slow but above its floor), named."""

import json
import re
import statistics

import pytest
from fleet_certificates import HEALTHY, node_certificate, write_fleet
from hypothesis import given
from hypothesis import strategies as st

from rigcheck.cli import main
from rigcheck.fleet import nodes
from rigcheck.fleet.judge import OUTLIER_BAND, judge_fleet
from rigcheck.fleet.nodes import Node, load_nodes
from rigcheck.reports.certificate import CertificateError

NAMES = [f"node{i:02d}" for i in range(1, 17)]
FAILING, SLOW = "node05", "node11"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "220")


def healthy_spread(i: int) -> dict:
    """Healthy nodes differ by up to ±3%, as healthy GPUs do (anchors.md #5)."""
    wobble = 1 + ((i * 3) % 7 - 3) / 100
    return {(f, gpu): v * wobble for f, v in HEALTHY.items() for gpu in (0, 1)}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    certificates = {name: node_certificate(name, healthy_spread(i)) for i, name in enumerate(NAMES)}
    certificates[FAILING] = node_certificate(FAILING, healthy_spread(5), fail=True)
    # 30% below the others on one figure of one GPU, and still above its floor of 600.
    others = [healthy_spread(i)[("matmul_bf16_tflops", 1)] for i in range(16) if i != 11]
    slow = {**healthy_spread(11), ("matmul_bf16_tflops", 1): 0.7 * statistics.median(others)}
    certificates[SLOW] = node_certificate(SLOW, slow)
    assert certificates[SLOW]["verdict"] != "fail"  # it passes its own floor
    return write_fleet(tmp_path_factory.mktemp("fleet"), certificates)


def test_fleet_names_exactly_the_failing_and_the_slow_node(fleet, tmp_path, capsys):
    page = tmp_path / "fleet.html"
    assert main(["fleet", str(fleet), "-o", str(page)]) == 1
    out = capsys.readouterr().out
    drained = re.findall(r"^  (node\d\d): ", out, re.MULTILINE)
    assert sorted(set(drained)) == [FAILING, SLOW]
    assert "2 nodes to drain" in out
    assert f"{SLOW}: matmul_bf16_tflops gpu1 630.0 TFLOP/s is 30% below the fleet median" in out
    assert f"{FAILING}: its run failed: test_driver_meets_class_minimum" in out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if "│ node" in line}
    assert sorted(rows) == NAMES
    assert [n for n, line in rows.items() if "DRAIN" in line] == [FAILING, SLOW]
    assert "630 !" in rows[SLOW]
    html = page.read_text()
    assert "2 OF 16 NODES TO DRAIN" in html
    assert re.findall(r'data-node="(node\d\d)"', html) == [FAILING, SLOW]
    assert html.count("<tr") == 17 and html.count('class="drained"') == 2
    assert 'data-figure="matmul_bf16_tflops"' in html and "<script" not in html


def test_a_healthy_fleet_passes(tmp_path, capsys):
    certificates = {n: node_certificate(n, healthy_spread(i)) for i, n in enumerate(NAMES[:4])}
    root = write_fleet(tmp_path / "fleet", certificates)
    assert main(["fleet", str(root), "-o", str(tmp_path / "f.html")]) == 0
    assert "no node to drain" in capsys.readouterr().out


def test_the_band_is_an_option(fleet, tmp_path, capsys):
    # With a 35% band the slow node is within it: only the failing node is left.
    assert main(["fleet", str(fleet), "--band", "35%", "-o", str(tmp_path / "f.html")]) == 1
    out = capsys.readouterr().out
    assert sorted(set(re.findall(r"^  (node\d\d): ", out, re.MULTILINE))) == [FAILING]


def bad_input(capsys, *argv) -> str:
    assert main(["fleet", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    return err


def test_no_certificates_is_one_line(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    err = bad_input(capsys, str(tmp_path / "empty"), "-o", str(tmp_path / "f.html"))
    assert "no certificate.json under" in err
    assert not (tmp_path / "f.html").exists()
    assert "no such file or folder" in bad_input(capsys, str(tmp_path / "nowhere"))


def test_a_corrupt_certificate_is_named(fleet, tmp_path, capsys):
    bad = tmp_path / "bad" / "certificate.json"
    bad.parent.mkdir()
    bad.write_text('{"verdict": "pass",')
    err = bad_input(capsys, str(fleet), str(bad.parent), "-o", str(tmp_path / "f.html"))
    assert str(bad) in err and "not valid JSON" in err
    bad.write_text(json.dumps({"verdict": "pass"}))
    page = str(tmp_path / "f.html")
    assert "not a valid certificate" in bad_input(capsys, str(bad.parent), "-o", page)


def test_a_fleet_read_on_every_core_is_the_same_fleet_and_names_a_bad_file(
    fleet, tmp_path, monkeypatch
):
    """Past PARALLEL_FROM files per core the certificates are parsed in worker processes: the
    same Nodes come back, in order, and a corrupt file is still the one line naming it."""
    alone = load_nodes([str(fleet)])
    monkeypatch.setattr(nodes, "PARALLEL_FROM", 4)
    monkeypatch.setattr(nodes, "_cores", lambda: 2)
    assert load_nodes([str(fleet)]) == alone
    bad = tmp_path / "zz" / "certificate.json"
    bad.parent.mkdir()
    bad.write_text('{"verdict": "pass",')
    with pytest.raises(CertificateError, match=f"^{re.escape(str(bad))}: not valid JSON"):
        load_nodes([str(fleet), str(bad.parent)])


def test_mixed_classes_are_refused(tmp_path, capsys):
    other = node_certificate("node99")
    other["class"]["name"] = "a100"
    root = write_fleet(tmp_path / "fleet", {"node01": node_certificate("node01"), "node99": other})
    err = bad_input(capsys, str(root), "-o", str(tmp_path / "f.html"))
    assert "different classes" in err and "a100: 1 nodes" in err


def test_an_existing_page_is_kept_without_force(fleet, tmp_path, capsys):
    page = tmp_path / "fleet.html"
    page.write_text("mine")
    assert "exists" in bad_input(capsys, str(fleet), "-o", str(page))
    assert page.read_text() == "mine"
    assert main(["fleet", str(fleet), "-o", str(page), "--force"]) == 1
    assert "NODES TO DRAIN" in page.read_text()


def _nodes(values: list[float]) -> list[Node]:
    """Bare nodes with one measured figure each: enough for judge_fleet."""

    def certificate(v):
        figure = {"figure": "f", "label": "gpu0", "measured": v, "unit": "u", "verdict": "pass"}
        return {"verdict": "pass", "class": {"name": "x"}, "checks": [{"figures": [figure]}]}

    return [Node(f"n{i:02d}", None, certificate(v)) for i, v in enumerate(values)]


@given(st.lists(st.floats(0.95, 1.05), min_size=2, max_size=32))
def test_healthy_spread_never_names_a_node(values):
    # Within ±5% of each other, no node is more than 10% below the median: never cry wolf.
    assert judge_fleet(_nodes(values)).drain == {}


@given(st.lists(st.floats(0.97, 1.03), min_size=2, max_size=32), st.floats(0.0, 0.85))
def test_one_slow_node_is_always_named(values, slow):
    verdict = judge_fleet(_nodes([*values, slow]))
    assert list(verdict.drain) == [f"n{len(values):02d}"]
    assert slow < (1 - OUTLIER_BAND) * verdict.medians["f gpu0"]
