"""Runs for the history tests: synthetic certificates built with the real certificate code (the
two-GPU H100 node of tests/reports/make_certificates.py, numbers invented there and here), and
live runs of the cpu class in a subprocess, as a user starts them."""

from __future__ import annotations

import copy
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_MAKER = REPO / "tests" / "reports" / "make_certificates.py"
_spec = importlib.util.spec_from_file_location("make_certificates", _MAKER)
maker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(maker)

SERIALS, UUIDS = maker.SERIALS, maker.UUIDS
HEALTHY = {"matmul_bf16_tflops": 900.0, "hbm_bandwidth_gbps": 3000.0}
# Written by hand for these tests in the form suites/facts/test_kernel_log.py writes it (the
# meaning from rigcheck/facts/kernel_log/xid_catalog.py); 0000:28:00.0 is GPU 1 of the synthetic
# node.
XID_79_GPU1 = (
    "Xid 79 x1 on GPU 1 (0000:28:00.0): GPU has fallen off the bus (lost from PCIe) (machine "
    "fault). To do: reboot; check power, riser/cable seating and cooling."
)
XID_79 = "the kernel log (journalctl -k -b, since boot) has GPU fault events: " + XID_79_GPU1


def node_run(
    node: str,
    started: str,
    figures: dict | None = None,
    serials: tuple[str, str] = SERIALS,
    xid_on_gpu1: bool = False,
) -> tuple[dict, dict]:
    """(certificate, unmasked facts) of one run of the synthetic node under another name."""
    values = {(f, gpu): v for f, v in HEALTHY.items() for gpu in (0, 1)}
    values.update(figures or {})
    failed = (
        maker.fact_check("test_no_machine_fault_xids", "test_kernel_log.py", "fail", XID_79)
        if xid_on_gpu1
        else None
    )
    facts = maker.machine("550.54.15", "2.5.1+cu124")
    facts["host"]["hostname"] = node
    # Stands for a live run: the store keeps a synthetic snapshot's GPUs never (run_hook.py).
    facts["origin"] = {"kind": "live", "note": "tests/history: a live run's facts, as made up"}
    for device, serial in zip(facts["devices"], serials, strict=True):
        device["serial"], device["uuid"] = serial, uuid_of(serial)  # a board keeps both
    original = maker.machine
    maker.machine = lambda *_: copy.deepcopy(facts)  # the certificate is built from these facts
    try:
        certificate = maker.certificate("550.54.15", "2.5.1+cu124", values, started, failed)
    finally:
        maker.machine = original
    certificate["run"]["id"] = f"{started}-{node}"
    return certificate, facts


def uuid_of(serial: str) -> str:
    known = dict(zip(SERIALS, UUIDS, strict=True))
    return known.get(serial) or f"GPU-00000000-0000-4000-8000-{int(serial):012d}"


def live_cpu_run(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """A live run of the cpu class's host facts (a few seconds), from a folder outside the clone."""
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "cpu", "-k", "host",
        "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"), str(REPO / "suites"), *args,
    ]  # fmt: skip
    full_env = {**clean_env(), "RIGCHECK_REPORT_DIR": str(tmp / "reports"), **env}
    return subprocess.run(
        command, cwd=tmp, env=full_env, capture_output=True, text=True, timeout=240
    )


def rigcheck(*args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {**clean_env(), "COLUMNS": "200", **env}
    return subprocess.run(
        [sys.executable, "-m", "rigcheck", *args],
        env=full_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def clean_env() -> dict[str, str]:
    """This process's environment less the self-tests' RIGCHECK_HISTORY=none (tests/conftest.py):
    a test names its store, or leaves the default (the data folder) to be found."""
    return {k: v for k, v in os.environ.items() if k != "RIGCHECK_HISTORY"}


def parsed_samples(text: str) -> dict[tuple[str, tuple], float]:
    """(name, sorted labels) -> value, read by prometheus_client's own parser (which refuses a
    malformed exposition)."""
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


# A real HGX node's kernel log (fixtures/realworld/kernel_log.json, quoted from gpud's SXid page:
# https://github.com/leptonai/gpud/blob/main/components/accelerator/nvidia/sxid/README.md): GPU
# 0000:91:00.0 falls off the bus (Xid 79 and the NVRM record), then fatal SXid 20034 on
# NVSwitches.
GPUD_SXID = "https://github.com/leptonai/gpud/blob/main/components/accelerator/nvidia/sxid"
LOG_UPTIME_S = 6781800.0  # the kernel's uptime when a run read that log: ~78 days after boot


def with_kernel_log(facts: dict, uptime_s: float = LOG_UPTIME_S) -> dict:
    """The facts with that log read by the real reader, GPU 1 moved to the bus it names."""
    import json

    from rigcheck.facts.kernel_log import reader

    cases = json.loads((REPO / "fixtures" / "realworld" / "kernel_log.json").read_text())
    case = next(c for c in cases["nvidia"] if c["source"].startswith(GPUD_SXID))
    log = reader._events("dmesg", [line for line, _ in case["lines"]], None)
    facts = copy.deepcopy(facts)
    facts["kernel_log"] = {**log, "uptime_s": uptime_s}
    facts["devices"][1]["pci"]["bus_id"] = "0000:91:00.0"
    return facts
