"""The history store on SQLite: runs written and read back, a failing GPU moved to another node
flagged, verdict changes, and a store that cannot be written costing one warning line."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from history_runs import SERIALS, XID_79_GPU1, node_run

from rigcheck.cli import main
from rigcheck.history import store
from rigcheck.history.location import default_url, store_url
from rigcheck.history.run_hook import remember_run
from rigcheck.history.schema import HEAD, metadata

MOVED = SERIALS[1]  # GPU 1 of node-17, the one Xid 79 names


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "220")


def test_a_failing_gpu_moved_to_another_node_is_flagged_there(url, capsys):
    assert remember_run(url, *node_run("node-17", "2026-11-02T10:00:00Z", xid_on_gpu1=True)) == []
    # The board is pulled from node-17 and fitted to node-03 as its GPU 0.
    certificate, facts = node_run("node-03", "2026-11-09T08:00:00Z", serials=(MOVED, "999001"))
    lines = remember_run(url, certificate, facts)
    assert lines == [
        (
            "red",
            f"GPU 0 (serial masked…6782) was seen failing on node-17 on 2026-11-02: {XID_79_GPU1}",
        )
    ]
    assert main(["history", MOVED, "--history", url]) == 0
    out = capsys.readouterr().out
    assert "GPU 1652923456782: 2 runs" in out
    assert (
        "GPU serial masked…6782 (GPU 0 on node-03, 2026-11-09) was seen failing on node-17 on "
        f"2026-11-02: {XID_79_GPU1}" in " ".join(out.split())
    )
    # The board's healthy neighbour on node-17 (GPU 0) is not flagged anywhere.
    neighbour = (SERIALS[0], "999002")
    assert remember_run(url, *node_run("node-05", "2026-11-10T08:00:00Z", serials=neighbour)) == []


def test_a_masked_tail_finds_the_board_and_the_full_serial_is_never_stored(url, tmp_path, capsys):
    remember_run(url, *node_run("node-17", "2026-11-02T10:00:00Z", xid_on_gpu1=True))
    assert main(["history", "masked…6782", "--history", url]) == 0
    assert "node-17" in capsys.readouterr().out
    raw = (tmp_path / "history.db").read_bytes()
    assert all(s.encode() not in raw for s in SERIALS)


def test_a_failure_about_the_machine_flags_no_board(url):
    certificate, facts = node_run("node-17", "2026-11-02T10:00:00Z")
    certificate["checks"][2].update(outcome="fail", message="driver 525.60.13 is too old")
    remember_run(url, certificate, facts)
    assert remember_run(url, *node_run("node-03", "2026-11-09T08:00:00Z")) == []  # same boards


def test_runs_and_verdict_changes_of_one_node(url, capsys):
    remember_run(url, *node_run("node-17", "2026-11-01T10:00:00Z"))
    remember_run(url, *node_run("node-17", "2026-11-02T10:00:00Z", xid_on_gpu1=True))
    remember_run(url, *node_run("node-17", "2026-11-03T10:00:00Z"))
    remember_run(url, *node_run("node-18", "2026-11-03T11:00:00Z"))
    assert main(["history", "node-17", "--history", url]) == 0
    out = capsys.readouterr().out
    assert "node node-17: 3 runs" in out and "node-18" not in out
    assert "2026-11-02T10:00 node-17: pass -> fail (failed: test_no_machine_fault_xids)" in out
    assert "2026-11-03T10:00 node-17: fail -> pass" in out
    assert "figures over time" in out and "matmul_bf16_tflops gpu1" in out


def test_a_run_written_twice_is_kept_once(url):
    certificate, facts = node_run("node-17", "2026-11-02T10:00:00Z")
    remember_run(url, certificate, facts)
    remember_run(url, certificate, facts)  # the same run id: replaced, not doubled
    engine = store.open_store(url)
    runs = store.load_runs(engine)
    kept = store.certificate_of(engine, runs[0]["id"])
    engine.dispose()
    assert len(runs) == 1 and len(runs[0]["figures"]) == 4 and len(runs[0]["gpus"]) == 2
    assert kept == certificate


@pytest.mark.parametrize(
    "bad_url",
    [
        "sqlite:////proc/rigcheck-no-such-folder/history.db",  # not even root can write /proc
        "postgresql+psycopg://nobody@127.0.0.1:1/rigcheck?connect_timeout=2",  # nothing listens
        "nosuchdialect://x",
    ],
)
def test_a_store_that_cannot_be_written_is_one_warning_line(bad_url):
    lines = remember_run(bad_url, *node_run("node-17", "2026-11-02T10:00:00Z"))
    assert len(lines) == 1 and lines[0][0] == "yellow"
    assert lines[0][1].startswith("history not kept: ")
    assert "The run's verdict is unaffected" in lines[0][1]
    assert "\n" not in lines[0][1]


def test_a_database_server_that_does_not_answer_is_given_up_on():
    from sqlalchemy.engine import make_url

    assert store.connect_args(make_url("postgresql+psycopg://h/db")) == {"connect_timeout": 10}
    assert store.connect_args(make_url("postgresql+psycopg://h/db?connect_timeout=3")) == {}
    assert store.connect_args(make_url("sqlite:///x.db")) == {}


def test_the_store_url_comes_from_the_option_then_the_env_then_the_data_folder(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("RIGCHECK_HISTORY")
    assert default_url() == f"sqlite:///{tmp_path}/rigcheck/history.db"
    assert store_url(None) == default_url()
    monkeypatch.setenv("RIGCHECK_HISTORY", "sqlite:///env.db")
    assert store_url(None) == "sqlite:///env.db"
    assert store_url("sqlite:///given.db") == "sqlite:///given.db"
    assert store_url("None") is None
    monkeypatch.setenv("RIGCHECK_HISTORY", "none")
    assert store_url(None) is None
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RIGCHECK_HISTORY")
    assert default_url() == f"sqlite:///{tmp_path}/home/.local/share/rigcheck/history.db"


def test_the_migrations_make_the_tables_the_code_declares(url):
    """A changed table with no new alembic revision fails here, not on a user's store."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    engine = store.open_store(url)
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), metadata)
        version = connection.execute(sa.text("select version_num from alembic_version")).scalar()
    engine.dispose()
    assert differences == [] and version == HEAD


