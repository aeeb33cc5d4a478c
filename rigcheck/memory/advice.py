"""What would fit: the largest batch and sequence, the fewest GPUs, and the levers that save memory.

Every answer is found by asking the same estimate() that judges the job, never by a separate
formula, so "the suggested batch fits and one more does not" holds by construction and is pinned
by property tests (tests/memory/test_advice.py). Searches rely on two monotonic facts the memory
model's property tests already pin: bytes per GPU never fall as batch or sequence grow, and never
rise as the data-parallel degree grows under a sharded stage.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

from rigcheck.memory.activations import RECOMPUTE
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.kv_per_gpu import vllm_layout
from rigcheck.memory.vllm_kv import capacity, in_flight_tokens

SEARCH_LIMIT = 1 << 20  # batch, sequence, data-parallel degree: far beyond any real job
TP_SIZES = (1, 2, 4, 8, 16, 32, 64)  # beyond 8, TP spans nodes: the advice names the GPUs it needs


@dataclass(frozen=True)
class Lever:
    """One change to the job, the bytes per GPU it would need, and what it saves."""

    change: str  # the options to add, as `rigcheck fit` takes them
    total_bytes: int
    saved_bytes: int
    fits: bool


def changed(job: Job, **changes: object) -> Job | None:
    """The job with some options changed, or None when the result is not a job the model
    accepts (an illegal layout, a stage the framework lacks, a length beyond the positions)."""
    try:
        return replace(job, **changes)
    except ConfigError:
        return None


def total(job: Job | None) -> int | None:
    """Bytes per GPU of a job, or None for no job."""
    return None if job is None else estimate(job).total_bytes


def fits(job: Job, usable: int, **changes: object) -> bool:
    """Whether the changed job is valid and needs at most the usable bytes per GPU."""
    need = total(changed(job, **changes))
    return need is not None and need <= usable


def largest(fits_at: Callable[[int], bool], limit: int = SEARCH_LIMIT) -> int:
    """The largest n in [1, limit] with fits_at(n), for fits_at true up to some n and false
    after; 0 when even 1 does not fit."""
    if not fits_at(1):
        return 0
    low, high = 1, 2
    while high <= limit and fits_at(high):  # double until it stops fitting
        low, high = high, 2 * high
    high = min(high, limit + 1)
    while high - low > 1:  # low fits, high does not
        middle = (low + high) // 2
        low, high = (middle, high) if fits_at(middle) else (low, middle)
    return low


def smallest(fits_at: Callable[[int], bool], limit: int = SEARCH_LIMIT) -> int | None:
    """The smallest n in [1, limit] with fits_at(n), for fits_at false up to some n and true
    after; None when even the limit does not fit."""
    if not fits_at(limit):
        return None
    low, high = 0, limit  # low does not fit (0 stands for "none"), high fits
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fits_at(middle) else (middle, high)
    return high


def largest_batch(job: Job, usable: int) -> int:
    """Micro-batch per GPU (inference: concurrent sequences) that fits at the job's length."""
    return largest(lambda b: fits(job, usable, batch=b))


def largest_seq(job: Job, usable: int) -> int:
    """Tokens per sequence that fit at the job's batch, up to the model's positions."""
    limit = (job.arch.max_positions if job.arch else 0) or SEARCH_LIMIT
    return largest(lambda s: fits(job, usable, seq=s), limit)


