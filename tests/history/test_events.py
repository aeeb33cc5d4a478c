"""Kernel-log events as rows of the store (rigcheck/history/events.py): a real HGX node's log
read by the real reader, stored once per line however many runs read it, tied to the GPU at its
bus, shown by `rigcheck history` for the node and for the board, and pruned with the run."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from history_runs import SERIALS, node_run, with_kernel_log

from rigcheck.cli import main
from rigcheck.history import store
from rigcheck.history.run_hook import remember_run
from rigcheck.history.schema import events

BOARD = SERIALS[1]  # GPU 1, moved to the bus the log's Xid 79 names


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")


def two_runs_of_one_boot(url: str) -> None:
    """node-17's runs at 10:00 and 10:05 read the same boot's log (uptime 300 s later). Written
    as the run hook writes them (store.write_run), without its drift check's spec loading."""
    engine = store.open_store(url)
    for started, uptime in (
        ("2026-11-02T10:00:00Z", 6781800.0),
        ("2026-11-02T10:05:00Z", 6782100.0),
    ):
        certificate, facts = node_run("node-17", started, xid_on_gpu1=True)
        store.write_run(engine, certificate, with_kernel_log(facts, uptime))
    engine.dispose()


def stored(url: str) -> list[dict]:
    engine = store.open_store(url)
    with engine.connect() as connection:
        found = [dict(r._mapping) for r in connection.execute(sa.select(events).order_by("id"))]
    engine.dispose()
    return found


def test_each_line_is_one_row_with_its_gpu_time_and_code_however_many_runs_read_it(url):
    two_runs_of_one_boot(url)
    rows = stored(url)
    # The log's Xid 79, the NVRM record of the same fall, and fatal SXid 20034 on 4 NVSwitch links.
    assert [(r["source"], r["code"], r["kind"]) for r in rows] == [
        ("xid", 79, None),
        ("nvrm", None, "fallen_off_bus"),
        *[("sxid", 20034, None)] * 4,
    ]
    assert len({r["run"] for r in rows}) == 1  # the first run read them; the second added none
    xid = rows[0]
    assert (xid["gpu"], xid["serial"], xid["bus_id"]) == (1, "masked…6782", "0000:91:00.0")
    # 10:00:00 less (6781800 - 6781741.548779) s, the line's stamp
    assert (xid["t_s"], xid["at"]) == (6781741.548779, "2026-11-02T09:59:01Z")
    assert rows[2]["gpu"] is None and rows[2]["bus_id"] == "0000:06:00.0"  # a switch, no GPU


def test_history_shows_the_node_s_events_and_the_board_s_own(url, tmp_path, capsys):
    two_runs_of_one_boot(url)
    page = tmp_path / "node-17.html"
    assert main(["history", "node-17", "--history", url, "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "kernel-log events: 6" in out
    assert "Xid 79" in out and "SXid 20034" in out and "fallen_off_bus" in out
    # the page has the table the terminal prints
    html = page.read_text()
    assert '<section data-events="6"><h2>kernel-log events: 6</h2>' in html
    assert "<th>time (UTC)</th><th>node</th><th>GPU</th><th>serial</th><th>event</th>" in html
    # the Xid 79 row: its time, node, GPU 1 and its masked serial
    assert "<td>2026-11-02T09:59:01Z</td><td>node-17</td><td>1</td><td>masked…6782</td>" in html
    assert html.count("<td>SXid 20034</td>") == 4 and "<td>fallen_off_bus</td>" in html
    assert main(["history", BOARD, "--history", url]) == 0
    board = capsys.readouterr().out
    assert "kernel-log events: 2" in board and "Xid 79" in board and "SXid" not in board


def test_events_go_with_the_run_that_read_them_first(url):
    two_runs_of_one_boot(url)
    engine = store.open_store(url)
    assert store.prune(engine, "2026-11-02T10:01:00", keep=10) == (1, 0)
    engine.dispose()
    assert stored(url) == []


def test_a_run_written_again_keeps_its_events_once(url):
    """Through the run hook, as a run records itself."""
    certificate, facts = node_run("node-17", "2026-11-02T10:00:00Z", xid_on_gpu1=True)
    facts = with_kernel_log(facts)
    assert remember_run(url, certificate, facts) == []
    assert remember_run(url, certificate, facts) == []
    assert len(stored(url)) == 6


# H100s in confidential-computing mode (NVIDIA/nvtrust#54): driver assertions, then the FSP boot
# command times out; no rule reads these lines. RM prints them with no level of its own, so the
# kernel logs them at its default, warning: as `dmesg -r` shows them ("<4>"; unexplained.py).
NVTRUST_54 = "https://github.com/NVIDIA/nvtrust/issues/54"


def with_unexplained_lines(facts: dict) -> dict:
    import json

    from history_runs import REPO

    from rigcheck.facts.kernel_log import reader

    cases = json.loads((REPO / "fixtures" / "realworld" / "kernel_log.json").read_text())
    case = next(c for c in cases["nvidia"] if c["source"] == NVTRUST_54)
    log = reader._events("dmesg", [f"<4>{line}" for line, _ in case["lines"]], None)
    return {**facts, "kernel_log": {**log, "uptime_s": 300.0}}


def test_driver_lines_no_rule_explains_are_stored_as_their_own_kind(url, capsys):
    certificate, facts = node_run("node-17", "2026-11-02T10:00:00Z")
    assert remember_run(url, certificate, with_unexplained_lines(facts)) == []
    rows = stored(url)
    assert [(r["source"], r["kind"]) for r in rows] == [("unexplained", "NVRM warn")] * 4
    assert rows[-1]["text"] == "NVRM: kfspPollForResponse_IMPL: FSP command timed out"
    assert rows[-1]["at"] == "2026-11-02T09:57:01Z"  # 10:00:00 less (300 - 121.802181) s
    assert main(["history", "node-17", "--history", url]) == 0
    out = capsys.readouterr().out
    assert "kernel-log events: 4" in out and out.count("unexplained NVRM warn") == 4
