"""One job description in, bytes per GPU out: the whole memory model behind `rigcheck fit`."""

from dataclasses import dataclass, fields, replace

from rigcheck.memory.activations import ATTENTION, RECOMPUTE, ActivationConfig, activation_bytes
from rigcheck.memory.architecture import Architecture, TensorGroup, tensor_groups
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.inference import inference_activation_bytes, kv_cache_bytes, kv_element_bytes
from rigcheck.memory.lora import adapter_groups, default_targets
from rigcheck.memory.model_state import METHODS, ModelState, model_state
from rigcheck.memory.optimizers import check_optimizer
from rigcheck.memory.precision import precision
from rigcheck.memory.sharding import offload_optimizer, shard
from rigcheck.memory.units import GiB, ceil_div

# The CUDA context (CUDA runtime, cuBLAS/cuDNN workspaces: ~0.3-1 GiB depending on the driver and
# lazy module loading) plus the caching allocator's fragmentation. Explicit on purpose: it is a
# parameter of every estimate (--overhead), shown as its own line, never folded into other parts.
DEFAULT_OVERHEAD_BYTES = 1 * GiB


@dataclass(frozen=True)
class Job:
    """A training or inference job, as `rigcheck fit` and --plan describe it."""

    arch: Architecture | None = None  # None: only a parameter count is known
    params: int = 0  # used when arch is None
    method: str = "full"
    lora_rank: int = 8
    lora_targets: str | tuple[str, ...] | None = None  # None: PEFT's default for the model
    double_quant: bool = False
    precision: str = "bf16-mixed"
    optimizer: str = "adamw"
    zero: int = 0
    gpus: int = 1
    offload_optimizer: bool = False
    batch: int = 1  # micro-batch per GPU
    seq: int = 2048
    checkpointing: str = "none"
    attention: str = "flash"
    inference: bool = False
    kv_dtype: str | None = None  # None: the weights' dtype
    overhead_bytes: int = DEFAULT_OVERHEAD_BYTES

    def __post_init__(self) -> None:
        _validate(self)


def _validate(job: Job) -> None:
    precision(job.precision)
    check_optimizer(job.optimizer)
    if job.method not in METHODS:
        raise ConfigError(f"unknown method {job.method!r}; known: {', '.join(METHODS)}")
    for name in ("gpus", "batch", "seq"):
        if getattr(job, name) < 1:
            raise ConfigError(f"--{name} must be >= 1, got {getattr(job, name)}")
    if job.zero not in (0, 1, 2, 3):
        raise ConfigError(f"--zero must be 0, 1, 2 or 3, got {job.zero}")
    if job.checkpointing not in RECOMPUTE or job.attention not in ATTENTION:
        raise ConfigError(f"--checkpointing in {RECOMPUTE}, --attention in {ATTENTION}")
    if job.overhead_bytes < 0:
        raise ConfigError(f"--overhead must be >= 0 bytes, got {job.overhead_bytes}")
    if job.method != "full" and job.lora_rank < 1:
        raise ConfigError(
            f"--lora-rank must be >= 1 with --method {job.method}, got {job.lora_rank}"
        )
    if job.kv_dtype is not None:
        kv_element_bytes(job.kv_dtype)
    if job.arch is None:
        _validate_params_only(job)


def _validate_params_only(job: Job) -> None:
    if job.params < 1:
        raise ConfigError(f"--params must be >= 1, got {job.params}")
    needs_shapes = {
        "--method lora/qlora": job.method != "full",
        "--optimizer adafactor": job.optimizer == "adafactor",
        "--inference": job.inference,
    }
    for what, needed in needs_shapes.items():
        if needed:
            raise ConfigError(f"{what} needs the tensor shapes: give --model instead of --params")


