"""Record a live burn-in: every device loaded at once, telemetry sampled, one trace written.

Run as a child process by the pytest plugin (so the test process never holds a GPU context):

    python -m rigcheck.burnin.record --class h100 --backend cuda --precision bf16 \
        --duration 300 --out reports/RUN/burnin-trace.json

One thread per device runs the GEMM phase, then the memory phase; one sampler thread reads
every device's telemetry meanwhile. Deterministic cuBLAS (CUBLAS_WORKSPACE_CONFIG) makes
repeats of the same GEMM bit-identical; devices are numbered in PCI bus order, as NVML does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import socket
import sys
import threading
import time
from typing import Any

from rigcheck.burnin.trace import KIND, SCHEMA_VERSION, save_trace
from rigcheck.facts.fabric.rdma_counters import sample_ports

GEMM_SHARE = 0.8  # of the duration; the rest is the memory phase
JOIN_GRACE_S = 30.0  # a device still busy this long after the end has hung
GIB = 2**30


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")  # torch's order = NVML's
    import torch

    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    trace = record(torch, args)
    trace["origin"].update(recorded_at=started, host=socket.gethostname())
    save_trace(args.out, trace)
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="record a burn-in trace (rigcheck's --burn-in)")
    p.add_argument("--class", dest="klass", required=True)
    p.add_argument("--backend", choices=["cuda", "rocm", "cpu"], required=True)
    p.add_argument("--precision", choices=["bf16", "fp16", "fp32"], required=True)
    p.add_argument("--duration", type=float, required=True, help="seconds")
    p.add_argument("--out", required=True)
    p.add_argument("--memory-fraction", type=float, default=0.9)
    p.add_argument("--memory-max-gib", type=float, default=None)
    p.add_argument("--interval", type=float, default=0.2, help="sampling interval, seconds")
    return p


def record(torch: Any, args: argparse.Namespace) -> dict[str, Any]:
    backends = {"cuda": _cuda, "rocm": _rocm}
    backend = backends[args.backend](torch) if args.backend in backends else _host()
    rdma_before = sample_ports()  # a link that flaps under load shows in these (rigcheck/rdma)
    t0 = time.monotonic()
    wall0 = time.time()
    gemm_until, end = t0 + args.duration * GEMM_SHARE, t0 + args.duration
    results: list[dict[str, Any]] = [{} for _ in backend.devices]
    workers = [
        threading.Thread(
            target=_load_device,
            args=(torch, dev, args, t0, gemm_until, end, results[i]),
            name=f"burn-in {dev}",
            daemon=True,
        )
        for i, dev in enumerate(backend.devices)
    ]
    from rigcheck.burnin.sampler import Sampler

    with Sampler(backend.readers, t0, args.interval) as sampler:
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=max(1.0, end - time.monotonic()) + JOIN_GRACE_S)

    devices = []
    for i, entry in enumerate(backend.entries):
        entry.update(samples=sampler.columns[i], counters_after=backend.counters(i))
        entry.update(windows=results[i].get("windows") or _no_windows())
        entry["memory_test"] = results[i].get("memory_test") or {"error": "did not run"}
        if "error" in results[i]:
            entry["error"] = results[i]["error"]
        elif workers[i].is_alive():
            entry["error"] = "the load did not finish within its time (a hung kernel?)"
        devices.append(entry)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "origin": {
            "kind": "live",
            "note": "recorded by `pytest --burn-in` (rigcheck.burnin.record)",
        },
        "class": args.klass,
        "backend": args.backend,
        "precision": args.precision,
        "duration_s": args.duration,
        "interval_s": args.interval,
        "phases": [
            {"name": "gemm", "start_s": 0.0, "end_s": round(gemm_until - t0, 3)},
            {"name": "memory", "start_s": round(gemm_until - t0, 3), "end_s": args.duration},
        ],
        "devices": devices,
        "events": {
            "xid": backend.xid(wall0, time.time()),
            "nvrm": backend.nvrm(wall0, time.time()),
        },
        "unavailable": backend.unavailable,
        "sampler": {"busy_s": round(sampler.busy_s, 3), "ticks": len(sampler.columns[0]["t_s"])},
        "rdma_counters": {"before": rdma_before, "after": sample_ports()},
    }


def _load_device(torch, device, args, t0, gemm_until, end, result) -> None:
    """GEMM phase, then the memory phase, on one device; failures are recorded, not raised."""
    from rigcheck.burnin.gemm import gemm_phase

    try:
        if device.type == "cuda":
            torch.cuda.set_device(device)
        result["windows"] = gemm_phase(torch, device, args.precision, t0, gemm_until)
        result["memory_test"] = _memory_phase(torch, device, args, end)
    except Exception as exc:  # an error on one GPU is that GPU's verdict, not a crash
        result["error"] = f"{type(exc).__name__}: {exc}"


def _memory_phase(torch, device, args, end) -> dict[str, Any]:
    from rigcheck.burnin.memtest import pattern_test

    if device.type == "cuda":
        torch.cuda.empty_cache()
        free = torch.cuda.mem_get_info(device)[0]
    else:
        import psutil

        free = psutil.virtual_memory().available
    size = int(free * args.memory_fraction)
    capped = args.memory_max_gib is not None and size > args.memory_max_gib * GIB
    if capped:
        size = int(args.memory_max_gib * GIB)
    buf = torch.empty(size // 4, dtype=torch.int32, device=device)
    result = pattern_test(buf, end)
    del buf
    return {"bytes_free": free, "capped": capped, **result}


def _no_windows() -> dict[str, list]:
    return {k: [] for k in ("t_s", "tflops", "checksum", "checks", "mismatches")}


class _Backend:
    """What record() needs from a kind of device: the devices, their readers and counters."""

    def __init__(self, devices, entries, readers, counters, unavailable, xid, nvrm):
        self.devices, self.entries, self.readers = devices, entries, readers
        self.counters, self.unavailable, self.xid = counters, unavailable, xid
        self.nvrm = nvrm  # NVRM fault records (rigcheck.burnin.nvrm_events)


def _cuda(torch: Any) -> _Backend:
    import pynvml as nvml

    from rigcheck.burnin import counters as nv
    from rigcheck.burnin.events import read_xid_events
    from rigcheck.burnin.nvrm_events import read_nvrm_events
    from rigcheck.burnin.sampler import nvml_reader

    platform_matches(torch, "cuda")
    nvml.nvmlInit()
    count = torch.cuda.device_count()
    if count == 0:
        raise SystemExit("rigcheck burn-in: torch sees no CUDA device")
    handles = [_nvml_handle(nvml, torch, i) for i in range(count)]
    entries = [
        {
            "id": f"gpu{i}",
            "index": i,
            **nv.identity(nvml, h),
            "limits": nv.limits(nvml, h),
            "counters_before": nv.counters(nvml, h),
        }
        for i, h in enumerate(handles)
    ]
    return _Backend(
        devices=[torch.device("cuda", i) for i in range(count)],
        entries=entries,
        readers=[nvml_reader(nvml, h) for h in handles],
        counters=lambda i: nv.counters(nvml, handles[i]),
        unavailable={},
        xid=read_xid_events,
        nvrm=read_nvrm_events,
    )


# What a class's backend needs of the torch build: ROCm's torch drives AMD GPUs through the
# torch.cuda API too, so only torch.version tells the two apart.
BUILDS = {
    "cuda": ("cuda", "a CUDA build of torch on an NVIDIA node", "NVIDIA"),
    "rocm": ("hip", "a ROCm build of torch on an AMD node", "AMD"),
}


def platform_matches(torch: Any, backend: str) -> None:
    """One line and exit 1 (SystemExit) when the torch build cannot drive the class's GPUs."""
    attribute, needed, vendor = BUILDS[backend]
    cuda, hip = (getattr(torch.version, a, None) for a in ("cuda", "hip"))
    build = f"ROCm {hip}" if hip else f"CUDA {cuda}" if cuda else "CPU-only"
    if not getattr(torch.version, attribute, None) or (backend == "cuda" and hip):
        raise SystemExit(
            f"rigcheck burn-in: this class's GPUs are {vendor} and torch {torch.__version__} is "
            f"a {build} build: the burn-in needs {needed} (the machine's own torch)"
        )


