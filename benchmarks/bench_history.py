"""The history store at 10,000, 100,000 and 1,000,000 stored runs (synthetic_store.py says how
they are sampled): the record step every run pays, `rigcheck history NODE`, `rigcheck fleet
--from-history`, and what one quick-tier run costs on disk. Stores are built once and kept in
$RIGCHECK_BENCH_DIR (default /tmp/rigcheck-bench); the 1M store takes minutes to build."""

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


def stored(size: int) -> str:
    """A store of `size` runs: 10,000 filled, then grown (synthetic_store.grow)."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    path = FOLDER / f"history-{size}.db"
    if not path.exists():
        base = FOLDER / "history-10000.db"
        if not base.exists():
            synthetic.fill(f"sqlite:///{base}.part", 10_000)
            os.replace(f"{base}.part", base)
        if size != 10_000:
            shutil.copy(base, f"{path}.part")
            synthetic.grow(f"sqlite:///{path}.part", size // 10_000)
            os.replace(f"{path}.part", path)
    return f"sqlite:///{path}"


@pytest.fixture(scope="module")
def quick():
    return synthetic.quick_run()


def quiet(*argv: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(list(argv))


@pytest.mark.parametrize("size", SIZES)
def test_record_step(benchmark, quick, size):
    """remember_run: board sightings, the write, the drift check against the node's series."""
    url = stored(size)
    certificate, facts = quick
    moments = iter(synthetic.END + dt.timedelta(minutes=5 * i) for i in range(1, 1000))

    def one_run():
        return (url, synthetic.run_of(certificate, NODE, next(moments)), facts), {}

    benchmark.group = "history record step"
    benchmark.extra_info["peak_mib"] = peak_mib(lambda: remember_run(*one_run()[0]))
    lines = benchmark.pedantic(remember_run, setup=one_run, rounds=3, iterations=1)
    assert not any(line.startswith("history not kept") for _, line in lines), lines


@pytest.mark.parametrize("size", SIZES)
def test_node_history(benchmark, size):
    url = stored(size)
    benchmark.group = "history node view"
    benchmark.extra_info["peak_mib"] = peak_mib(lambda: quiet("history", NODE, "--history", url))
    assert benchmark.pedantic(quiet, args=("history", NODE, "--history", url), rounds=2) == 0


@pytest.mark.parametrize("size", SIZES)
def test_fleet_from_history(benchmark, size, tmp_path):
    url = stored(size)
    argv = ("fleet", "--from-history", url, "-o", str(tmp_path / "fleet.html"), "--force")
    benchmark.group = "fleet --from-history (1,000 nodes)"
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
