"""Per-GPU model state under data parallelism: DDP, ZeRO stages 1-3, optimizer offload.

ZeRO (Rajbhandari et al. 2020, section 5, Fig. 1) partitions over the N data-parallel ranks:
stage 1 the optimizer state (with the fp32 master weights, part of the paper's K), stage 2 also
the gradients, stage 3 also the weights. FSDP FULL_SHARD partitions like stage 3 and
SHARD_GRAD_OP like stage 2. Each partition is rounded up to whole bytes per rank, so the shards
sum to the unsharded bytes plus less than N bytes of padding per part. Not modelled: the
transient all-gather buffers of stage 3 and the gradient buckets of DDP and stages 1-2.
"""

from dataclasses import replace

from rigcheck.memory.errors import ConfigError
from rigcheck.memory.model_state import ModelState
from rigcheck.memory.units import ceil_div

ZERO_STAGES = (0, 1, 2, 3)


def shard(state: ModelState, zero: int, gpus: int) -> ModelState:
    """The state one of `gpus` data-parallel ranks holds under ZeRO stage `zero` (0 = DDP)."""
    if zero not in ZERO_STAGES:
        raise ConfigError(f"ZeRO stage must be one of 0, 1, 2, 3, got {zero}")
    if gpus < 1:
        raise ConfigError(f"the number of GPUs must be >= 1, got {gpus}")
    return replace(
        state,
        weights_bytes=_part(state.weights_bytes, gpus, zero >= 3),
        grads_bytes=_part(state.grads_bytes, gpus, zero >= 2),
        master_bytes=_part(state.master_bytes, gpus, zero >= 1),
        optimizer_bytes=_part(state.optimizer_bytes, gpus, zero >= 1),
    )


def _part(n_bytes: int, gpus: int, sharded: bool) -> int:
    return ceil_div(n_bytes, gpus) if sharded else n_bytes


def offload_optimizer(state: ModelState) -> tuple[ModelState, int]:
    """Move master weights and optimizer state to the host (ZeRO-Offload): (GPU state, host)."""
    host = state.master_bytes + state.optimizer_bytes
    return replace(state, master_bytes=0, optimizer_bytes=0), host