def _rocm(torch: Any) -> _Backend:
    """AMD GPUs: ROCm torch loads them (torch.cuda), amdsmi reads them, matched by bus id."""
    from rigcheck.burnin import amd_sampler as amd
    from rigcheck.facts.amd.smi import load_amdsmi

    platform_matches(torch, "rocm")
    # The GEMM checks compare bits: rocBLAS repeats a result bit for bit only with its atomics
    # off (rocBLAS docs, "Bitwise Reproducibility": ROCm/rocBLAS#1460), which PyTorch's
    # deterministic mode asks of every rocBLAS handle (pytorch/pytorch#48654); warn_only: an op
    # without a deterministic kernel warns rather than stops the load.
    torch.use_deterministic_algorithms(True, warn_only=True)
    smi = load_amdsmi()
    smi.amdsmi_init()
    count = torch.cuda.device_count()
    if count == 0:
        raise SystemExit("rigcheck burn-in: ROCm torch sees no GPU (check HIP_VISIBLE_DEVICES)")
    by_bus = amd.handles_by_bus(smi)
    buses = [_torch_bus(torch, i, sorted(by_bus), count) for i in range(count)]
    handles = [by_bus[b] for b in buses]
    entries = [
        {
            "id": f"gpu{i}",
            "index": i,
            "name": torch.cuda.get_device_name(i) or "unknown AMD GPU",
            "bus_id": buses[i],
            "limits": amd.limits(smi, h),
            "counters_before": amd.counters(smi, h),
        }
        for i, h in enumerate(handles)
    ]
    none = {"error": amd.NO_KERNEL_EVENTS}
    return _Backend(
        devices=[torch.device("cuda", i) for i in range(count)],
        entries=entries,
        readers=[amd.amd_reader(smi, h) for h in handles],
        counters=lambda i: amd.counters(smi, handles[i]),
        unavailable=amd.unavailable(smi),
        xid=lambda start, end: dict(none),
        nvrm=lambda start, end: dict(none),
    )


