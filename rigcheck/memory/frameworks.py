"""What each training framework really allocates per GPU under bf16/fp16 mixed precision.

The ZeRO paper's 2 + 2 + 12 = 16 bytes per parameter is one framework's idealisation; each real
one keeps different copies. Per trainable parameter, with K optimizer-state bytes (8 for Adam's
fp32 moments), data-parallel degree N and ZeRO stage z (0 = plain data parallelism):

deepspeed (0.19.8; deepspeed/runtime/zero/stage_1_and_2.py, stage3.py, runtime/bf16_optimizer.py)
    16-bit weights 2 (partitioned at z = 3), a 16-bit gradient 2 (partitioned at z >= 2), an fp32
    gradient partition 4, fp32 master weights 4 and the optimizer state K (partitioned at z >= 1).
    This is estimate_zero2_model_states_mem_needs's 2 + 18/N exactly (stage_1_and_2.py:4029-4031).
    z = 0 is the BF16_Optimizer (fp32_groups_gradients): 2 + 2 + 4 + 4 + 8 = 20.
    z = 3 converts the 16-bit gradient partition to fp32 one sub-group (sub_group_size, 1e9
    elements by default) at a time (stage3.py _prepare_fp32_grad_for_sub_group), and gathers the
    largest module's 16-bit weights and gradients: 4 x largest_layer_params, as the estimator.
    offload_optimizer moves the fp32 gradient partition, master weights and optimizer state to
    the host; at z >= 2 the 16-bit gradient partition goes straight into the host fp32 buffer
    (async_inplace_copy_grad_to_fp32_buffer_from_gpu), so ZeRO-2 + offload keeps 2 B/param on the
    GPU (the estimator's cpu_offload branch). offload_param (z = 3 only) moves the 16-bit weights.
fsdp (torch 2.13 FSDP2, torch/distributed/fsdp/_fully_shard/_fsdp_param.py, MixedPrecisionPolicy
    param_dtype=bf16, reduce_dtype=fp32): the sharded parameters are fp32 and are what the
    optimizer steps (no separate master): 4 + 4 + K, all sharded. Transient: each FSDP unit (a
    decoder layer; the root holds the rest) is all-gathered in bf16, the current and the
    prefetched one (2 x 2 x unit), and its fp32 unsharded gradient awaits the reduce-scatter
    (4 x unit). --zero 2 (reshard_after_forward=False, SHARD_GRAD_OP) keeps the whole bf16 model
    gathered between forward and backward. CPUOffloadPolicy moves parameters, gradients and
    optimizer state together.
megatron (Megatron Core developer guide, api-guide/dist_optimizer (docs.nvidia.com/megatron-core,
    latest as of 2026-11), its bytes-per-parameter table; bf16 sets
    accumulate_allreduce_grads_in_fp32): bf16 weights 2 and fp32 main gradients 4 stay whole;
    --zero 1 (--use-distributed-optimizer) shards the fp32 master 4 and state K: 6 + 12/d (18
    without). fp16: 16-bit gradients 2 plus an fp32 copy 4 that shards with the optimizer: 4 + 16/d.
hf-trainer (transformers 5.23 Trainer, bf16=True, no DeepSpeed/FSDP): the model stays fp32 and
    forward runs under torch.autocast: fp32 weights 4, gradients 4, AdamW state K, no master;
    autocast caches a 16-bit copy of every weight a linear layer uses (aten autocast_mode.cpp
    cached_cast; measured: exactly 2 bytes per linear-layer parameter). With N > 1, DDP's
    gradient buckets are a second copy of the gradients (torch/nn/parallel/distributed.py,
    gradient_as_bucket_view=False, the Trainer's default).
plain: the ZeRO paper (Rajbhandari et al. 2020, section 5): 2 + 2 + 4 + 8, partitioned by stage.

Pure fp32/bf16/fp16 keeps one copy under every framework (torch.optim's layout) and is sharded
as the paper's stages. Frozen weights (LoRA/QLoRA bases) shard with the weights at z = 3.
"""

from dataclasses import dataclass

from rigcheck.memory.architecture import TensorGroup
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.model_state import ModelState
from rigcheck.memory.units import ceil_div

FRAMEWORKS = ("deepspeed", "fsdp", "megatron", "hf-trainer", "plain")
DEFAULT_FRAMEWORK = "deepspeed"
DS_SUB_GROUP_SIZE = 10**9  # deepspeed/runtime/zero/config.py: sub_group_size default
# Whose layout each framework follows, for reports.
CONVENTIONS = {
    "deepspeed": "DeepSpeed 0.19.8 ZeRO (stage_1_and_2.py/stage3.py): 2 + 18/N at ZeRO-2",
    "fsdp": "torch 2.13 FSDP2: fp32 shards stepped directly, bf16 all-gathered units",
    "megatron": "Megatron-core distributed optimizer: bf16 6 + 12/d, fp16 4 + 16/d",
    "hf-trainer": "HF Trainer + torch.autocast: fp32 model, cached 16-bit linear weights",
    "plain": "ZeRO paper 3.1: 16-bit weights and grads, fp32 master weights and optimizer state",
}
_ALLOWED_ZERO = {"fsdp": (2, 3), "megatron": (0, 1), "hf-trainer": (0,)}
_ZERO_HINT = {
    "fsdp": "FSDP shards like ZeRO-2 (SHARD_GRAD_OP) or ZeRO-3 (FULL_SHARD): --zero 2 or 3",
    "megatron": "Megatron's distributed optimizer is --zero 1; without it --zero 0",
    "hf-trainer": "the Trainer's ZeRO is DeepSpeed's or FSDP's: --framework deepspeed or fsdp",
}


