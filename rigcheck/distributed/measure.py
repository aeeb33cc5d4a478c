"""The timed collectives and peer copies, run inside a torchrun worker (torch imported there).

Definitions follow nccl-tests (doc/PERFORMANCE.md): algbw = bytes / time; busbw = algbw x
2(n-1)/n for all-reduce and x (n-1)/n for all-gather and reduce-scatter, where bytes is the full
buffer (all-gather's output, reduce-scatter's input). Each iteration is timed alone between a
barrier and a device synchronize, warm-up excluded; the median is reported. Every result is
checked against the exact answer after the timed loop.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from itertools import combinations
from typing import Any

BUSBW_FACTOR: dict[str, Callable[[int], float]] = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
}
GB = 1e9
CHECK_MODULUS = 997  # the all-reduce check's pattern repeats every 997 elements


def bandwidth(op: str, nbytes: int, seconds: float, world: int) -> dict[str, float]:
    algbw = nbytes / seconds / GB
    return {"algbw_gbps": algbw, "busbw_gbps": algbw * BUSBW_FACTOR[op](world)}


class Collectives:
    """One rank's view of the process group: timed, verified collectives on its device."""

    def __init__(self, torch, dist, device, progress, iters: int, warmup: int):
        self.torch, self.dist, self.device = torch, dist, device
        self.progress, self.iters, self.warmup = progress, iters, warmup
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.rank_sum = self.world * (self.world + 1) // 2  # sum over ranks of (rank + 1)

    def sync(self) -> None:
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def barrier(self) -> None:
        self.dist.barrier()
        self.sync()

    def check_allreduce(self, elements: int) -> dict[str, Any]:
        """Rank r sends (i mod 997) * (r + 1) at position i: the sum is exact in int32 and
        differs along the buffer, so a dropped, doubled or misplaced chunk shows."""
        torch = self.torch
        self.progress.stage("allreduce_check", f"{elements} int32 elements")
        base = torch.arange(elements, device=self.device, dtype=torch.int64) % CHECK_MODULUS
        x = (base * (self.rank + 1)).to(torch.int32)
        self.progress.in_collective(True)
        self.dist.all_reduce(x)
        self.sync()
        self.progress.in_collective(False)
        want = (base * self.rank_sum).to(torch.int32)
        wrong = (x != want).nonzero().flatten()
        found = {"ok": wrong.numel() == 0, "elements": elements, "wrong": wrong.numel()}
        if wrong.numel():
            i = int(wrong[0])
            found["first_wrong"] = {"index": i, "got": int(x[i]), "expected": int(want[i])}
        return found

    def _timed(self, op: str, nbytes: int, prepare, run) -> dict[str, Any]:
        times = []
        total = self.warmup + self.iters
        for i in range(total):
            self.progress.stage(op, f"iteration {i + 1}/{total}, {nbytes} bytes")
            prepare()
            self.progress.in_collective(True)
            self.barrier()
            start = time.perf_counter()
            run()
            self.sync()
            seconds = time.perf_counter() - start
            self.progress.in_collective(False)
            if i >= self.warmup:
                times.append(seconds)
        median = statistics.median(times)
        return {
            "bytes": nbytes,
            "dtype": "float32",
            "iters": self.iters,
            "warmup": self.warmup,
            "times_s": times,
            "median_s": median,
            **bandwidth(op, nbytes, median, self.world),
        }

    def allreduce(self, big) -> dict[str, Any]:
        """In place on the whole buffer, refilled with rank + 1 before each iteration."""
        found = self._timed(
            "allreduce",
            big.numel() * 4,
            lambda: big.fill_(self.rank + 1),
            lambda: self.dist.all_reduce(big),
        )
        found["verified"] = bool((big == self.rank_sum).all())
        return found

    def allgather(self, big, chunk) -> dict[str, Any]:
        gather = getattr(self.dist, "all_gather_single", None) or self.dist.all_gather_into_tensor
        chunk.fill_(self.rank + 1)
        found = self._timed("allgather", big.numel() * 4, lambda: None, lambda: gather(big, chunk))
        want = self.torch.arange(1, self.world + 1, device=self.device, dtype=big.dtype)
        found["verified"] = bool((big.view(self.world, -1) == want.view(-1, 1)).all())
        return found

    def reducescatter(self, big, chunk) -> dict[str, Any]:
        scatter = getattr(self.dist, "reduce_scatter_single", None)
        scatter = scatter or self.dist.reduce_scatter_tensor
        found = self._timed(
            "reducescatter",
            big.numel() * 4,
            lambda: big.fill_(self.rank + 1),
            lambda: scatter(chunk, big),
        )
        found["verified"] = bool((chunk == self.rank_sum).all())
        return found

    def buffers(self, nbytes: int):
        """One buffer of nbytes (a multiple of 4 x world) and a 1/world chunk of it."""
        elements = max(self.world, nbytes // 4 // self.world * self.world)
        big = self.torch.empty(elements, dtype=self.torch.float32, device=self.device)
        chunk = self.torch.empty(
            elements // self.world, dtype=self.torch.float32, device=self.device
        )
        return big, chunk


def peer_copies(torch, nbytes: int, iters: int, warmup: int, progress) -> dict[str, Any]:
    """Copy-engine copies between every pair of this process's GPUs, as p2pBandwidthLatencyTest.

    Each GPU holds the same random bytes (from one host buffer) and an empty destination; a copy
    a -> b lands in b's destination, which is zeroed first and compared with b's own replica
    after the timed loop. Bidirectional runs a -> b and b -> a at once on separate streams.
    """
    count = torch.cuda.device_count()
    if count < 2:
        return {"skipped": f"{count} GPU visible to this process: no pair to copy between"}
    gen = torch.Generator().manual_seed(20261122)
    host = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=gen)
    devices = [torch.device("cuda", i) for i in range(count)]
    replicas = [host.to(d) for d in devices]
    targets = [torch.empty_like(r) for r in replicas]
    # Per GPU: two copy streams and two fence streams (see _PairCopy._run).
    streams = [[torch.cuda.Stream(d) for _ in range(4)] for d in devices]
    pairs = []
    for a, b in combinations(range(count), 2):
        progress.stage("p2p", f"GPU {a} <-> GPU {b}")
        copy = _PairCopy(torch, replicas, targets, streams, iters, warmup)
        pairs.append(copy.measure(a, b, nbytes))
    return {
        "bytes": nbytes,
        "iters": iters,
        "warmup": warmup,
        "devices": [_device_facts(torch, i) for i in range(count)],
        "pairs": pairs,
    }