@dataclass(frozen=True)
class Estimate:
    """Bytes per GPU, part by part; total_bytes is their sum."""

    params: int
    trainable_params: int
    weights_bytes: int
    grads_bytes: int
    master_bytes: int
    optimizer_bytes: int
    activations_bytes: int
    kv_cache_bytes: int
    overhead_bytes: int
    host_bytes: int  # offloaded master weights and optimizer state, per rank, in host memory
    activations_modelled: bool  # False when only a parameter count was given

    @property
    def model_state_bytes(self) -> int:
        """Weights + gradients + master weights + optimizer state: the ZeRO paper's figure."""
        return self.weights_bytes + self.grads_bytes + self.master_bytes + self.optimizer_bytes

    @property
    def total_bytes(self) -> int:
        """Everything on one GPU."""
        transient = self.activations_bytes + self.kv_cache_bytes + self.overhead_bytes
        return self.model_state_bytes + transient

    def as_dict(self) -> dict:
        """Every field and the two sums, for JSON."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update(model_state_bytes=self.model_state_bytes, total_bytes=self.total_bytes)
        return out


def base_groups(job: Job) -> tuple[TensorGroup, ...]:
    """The model's parameter tensors; one flat tensor when only a count is known."""
    if job.arch is None:
        return (TensorGroup("params", (job.params,), 1, "flat"),)
    return tensor_groups(job.arch)


def unsharded_state(job: Job) -> ModelState:
    """Weights, grads, master and optimizer state of the whole model, on one device."""
    base = base_groups(job)
    adapters: tuple[TensorGroup, ...] = ()
    if job.method != "full":
        targets = job.lora_targets or default_targets(job.arch)
        adapters = adapter_groups(job.arch, job.lora_rank, targets)
    return model_state(
        base, adapters, job.method, precision(job.precision), job.optimizer, job.double_quant
    )


def estimate(job: Job) -> Estimate:
    """Bytes per GPU for the job: inference or training, whichever it describes."""
    return _inference(job) if job.inference else _training(job)


def _training(job: Job) -> Estimate:
    state = shard(unsharded_state(job), job.zero, job.gpus)
    host = 0
    if job.offload_optimizer:
        state, host = offload_optimizer(state)
    acts = 0 if job.arch is None else activation_bytes(job.arch, _activation_config(job))
    return Estimate(
        **_state_fields(state),
        activations_bytes=acts,
        kv_cache_bytes=0,
        overhead_bytes=job.overhead_bytes,
        host_bytes=host,
        activations_modelled=job.arch is not None,
    )


def _activation_config(job: Job) -> ActivationConfig:
    element = precision(job.precision).activation_bytes
    return ActivationConfig(job.seq, job.batch, element, job.checkpointing, job.attention)


def _inference(job: Job) -> Estimate:
    """Weights in the working dtype (NF4 matrices and separate adapters under qlora), split
    evenly over tensor-parallel GPUs like the KV cache and the working set; no gradients,
    master weights or optimizer state."""
    # Serving a LoRA model merges the adapters into the base; NF4 weights cannot take them.
    state = unsharded_state(replace(job, method="qlora" if job.method == "qlora" else "full"))
    element = precision(job.precision).activation_bytes
    kv_bytes = kv_element_bytes(job.kv_dtype) if job.kv_dtype else element
    kv = kv_cache_bytes(job.arch, job.seq, job.batch, kv_bytes)
    acts = inference_activation_bytes(job.arch, job.seq, job.batch, element)
    return Estimate(
        params=state.params,
        trainable_params=0,
        weights_bytes=ceil_div(state.weights_bytes, job.gpus),
        grads_bytes=0,
        master_bytes=0,
        optimizer_bytes=0,
        activations_bytes=ceil_div(acts, job.gpus),
        kv_cache_bytes=ceil_div(kv, job.gpus),
        overhead_bytes=job.overhead_bytes,
        host_bytes=0,
        activations_modelled=True,
    )


def _state_fields(state: ModelState) -> dict[str, int]:
    names = ("params", "trainable_params", "weights_bytes", "grads_bytes", "master_bytes")
    return {name: getattr(state, name) for name in (*names, "optimizer_bytes")}
