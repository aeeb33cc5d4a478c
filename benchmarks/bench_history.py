"""The history store at 10,000, 100,000 and 1,000,000 stored runs (synthetic_store.py says how
they are sampled): the record step every run pays, `rigcheck history NODE`, `rigcheck fleet
--from-history`, and what one quick-tier run costs on disk. Stores are built once and kept in
$RIGCHECK_BENCH_DIR (default /tmp/rigcheck-bench); the 1M store takes minutes to build.

RIGCHECK_BENCH_POSTGRES=URL adds the same at 1M runs on PostgreSQL (its own groups): URL names an
empty database, filled once (~20 minutes on 2 cores) and reused while it holds the 1M runs
(README, "Scale", says how to start a private server for it)."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import shutil
from pathlib import Path

import pytest
import synthetic_store as synthetic
from scaling import peak_mib

from rigcheck.cli import main
from rigcheck.history import store
from rigcheck.history.run_hook import remember_run

SIZES = (10_000, 100_000, 1_000_000)
FOLDER = Path(os.environ.get("RIGCHECK_BENCH_DIR", "/tmp/rigcheck-bench"))
NODE = synthetic.node_name(7)
POSTGRES = os.environ.get("RIGCHECK_BENCH_POSTGRES")
STORES = [pytest.param("sqlite", size, id=f"sqlite-{size}") for size in SIZES] + (
    [pytest.param("postgresql", 1_000_000, id="postgresql-1000000")] if POSTGRES else []
)
ON = {"sqlite": "", "postgresql": " (PostgreSQL)"}  # a group per backend: each fits its exponent


def stored(size: int) -> str:
    """A store of `size` runs: 10,000 filled, then grown (synthetic_store.grow). v2: stores built
    before failures were counted over the store hold no failure, and are not reused."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    path = FOLDER / f"history-v2-{size}.db"
    # Each process builds in its own file (a 1M store built while two runs may have shared one
    # .part was malformed: PRAGMA quick_check, "Rowid 9960 out of order").
    part = f".{os.getpid()}.part"
    if not path.exists():
        base = FOLDER / "history-v2-10000.db"
        if not base.exists():
            synthetic.fill(f"sqlite:///{base}{part}", 10_000)
            synthetic.add_events(f"sqlite:///{base}{part}")
            os.replace(f"{base}{part}", base)
        if size != 10_000:
            shutil.copy(base, f"{path}{part}")
            synthetic.grow(f"sqlite:///{path}{part}", size // 10_000)
            synthetic.add_events(f"sqlite:///{path}{part}")
            os.replace(f"{path}{part}", path)
    return f"sqlite:///{path}"


def stored_postgres(size: int) -> str:
    """$RIGCHECK_BENCH_POSTGRES filled with `size` runs, unless it holds them already."""
    engine = store.open_store(POSTGRES)
    held = store.count_runs(engine)
    engine.dispose()
    if held == 0:
        synthetic.fill(POSTGRES, 10_000)
        synthetic.grow(POSTGRES, size // 10_000)
        synthetic.add_events(POSTGRES)
    elif held < size:
        pytest.fail(f"RIGCHECK_BENCH_POSTGRES holds {held:,} runs: name an empty database")
    return POSTGRES


def store_of(backend: str, size: int) -> str:
    return stored(size) if backend == "sqlite" else stored_postgres(size)


@pytest.fixture(scope="module")
def quick():
    return synthetic.quick_run()


def quiet(*argv: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(list(argv))


@pytest.mark.parametrize(("backend", "size"), STORES)
def test_record_step(benchmark, quick, backend, size):
    """remember_run: board sightings, the write, the drift check against the node's series."""
    url = store_of(backend, size)
    certificate, facts = quick
    moments = iter(synthetic.END + dt.timedelta(minutes=5 * i) for i in range(1, 1000))

    def one_run():
        return (url, synthetic.run_of(certificate, NODE, next(moments)), facts), {}

    benchmark.group = "history record step" + ON[backend]
    benchmark.extra_info["peak_mib"] = peak_mib(lambda: remember_run(*one_run()[0]))
    lines = benchmark.pedantic(remember_run, setup=one_run, rounds=3, iterations=1)
    assert not any(line.startswith("history not kept") for _, line in lines), lines


@pytest.mark.parametrize(("backend", "size"), STORES)
def test_node_history(benchmark, backend, size):
    url = store_of(backend, size)
    benchmark.group = "history node view" + ON[backend]
    benchmark.extra_info["peak_mib"] = peak_mib(lambda: quiet("history", NODE, "--history", url))
    assert benchmark.pedantic(quiet, args=("history", NODE, "--history", url), rounds=2) == 0


@pytest.mark.parametrize(("backend", "size"), STORES)
def test_fleet_from_history(benchmark, backend, size, tmp_path):
    url = store_of(backend, size)
    argv = ("fleet", "--from-history", url, "-o", str(tmp_path / "fleet.html"), "--force")
    benchmark.group = "fleet --from-history (1,000 nodes)" + ON[backend]
    benchmark.extra_info["peak_mib"] = peak_mib(lambda: quiet(*argv))
    assert benchmark.pedantic(quiet, args=argv, rounds=1) in (0, 1)


@pytest.mark.parametrize("size", (60, 180))
def test_bytes_per_quick_run(benchmark, quick, size, tmp_path):
    """Real quick-tier runs written by write_run on 3 nodes: the store's size per run once the
    retention window (each node's newest 10 passes keep a certificate) is full."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    certificate, facts = quick
    engine = store.open_store(url)

    def write_all():
        for i in range(size):
            node = synthetic.node_name(i % 3)
            at = synthetic.END + dt.timedelta(minutes=5 * (i // 3))
            store.write_run(engine, synthetic.run_of(certificate, node, at), facts)

    benchmark.group = "history write_run, per run (bytes in extra_info)"
    benchmark.pedantic(write_all, rounds=1, iterations=1)
    engine.dispose()
    per_run = (tmp_path / "store.db").stat().st_size / size
    benchmark.extra_info["bytes_per_run"] = round(per_run)
    print(f"\n{size} quick-tier runs: {per_run / 1024:.1f} KiB per run")