def test_an_unknown_name_is_exit_2_naming_the_nodes(url, capsys):
    remember_run(url, *node_run("node-17", "2026-11-02T10:00:00Z"))
    assert main(["history", "node-99", "--history", url]) == 2
    err = capsys.readouterr().err
    assert "no node and no GPU serial or UUID 'node-99'" in err and "(nodes: node-17)" in err


def test_the_html_page_plots_each_series_without_scripts(url, tmp_path):
    for day, value in ((1, 900.0), (2, 890.0), (3, 880.0)):
        figures = {("matmul_bf16_tflops", 0): value}
        remember_run(url, *node_run("node-17", f"2026-11-0{day}T10:00:00Z", figures))
    page = tmp_path / "history.html"
    assert main(["history", "node-17", "--history", url, "--html", str(page)]) == 0
    html = page.read_text()
    assert html.count("<svg") == 4 and "<script" not in html and "http" not in html
    assert 'data-series="node-17: matmul_bf16_tflops gpu0"' in html
    assert main(["history", "node-17", "--history", url, "--html", str(page)]) == 2


def test_a_board_s_view_holds_its_own_figures_and_failures_only(url):
    from rigcheck.history.report import build_view

    remember_run(url, *node_run("node-17", "2026-11-02T10:00:00Z", xid_on_gpu1=True))
    remember_run(url, *node_run("node-03", "2026-11-09T08:00:00Z", serials=(MOVED, "999001")))
    engine = store.open_store(url)
    view = build_view(engine, MOVED)
    engine.dispose()
    # GPU 1 on node-17, GPU 0 on node-03: the same board under two indexes.
    assert [{f["label"] for f in run["figures"]} for run in view.runs] == [{"gpu1"}, {"gpu0"}]
    assert [[c["gpu"] for c in run["failed"]] for run in view.runs] == [[1], []]
    node = build_view(store.open_store(url), "node-17")
    assert {f["label"] for f in node.runs[0]["figures"]} == {"gpu0", "gpu1"}


def test_the_terminal_shows_at_most_eight_figure_columns():
    from rigcheck.history.report import MAX_COLUMNS, View, figures_table

    figures = [
        {"figure": f"f{i}_gbps", "label": "gpu0", "measured": 1.0, "unit": "GB/s"}
        for i in range(10)
    ]
    run = {"started_at": "2026-11-02T10:00:00Z", "node": "n", "figures": figures}
    table = figures_table(View("t", [run]))
    assert len(table.columns) == 2 + MAX_COLUMNS == 10
    assert "the first 8 of 10: all of them with --html FILE" in table.title