def smallest_gpus(job: Job, usable: int) -> int | None:
    """Fewest GPUs in all (more data-parallel ranks, same model parallelism) that fit; None
    when the stage does not shard over data parallelism or no count does."""
    if job.inference:
        return None
    group = job.tp * job.pp * job.cp
    step = group * job.ep  # expert parallelism needs dp to be a multiple of ep
    found = smallest(lambda k: fits(job, usable, gpus=k * step), SEARCH_LIMIT // step)
    return None if found is None else found * step


def smallest_tp(job: Job, usable: int) -> int | None:
    """Smallest tensor-parallel size that fits, keeping the data-parallel degree (inference:
    GPUs = tp x pp, as vLLM's --tensor-parallel-size)."""
    for tp in TP_SIZES:
        if fits(job, usable, tp=tp, gpus=tp_gpus(job, tp)):
            return tp
    return None


def tp_gpus(job: Job, tp: int) -> int:
    """The GPUs a job needs at tensor-parallel size `tp`, its other degrees kept."""
    return tp * job.pp * (1 if job.inference else job.cp * job.dp)


def smallest_zero(job: Job, usable: int) -> int | None:
    """Lowest ZeRO stage that fits at the job's GPU count (training only)."""
    if job.inference:
        return None
    return next((z for z in range(4) if fits(job, usable, zero=z)), None)


def _lever_changes(job: Job) -> list[tuple[str, dict]]:
    """The memory-saving changes that apply to this job: the options and the Job fields."""
    if job.inference:
        return [] if job.kv_dtype == "fp8" else [("--kv-dtype fp8", {"kv_dtype": "fp8"})]
    out = []
    # A model only the trace knows (no formulas): the trace ran at this job's attention, and
    # selective recompute has no traced figure, so neither change could be answered.
    traced_only = job.arch is None and job.traced is not None
    if job.attention == "eager" and not traced_only:
        out.append(("--attention flash", {"attention": "flash"}))
    for mode in RECOMPUTE[RECOMPUTE.index(job.checkpointing) + 1 :]:  # only more recompute
        if not (traced_only and mode == "selective"):
            out.append((f"--checkpointing {mode}", {"checkpointing": mode}))
    if job.optimizer in ("adam", "adamw"):
        out.append(("--optimizer adamw-8bit", {"optimizer": "adamw-8bit"}))
    if not job.offload_optimizer:
        out.append(_offload(job))
    if job.zero == 3 and not job.offload_params:
        both = {"offload_optimizer": True, "offload_params": True}
        out.append(("--offload-optimizer --offload-params", both))
    return out


def _offload(job: Job) -> tuple[str, dict]:
    """Optimizer offload: ZeRO-Offload needs stage 1 or more; FSDP offloads parameters with it."""
    options = "" if job.zero else "--zero 1 "
    fields = {"offload_optimizer": True, "zero": max(job.zero, 1)}
    if job.framework == "fsdp":
        return options + "--offload-optimizer --offload-params", {**fields, "offload_params": True}
    return options + "--offload-optimizer", fields


def levers(job: Job, usable: int) -> list[Lever]:
    """Each applicable change on its own, with the bytes per GPU it needs and saves; a change
    the framework refuses, or one that changes nothing, is left out."""
    before = estimate(job).total_bytes
    out = []
    for options, fields in _lever_changes(job):
        need = total(changed(job, **fields))
        if need is not None and need != before:
            out.append(Lever(options, need, before - need, need <= usable))
    return out


def kv_capacity(job: Job, usable: int) -> dict:
    """vLLM's startup figures ("GPU KV cache size: N tokens", "Maximum concurrency for L tokens
    per request") at the job's vLLM version (vllm_kv.capacity): what is left of the usable share
    after weights, activations and overhead goes to the KV block pool."""
    result = estimate(replace(job, batch=1))
    available = max(0, usable - (result.total_bytes - result.kv_cache_bytes))
    lay = vllm_layout(job, job.seq)
    figures = capacity(lay, available, job.seq, job.vllm_version)
    return {
        "kv_bytes_available": available,
        "kv_tokens": figures["kv_tokens"],
        "num_blocks": figures["num_blocks"],
        "request_kv_bytes": lay.request_bytes,
        "max_concurrency": round(figures["max_concurrency"], 2),
        "tokens_per_request": job.seq,
        "vllm_version": job.vllm_version,
        "in_flight_tokens": in_flight_tokens(
            job.vllm_version, job.max_num_batched_tokens, job.async_scheduling, job.pp
        ),
    }


def advise(job: Job, usable: int) -> dict:
    """Everything above for one job: what fits, and what each change would need (JSON-ready)."""
    out = {
        "largest_batch": largest_batch(job, usable),
        "largest_seq": largest_seq(job, usable),
        "smallest_gpus": smallest_gpus(job, usable),
        "smallest_tp": (tp := smallest_tp(job, usable)),
        "smallest_tp_gpus": None if tp is None else tp_gpus(job, tp),
        "smallest_zero": smallest_zero(job, usable),
        "levers": [vars(lever) for lever in levers(job, usable)],
    }
    if job.inference and job.engine == "vllm":
        out["kv_capacity"] = kv_capacity(job, usable)
    return out