class _PairCopy:
    def __init__(self, torch, replicas, targets, streams, iters, warmup):
        self.torch, self.replicas, self.targets = torch, replicas, targets
        self.streams, self.iters, self.warmup = streams, iters, warmup

    def measure(self, a: int, b: int, nbytes: int) -> dict[str, Any]:
        access = self.torch.cuda.can_device_access_peer
        ab, ok_ab = self._run([(a, b, 0)], nbytes)
        ba, ok_ba = self._run([(b, a, 0)], nbytes)
        both, ok_both = self._run([(a, b, 0), (b, a, 1)], nbytes)
        return {
            "gpus": [a, b],
            "peer_access": {"a_to_b": access(a, b), "b_to_a": access(b, a)},
            "unidir_gbps": {"a_to_b": ab, "b_to_a": ba},
            "bidir_gbps": both,
            "verified": ok_ab and ok_ba and ok_both,
        }

    def _run(self, copies: list[tuple[int, int, int]], nbytes: int) -> tuple[float, bool]:
        """Time `copies` (src, dst, stream slot) run together; (GB/s moved, data verified)."""
        torch = self.torch
        used = sorted({i for src, dst, _ in copies for i in (src, dst)})
        for _, dst, _ in copies:
            self.targets[dst].zero_()
        times = []
        for i in range(self.warmup + self.iters):
            for d in used:
                torch.cuda.synchronize(d)
            start = time.perf_counter()
            for src, dst, slot in copies:
                # torch runs a cross-GPU copy on the source's current stream and fences it
                # against the destination's current stream (ATen Copy.cu): giving each
                # direction its own copy and fence streams lets the two directions overlap.
                copy_on, fence_on = self.streams[src][slot], self.streams[dst][2 + slot]
                with torch.cuda.stream(copy_on), torch.cuda.stream(fence_on):
                    self.targets[dst].copy_(self.replicas[src], non_blocking=True)
            for d in used:
                torch.cuda.synchronize(d)
            if i >= self.warmup:
                times.append(time.perf_counter() - start)
        ok = all(torch.equal(self.targets[dst], self.replicas[dst]) for _, dst, _ in copies)
        return nbytes * len(copies) / statistics.median(times) / GB, ok


def _device_facts(torch, index: int) -> dict[str, Any]:
    props = torch.cuda.get_device_properties(index)
    return {"index": index, "name": props.name, "bus_id": bus_id(props)}


def bus_id(props) -> str | None:
    """'0000:18:00.0', as NVML and sysfs write it, from torch's device properties."""
    if not hasattr(props, "pci_bus_id"):
        return None
    return f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