@dataclass(frozen=True)
class Layout:
    """What the most loaded GPU of a data-parallel group holds, and what went to the host."""

    state: ModelState
    host_bytes: int  # per rank
    working_bytes: int  # gathered layers, autocast copies, DDP buckets: transient but real


@dataclass(frozen=True)
class Counts:
    """The numbers a framework's layout needs, for one model-parallel rank."""

    params: int
    trainable: int
    frozen_weight_bytes: int
    optimizer_bytes: int  # state of the trainable tensors, fp32 unless pure 16-bit
    cast_params: int  # trainable params autocast copies to 16 bit (linear weights and biases)
    largest_layer: int  # largest module's params (DeepSpeed's gather unit)
    largest_unit: int  # largest FSDP unit: a decoder layer or the root's leftovers


def check_framework(
    framework: str, zero: int, offload_optimizer: bool, offload_params: bool
) -> None:
    """A ConfigError, in one line, for a combination the framework does not have."""
    if framework not in FRAMEWORKS:
        raise ConfigError(f"unknown framework {framework!r}; known: {', '.join(FRAMEWORKS)}")
    if zero not in _ALLOWED_ZERO.get(framework, (0, 1, 2, 3)):
        raise ConfigError(f"--framework {framework} has no --zero {zero}: {_ZERO_HINT[framework]}")
    if offload_optimizer and zero == 0:
        raise ConfigError("--offload-optimizer needs ZeRO >= 1 (--zero 1, 2 or 3)")
    if offload_params and (zero != 3 or framework not in ("deepspeed", "fsdp", "plain")):
        raise ConfigError("--offload-params needs --zero 3 with deepspeed or fsdp")
    if framework == "fsdp" and offload_optimizer and not offload_params:
        raise ConfigError("FSDP's CPUOffloadPolicy moves parameters too: give --offload-params")
    if framework in ("megatron", "hf-trainer") and (offload_optimizer or offload_params):
        raise ConfigError(f"offload is not modelled for --framework {framework}")


def _part(n_bytes: int, dp: int, sharded: bool) -> int:
    return ceil_div(n_bytes, dp) if sharded else n_bytes


def deepspeed(c: Counts, zero: int, dp: int, off_opt: bool, off_par: bool) -> Layout:
    n = c.trainable
    weights = _part(2 * n + c.frozen_weight_bytes, dp, zero >= 3)
    grad16 = _part(2 * n, dp, zero >= 2)
    grad32 = _part(4 * n, dp, zero >= 1)
    if zero == 3:  # one sub-group's fp32 gradient at a time
        grad32 = 4 * min(ceil_div(n, dp), DS_SUB_GROUP_SIZE)
    master, opt = _part(4 * n, dp, zero >= 1), _part(c.optimizer_bytes, dp, zero >= 1)
    host = 0
    if off_opt:
        host = _part(4 * n, dp, True) + master + opt  # the host keeps the whole fp32 partition
        grad32, master, opt = 0, 0, 0
        grad16 = 0 if zero >= 2 else grad16
    if off_par:
        host, weights = host + weights, 0
    working = 4 * c.largest_layer if zero == 3 else 0
    state = ModelState(c.params, n, weights, grad16 + grad32, master, opt)
    return Layout(state, host, working)


def fsdp(c: Counts, zero: int, dp: int, off_opt: bool, off_par: bool) -> Layout:
    n = c.trainable
    weights = ceil_div(4 * n + c.frozen_weight_bytes, dp)
    grads, opt = ceil_div(4 * n, dp), ceil_div(c.optimizer_bytes, dp)
    gathered = 2 * 2 * c.largest_unit if zero == 3 else 2 * c.params
    working = gathered + 4 * c.largest_unit
    host = 0
    if off_par:
        host, weights, grads, opt = weights + grads + opt, 0, 0, 0
    return Layout(ModelState(c.params, n, weights, grads, 0, opt), host, working)


def megatron(c: Counts, zero: int, dp: int, precision: str) -> Layout:
    n = c.trainable
    grads = 4 * n if precision == "bf16-mixed" else 2 * n + _part(4 * n, dp, zero >= 1)
    master, opt = _part(4 * n, dp, zero >= 1), _part(c.optimizer_bytes, dp, zero >= 1)
    state = ModelState(c.params, n, 2 * n + c.frozen_weight_bytes, grads, master, opt)
    return Layout(state, 0, 0)


def hf_trainer(c: Counts, dp: int) -> Layout:
    n = c.trainable
    buckets = 4 * n if dp > 1 else 0
    state = ModelState(c.params, n, 4 * n + c.frozen_weight_bytes, 4 * n, 0, c.optimizer_bytes)
    return Layout(state, 0, 2 * c.cast_params + buckets)


def largest_unit(groups: tuple[TensorGroup, ...], layers: int) -> int:
    """Params of the largest FSDP unit: one decoder layer, or what the root keeps."""
    layer = sum(g.total for g in groups if g.name.startswith("layers.")) // max(layers, 1)
    root = sum(g.total for g in groups if not g.name.startswith("layers."))
    return max(layer, root)