def _torch_bus(torch: Any, i: int, amdsmi_buses: list[str], count: int) -> str:
    """The bus id of torch's GPU i, as amdsmi lists it: torch's own where it gives one, else
    amdsmi's i-th in bus order (ROCm numbers GPUs in PCI bus order when none is hidden)."""
    from rigcheck.measure.device import _torch_bus_id

    bus = _torch_bus_id(torch.cuda.get_device_properties(i))
    if bus is not None and bus.lower() in amdsmi_buses:
        return bus.lower()
    if bus is None and count == len(amdsmi_buses) and not _hidden():
        return amdsmi_buses[i]
    raise SystemExit(
        f"rigcheck burn-in: torch's GPU {i} ({bus or 'no PCI bus id'}) is not among the GPUs "
        f"amdsmi lists ({', '.join(amdsmi_buses)}); unset HIP_VISIBLE_DEVICES / "
        "ROCR_VISIBLE_DEVICES (a burn-in loads every GPU of the node)"
    )


def _hidden() -> bool:
    return any(os.environ.get(k) for k in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                             "CUDA_VISIBLE_DEVICES"))  # fmt: skip


def _nvml_handle(nvml: Any, torch: Any, i: int) -> Any:
    """NVML's handle for torch's GPU i: by PCI bus id (as the perf suite matches them), else by
    index, which CUDA_DEVICE_ORDER=PCI_BUS_ID makes NVML's order when nothing is hidden."""
    from rigcheck.measure.device import _torch_bus_id

    bus = _torch_bus_id(torch.cuda.get_device_properties(i))
    if bus is not None:
        return nvml.nvmlDeviceGetHandleByPciBusId(bus)
    if os.environ.get("CUDA_VISIBLE_DEVICES"):
        raise SystemExit(
            "rigcheck burn-in: cannot match torch's GPUs to NVML's with CUDA_VISIBLE_DEVICES "
            "set and no PCI bus id from torch; unset it (a burn-in loads every GPU of the node)"
        )
    return nvml.nvmlDeviceGetHandleByIndex(i)


def _host() -> _Backend:
    from rigcheck.burnin.sampler import host_reader

    reader, unavailable, limits = host_reader()
    none = {"error": "the cpu class has no error counters"}
    entry = {
        "id": "cpu",
        "index": None,
        "name": _cpu_name(),
        "bus_id": None,
        "limits": limits,
        "counters_before": none,
    }
    return _Backend(
        devices=[_cpu_device()],
        entries=[entry],
        readers=[reader],
        counters=lambda i: none,
        unavailable=unavailable,
        xid=lambda start, end: {"error": "the cpu class has no Xid events (NVIDIA only)"},
        nvrm=lambda start, end: {"error": "the cpu class has no NVRM records (NVIDIA only)"},
    )


def _cpu_name() -> str:
    """The CPU's model as /proc/cpuinfo names it (Linux), else what platform knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_device():
    import torch

    return torch.device("cpu")


if __name__ == "__main__":
    sys.exit(main())
