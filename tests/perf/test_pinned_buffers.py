"""Each GPU's pinned buffer is new memory, so it sits on that GPU's NUMA node: torch's caching
host allocator is emptied before the allocation, and a block it reused anyway (or one it cannot
account for) is recorded as not bound, never as bound (rigcheck/measure/pinned.py).

The torch here is a stand-in with the calls pinned.py makes (CI's torch has no CUDA, so it
cannot pin): a cache that hands back a freed block of the same size, as the real one does."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rigcheck.measure import pinned


class HostCache:
    """torch's caching host allocator, as far as pinned.py can see it: blocks created
    (num_host_alloc), freed blocks reused for the next request, emptied on request."""

    def __init__(self, emptier: str | None = "accelerator", counts: bool = True):
        self.created, self.cached, self.calls = 0, 0, []
        accelerator = SimpleNamespace()
        c = SimpleNamespace()
        if emptier == "accelerator":
            accelerator.empty_host_cache = self.empty
        elif emptier == "_C":
            c._host_emptyCache = self.empty
        stats = self.stats if counts else None
        self.torch = SimpleNamespace(
            accelerator=accelerator,
            _C=c,
            uint8="uint8",
            empty=self.alloc,
            cuda=SimpleNamespace(memory=SimpleNamespace(host_memory_stats=stats)),
        )

    def empty(self):
        self.calls.append("empty")
        self.cached = 0

    def stats(self):
        return {"num_host_alloc": self.created}

    def alloc(self, n, dtype, pin_memory):
        assert pin_memory
        self.calls.append("alloc")
        if self.cached:  # the freed block of the last GPU, wherever it was placed
            self.cached -= 1
            return "reused block"
        self.created += 1
        return "new block"

    def free(self):
        self.cached += 1


def test_a_second_gpus_buffer_is_a_new_block_not_the_first_gpus_freed_one():
    cache = HostCache()
    first, _ = pinned.allocate(64, cache.torch)
    cache.free()  # the first GPU's measurement is over; its block goes back to the cache
    second, known = pinned.allocate(64, cache.torch)
    assert (first, second) == ("new block", "new block")
    assert known == {"cache_emptied_by": "torch.accelerator.empty_host_cache", "new_block": True}
    assert cache.calls == ["empty", "alloc", "empty", "alloc"]  # emptied before each allocation


def test_older_torch_empties_through_its_private_call():
    cache = HostCache(emptier="_C")
    cache.free()
    _, known = pinned.allocate(64, cache.torch)
    assert known == {"cache_emptied_by": "torch._C._host_emptyCache", "new_block": True}


def test_a_reused_block_is_recorded_as_not_bound():
    cache = HostCache(emptier=None)  # no way to empty: the freed block comes back
    cache.free()
    _, known = pinned.allocate(64, cache.torch)
    assert known == {"cache_emptied_by": None, "new_block": False}
    bound = {"bound": True, "numa_node": 1, "cpus": "8-15"}
    record = pinned.placement(bound, known)
    assert record["bound"] is False and "cached" in record["why"]


def test_a_block_torch_cannot_account_for_is_not_called_bound():
    cache = HostCache(counts=False)
    _, known = pinned.allocate(64, cache.torch)
    assert known["new_block"] is None
    record = pinned.placement({"bound": True, "numa_node": 0, "cpus": "0-7"}, known)
    assert record["bound"] is False and "cannot say" in record["why"]


def test_a_new_block_keeps_the_binding_and_says_how_it_was_made_new():
    known = {"cache_emptied_by": "torch.accelerator.empty_host_cache", "new_block": True}
    record = pinned.placement({"bound": True, "numa_node": 1, "cpus": "8-15"}, known)
    assert record == {
        "bound": True,
        "numa_node": 1,
        "cpus": "8-15",
        "pinned_block": "new",
        "cache_emptied_by": "torch.accelerator.empty_host_cache",
    }


@pytest.mark.parametrize("block", [True, False, None])
def test_an_unbound_record_stays_unbound(block):
    unbound = {"bound": False, "why": "no NUMA facts for this GPU (topology probe)"}
    assert pinned.placement(unbound, {"cache_emptied_by": None, "new_block": block}) == unbound


def test_a_stats_call_that_fails_is_unknown_not_new():
    def broken():
        raise RuntimeError("no CUDA")

    torch = SimpleNamespace(cuda=SimpleNamespace(memory=SimpleNamespace(host_memory_stats=broken)))
    assert pinned._blocks_created(torch) is None


def test_an_emptier_that_refuses_is_no_emptying():
    def refuse():
        raise RuntimeError("Cannot access accelerator device when none is available.")

    torch = SimpleNamespace(accelerator=SimpleNamespace(empty_host_cache=refuse))
    assert pinned.empty_host_cache(torch) is None
