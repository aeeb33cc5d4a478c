"""Pinned host buffers that are new memory, so each GPU's buffer sits on that GPU's NUMA node.

numa.py allocates a GPU's pinned buffer from a thread bound to that GPU's CPUs, so Linux places
its pages on that node when they are first touched. But torch's caching host allocator keeps a
freed pinned block and hands it to the next request of that size (CachingHostAllocator;
torch.cuda.memory.host_memory_stats counts the blocks): on a 2-socket node every GPU after the
first would copy through the block placed for the first GPU, on the first GPU's socket, while
the record said it was bound. So the cache is emptied before each allocation, and the
allocator's own count of blocks it created (num_host_alloc) says whether the buffer is new.
"""

from __future__ import annotations

from typing import Any

# Where torch keeps "return the unused cached pinned blocks": newest first.
EMPTIERS = (("accelerator", "empty_host_cache"), ("_C", "_host_emptyCache"))


def allocate(nbytes: int, torch: Any = None) -> tuple[Any, dict[str, Any]]:
    """(a pinned uint8 buffer, what is known of it: was the cache emptied, is the block new)."""
    if torch is None:
        import torch
    emptied = empty_host_cache(torch)
    before = _blocks_created(torch)
    buffer = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    after = _blocks_created(torch)
    new = None if before is None or after is None else after > before
    return buffer, {"cache_emptied_by": emptied, "new_block": new}


def empty_host_cache(torch: Any) -> str | None:
    """Return cached pinned blocks to the driver; the call that did it, or None if none exists."""
    for owner, name in EMPTIERS:
        call = getattr(getattr(torch, owner, None), name, None)
        if not callable(call):
            continue
        try:
            call()
        except RuntimeError:  # no accelerator (a CPU-only torch): nothing is cached to empty
            return None
        return f"torch.{owner}.{name}"
    return None


def _blocks_created(torch: Any) -> int | None:
    """How many pinned blocks the host allocator has created so far (None: torch cannot say)."""
    stats = getattr(
        getattr(getattr(torch, "cuda", None), "memory", None), "host_memory_stats", None
    )
    if not callable(stats):
        return None
    try:
        value = stats().get("num_host_alloc")
    except Exception:  # an old torch without the counter, or no CUDA: unknown, not new
        return None
    return value if isinstance(value, int) else None


def placement(bound: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    """numa.on_cpus' record, corrected: a reused or unknown block is not known to be bound."""
    if not bound.get("bound"):
        return bound
    if block["new_block"] is True:
        return {**bound, "pinned_block": "new", "cache_emptied_by": block["cache_emptied_by"]}
    why = (
        "the pinned buffer is a block torch's host allocator had cached (placed by an earlier "
        "thread, maybe on another NUMA node)"
        if block["new_block"] is False
        else "this torch cannot say whether its pinned buffer is a new block or a cached one"
    )
    return {"bound": False, "why": why, "numa_node": bound.get("numa_node"), **block}
