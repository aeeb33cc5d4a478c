"""One job description in, bytes per GPU out: the whole memory model behind `rigcheck fit`."""

from dataclasses import dataclass, fields, replace

from rigcheck.memory import frameworks as fw
from rigcheck.memory.activations import ATTENTION, RECOMPUTE, ActivationConfig, activation_bytes
from rigcheck.memory.architecture import (
    Architecture,
    TensorGroup,
    largest_layer_params,
    tensor_groups,
)
from rigcheck.memory.checkpoint_formats import weights_bytes as checkpoint_weights_bytes
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.hybrid_layers import MAMBA_CACHE_MODES
from rigcheck.memory.hybrid_layers import activation_bytes as hybrid_activation_bytes
from rigcheck.memory.hybrid_layers import check_engine as check_hybrid_engine
from rigcheck.memory.hybrid_layers import check_parallel as check_hybrid_parallel
from rigcheck.memory.hybrid_layers import weights_bytes as hybrid_weights_bytes
from rigcheck.memory.inference import (
    ENGINES,
    VLLM_GPU_MEMORY_UTILIZATION,
    VLLM_MAX_NUM_BATCHED_TOKENS,
    inference_activation_bytes,
    kv_element_bytes,
)
from rigcheck.memory.kv_per_gpu import kv_bytes_per_request
from rigcheck.memory.lora import adapter_groups, default_targets
from rigcheck.memory.model_state import (
    METHODS,
    ModelState,
    frozen_state,
    model_state,
    trainable_state,
)
from rigcheck.memory.optimizers import check_optimizer, optimizer_state_bytes
from rigcheck.memory.parallel import Parallel, check_parallel, rank_groups
from rigcheck.memory.precision import precision
from rigcheck.memory.quantization import nf4_bits
from rigcheck.memory.sharding import offload_optimizer, shard
from rigcheck.memory.units import GiB, ceil_div
from rigcheck.memory.vllm_kv import DEFAULT_VERSION as VLLM_DEFAULT_VERSION
from rigcheck.memory.vllm_kv import (
    parse_version,
)

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
    framework: str = fw.DEFAULT_FRAMEWORK
    offload_params: bool = False
    tp: int = 1
    pp: int = 1
    ep: int = 1
    cp: int = 1
    sp: bool = False  # Megatron sequence parallelism (with tp): splits the norm/dropout activations
    engine: str = "vllm"  # inference: vllm (pre-allocates, in blocks) or hf (exact tokens)
    gpu_memory_utilization: float = VLLM_GPU_MEMORY_UTILIZATION  # the share vLLM may use
    block_size: int = 16  # vLLM's default KV block, in tokens
    max_num_batched_tokens: int = VLLM_MAX_NUM_BATCHED_TOKENS  # vLLM: tokens a step may add
    vllm_version: str = VLLM_DEFAULT_VERSION  # whose KV accounting (vllm_kv)
    async_scheduling: bool = True  # vLLM's default: from 0.26, two batches in flight
    mamba_cache_mode: str = "none"  # vLLM's; only "none" is modelled (hybrid_layers.check_engine)
    # The real model traced on the meta device (trace.Trace), None: the formulas alone.
    traced: object = None
    # Hybrid / chunked-attention layers read from config.json (hybrid_layers.HybridLayers): what
    # vLLM caches for a family the formulas have no Architecture for.
    hybrid: object = None

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def parallel(self) -> Parallel:
        return Parallel(self.tp, self.pp, self.ep, self.cp)

    @property
    def dp(self) -> int:
        """Data-parallel degree: the GPUs left after tensor, pipeline and context parallelism."""
        return self.gpus // (self.tp * self.pp * self.cp)


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
    _validate_combinations(job)


def _validate_combinations(job: Job) -> None:
    """Options that contradict each other or the model: one line each."""
    if job.double_quant and job.method != "qlora":
        raise ConfigError("--double-quant is NF4's double quantization: it needs --method qlora")
    if job.arch is not None and job.arch.max_positions and job.seq > job.arch.max_positions:
        raise ConfigError(
            f"--seq {job.seq} is longer than the model's {job.arch.max_positions} positions "
            "(max_position_embeddings)"
        )
    if job.arch is None and job.inference and job.hybrid is not None:
        check_hybrid_parallel(job.hybrid, job.parallel, job.gpus)
        check_hybrid_engine(job.hybrid, job.engine, job.mamba_cache_mode)
    else:
        check_parallel(job.arch, job.parallel, job.gpus)
    quantized = job.arch is not None and job.arch.checkpoint is not None
    if quantized and not job.inference and job.method != "lora":
        raise ConfigError(
            f"this checkpoint is pre-quantized ({job.arch.checkpoint.method}) and frozen: "
            "train adapters on it with --method lora, or serve it with --inference"
        )
    if job.inference:
        if job.zero or job.offload_optimizer or job.offload_params:
            raise ConfigError("--inference keeps no optimizer: drop --zero and --offload-*")
        if job.engine not in ENGINES:
            raise ConfigError(f"--engine {job.engine!r}: one of {', '.join(ENGINES)}")
        if not 0 < job.gpu_memory_utilization <= 1:  # nan fails this too
            raise ConfigError(
                f"--gpu-memory-utilization {job.gpu_memory_utilization:g}: the share of the "
                "device the engine may use, above 0 and at most 1 (vLLM's default "
                f"{VLLM_GPU_MEMORY_UTILIZATION})"
            )
        if job.block_size < 1 or job.max_num_batched_tokens < 1:
            raise ConfigError("--block-size and --max-num-batched-tokens must be >= 1")
        if job.engine == "vllm":
            parse_version(job.vllm_version)
        if job.mamba_cache_mode not in MAMBA_CACHE_MODES:
            raise ConfigError(f"--mamba-cache-mode: one of {', '.join(MAMBA_CACHE_MODES)}")
        return
    fw.check_framework(job.framework, job.zero, job.offload_optimizer, job.offload_params)


def _validate_params_only(job: Job) -> None:
    if job.params < 1:
        raise ConfigError(f"--params must be >= 1, got {job.params}")
    traced_lora = job.traced is not None and job.traced.lora_trainable is not None
    needs_shapes = {
        "--method lora/qlora": job.method != "full" and not traced_lora,
        "--optimizer adafactor": job.optimizer == "adafactor",
        "--inference": job.inference and not _hybrid_inference(job),
    }
    for what, needed in needs_shapes.items():
        if needed:
            raise ConfigError(f"{what} needs the tensor shapes: give --model instead of --params")


def _hybrid_inference(job: Job) -> bool:
    """Inference the hybrid layers can answer: vLLM's cache, weights from the traced count."""
    return job.hybrid is not None and job.traced is not None


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
    host_bytes: int  # offloaded state (gradients, master, optimizer, weights), per rank
    activations_modelled: bool  # False when only a parameter count was given
    working_bytes: int = 0  # gathered layers (ZeRO-3, FSDP), autocast copies, DDP buckets
    active_params: int = 0  # parameters one token uses (MoE: the routed experts it goes to)
    params_source: str = "formula"  # "traced": counted on transformers' meta-device model
    activations_source: str = "formula"  # "traced": saved tensors of a meta-device forward

    @property
    def model_state_bytes(self) -> int:
        """Weights + gradients + master weights + optimizer state: the ZeRO paper's figure."""
        return self.weights_bytes + self.grads_bytes + self.master_bytes + self.optimizer_bytes

    @property
    def total_bytes(self) -> int:
        """Everything on one GPU."""
        transient = self.activations_bytes + self.kv_cache_bytes + self.overhead_bytes
        return self.model_state_bytes + transient + self.working_bytes

    def as_dict(self) -> dict:
        """Every field and the two sums, for JSON."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update(model_state_bytes=self.model_state_bytes, total_bytes=self.total_bytes)
        return out


def base_groups(job: Job) -> tuple[TensorGroup, ...]:
    """The parameter tensors of the most loaded GPU; one flat tensor when only a count is known."""
    if job.arch is None:
        traced = job.traced.parameters.groups if job.traced is not None else ()
        return traced or (TensorGroup("params", (job.params,), 1, "flat"),)
    groups = tensor_groups(job.arch) + _untraced(job)
    return rank_groups(groups, job.arch, job.parallel, vocab_layout(job))


def vocab_layout(job: Job) -> str:
    """Whose padding and split of the vocabulary the job runs under (parallel.vocab_rows)."""
    if job.inference:
        return "vllm" if job.engine == "vllm" else "even"
    return "megatron" if job.framework == "megatron" else "even"


def _untraced(job: Job) -> tuple[TensorGroup, ...]:
    """Parameters the trace counts and the formula does not shape: a multimodal checkpoint's
    vision tower and projector, one flat group (replicated under tp, on the first stage)."""
    if job.traced is None:
        return ()
    extra = job.traced.parameters.total - sum(g.total for g in tensor_groups(job.arch))
    return (TensorGroup("vision tower and projector", (extra,), 1, "flat"),) if extra > 0 else ()


def _adapters(job: Job) -> tuple[TensorGroup, ...]:
    """LoRA's matrices by the formulas, plus what PEFT adapts on the traced model beyond them
    (a vision tower's linears under all-linear); one flat group when only the trace knows."""
    if job.method == "full":
        return ()
    traced = job.traced.lora_trainable if job.traced is not None else None
    if job.arch is None:
        return (TensorGroup("LoRA adapters (traced)", (traced,), 1, "adapter"),)
    targets = job.lora_targets or default_targets(job.arch)
    groups = adapter_groups(job.arch, job.lora_rank, targets)
    extra = (traced or 0) - sum(g.total for g in groups)
    if extra > 0:
        groups += (
            TensorGroup("LoRA adapters beyond the formulas (traced)", (extra,), 1, "adapter"),
        )
    return groups


def unsharded_state(job: Job) -> ModelState:
    """Weights, grads, master and optimizer state of the whole model, on one device."""
    base, adapters = base_groups(job), _adapters(job)
    prec = precision(job.precision)
    if job.arch is not None and job.arch.checkpoint is not None:  # frozen, in its own format
        frozen = ModelState(sum(g.total for g in base), 0, _checkpoint_bytes(job, base), 0, 0, 0)
        return frozen + trainable_state(adapters, prec, job.optimizer)
    kbit_prep = not job.inference  # training QLoRA runs prepare_model_for_kbit_training
    return model_state(base, adapters, job.method, prec, job.optimizer, job.double_quant, kbit_prep)


def _checkpoint_bytes(job: Job, groups: tuple[TensorGroup, ...]) -> int:
    """A pre-quantized checkpoint's weights; what it leaves unquantized stays 16-bit."""
    return checkpoint_weights_bytes(groups, job.arch.checkpoint, 2)


def estimate(job: Job) -> Estimate:
    """Bytes per GPU for the job: inference or training, whichever it describes."""
    return _inference(job) if job.inference else _training(job)


def _counts(job: Job, only: str = "all") -> fw.Counts:
    """What a framework's layout needs to know about the model on one GPU; `only` picks the
    routed experts ("experts") or everything else ("dense") when they shard differently."""
    base, adapters = base_groups(job), _adapters(job)
    if only != "all":
        base = tuple(g for g in base if (g.role == "expert") == (only == "experts"))
        adapters = () if only == "experts" else adapters
    trainable = base if job.method == "full" else adapters
    frozen = () if job.method == "full" else base
    bits = nf4_bits(job.double_quant) if job.method == "qlora" else None
    # PEFT's prepare_model_for_kbit_training casts every 16-bit parameter left (embeddings,
    # lm_head, norms, biases) to fp32 (peft/utils/other.py), the standard QLoRA recipe.
    frozen_weights = frozen_state(
        frozen, precision(job.precision), bits, kbit_fp32=bits is not None
    )
    if job.arch is not None and job.arch.checkpoint is not None:
        checkpoint = _checkpoint_bytes(job, frozen)
        frozen_weights = replace(frozen_weights, weights_bytes=checkpoint)
    n = sum(g.total for g in trainable)
    cast_roles = ("linear", "lm_head", "bias", "adapter", "expert", "router", "flat")
    tied = job.arch is not None and job.arch.tied_embeddings and job.method == "full"
    cast = sum(
        g.total for g in trainable if g.role in cast_roles or (tied and g.role == "embedding")
    )
    return fw.Counts(
        params=n + frozen_weights.params,
        trainable=n,
        frozen_weight_bytes=frozen_weights.weights_bytes,
        optimizer_bytes=optimizer_state_bytes(trainable, job.optimizer, 4),
        cast_params=cast,
        largest_layer=largest_layer_params(job.arch) if job.arch else 0,
        largest_unit=fw.largest_unit(base + adapters, job.arch.layers if job.arch else 1),
    )


def _framework_layout(job: Job, c: fw.Counts, dp: int) -> fw.Layout:
    if job.framework == "deepspeed":
        return fw.deepspeed(c, job.zero, dp, job.offload_optimizer, job.offload_params)
    if job.framework == "fsdp":
        return fw.fsdp(c, job.zero, dp, job.offload_optimizer, job.offload_params)
    if job.framework == "megatron":
        return fw.megatron(c, job.zero, dp, job.precision)
    return fw.hf_trainer(c, dp)


def training_layout(job: Job) -> fw.Layout:
    """Model state per GPU, host bytes and working copies, by the job's framework."""
    prec = precision(job.precision)
    if job.framework == "plain" or prec.master_bytes == 0:  # pure precision: one copy
        state = shard(unsharded_state(job), job.zero, job.dp)
        host = 0
        if job.offload_optimizer:
            state, host = offload_optimizer(state)
        return fw.Layout(state, host, 0)
    whole = _framework_layout(job, _counts(job), job.dp)
    if job.ep == 1:
        return whole
    # Expert parallelism: each GPU's experts are sharded over the expert-data-parallel group
    # (dp / ep ranks holding the same experts), the rest over all dp ranks (DeepSpeed-MoE,
    # Megatron-core's expert_data_parallel group).
    dense = _framework_layout(job, _counts(job, "dense"), job.dp)
    experts = _framework_layout(job, _counts(job, "experts"), job.dp // job.ep)
    return fw.Layout(
        dense.state + experts.state, dense.host_bytes + experts.host_bytes, whole.working_bytes
    )


def _training(job: Job) -> Estimate:
    layout = training_layout(job)
    traced = traced_activation_bytes(job)
    acts = traced if traced is not None else 0
    if traced is None and job.arch is not None:
        acts = activation_bytes(job.arch, _activation_config(job))
    fields = _state_fields(layout.state)
    fields["params"] = parameter_total(job)
    if job.method == "full":
        fields["trainable_params"] = fields["params"]
    return Estimate(
        **fields,
        activations_bytes=acts,
        kv_cache_bytes=0,
        overhead_bytes=job.overhead_bytes,
        host_bytes=layout.host_bytes,
        activations_modelled=job.arch is not None or traced is not None,
        working_bytes=layout.working_bytes,
        active_params=_active(job),
        params_source=_params_source(job),
        activations_source=_activations_source(job, traced),
    )


def _activations_source(job: Job, traced: int | None) -> str:
    if traced is not None:
        return "traced"
    return "formula" if job.arch is not None else "not modelled"


def traced_activation_bytes(job: Job) -> int | None:
    """The traced forward's saved bytes, when the trace ran the job as planned: one GPU holding
    whole layers (no tp, pp, cp), keeping every activation or recomputing whole layers.
    None when the trace does not apply (selective recompute: the formula answers)."""
    from rigcheck.memory.trace import ATTENTION_IMPLEMENTATION  # imports nothing heavy

    acts = job.traced.activations if job.traced is not None else None
    if acts is None or job.tp * job.cp * job.pp > 1 or job.checkpointing == "selective":
        return None
    if acts.attention != ATTENTION_IMPLEMENTATION[job.attention]:  # traced at another one
        return None
    return acts.full_recompute_peak if job.checkpointing == "full" else acts.total


def _params_source(job: Job) -> str:
    return "traced" if job.traced is not None else "formula"


def _active(job: Job) -> int:
    from rigcheck.memory.architecture import active_parameter_count

    if job.traced is not None:
        return job.traced.parameters.active
    return active_parameter_count(job.arch) if job.arch else job.params


def _activation_config(job: Job) -> ActivationConfig:
    element = precision(job.precision).activation_bytes
    seq = ceil_div(job.seq, job.cp)  # context parallelism splits every sequence
    return ActivationConfig(
        seq, job.batch, element, job.checkpointing, job.attention, job.tp, job.sp
    )


def _inference(job: Job) -> Estimate:
    """Weights in the working dtype (NF4 matrices and separate adapters under qlora) of the
    most loaded tensor/pipeline-parallel GPU; KV heads split over tp, one whole head per GPU when
    tp exceeds them; no gradients, master weights or optimizer state. --gpus beyond tp x pp are
    replicas (data parallel), each holding the same."""
    if job.arch is None:
        return _hybrid_inference_estimate(job)
    # Serving a LoRA model merges the adapters into the base; NF4 weights cannot take them.
    state = unsharded_state(replace(job, method="qlora" if job.method == "qlora" else "full"))
    arch, tp = job.arch, job.tp
    element = precision(job.precision).activation_bytes
    kv = job.batch * kv_bytes_per_request(job, job.seq)
    step = job.max_num_batched_tokens if job.engine == "vllm" else 0
    acts = inference_activation_bytes(arch, job.seq, job.batch, element, step)
    return Estimate(
        params=parameter_total(job),
        trainable_params=0,
        weights_bytes=state.weights_bytes,
        grads_bytes=0,
        master_bytes=0,
        optimizer_bytes=0,
        activations_bytes=ceil_div(acts, tp),
        kv_cache_bytes=kv,
        overhead_bytes=job.overhead_bytes,
        host_bytes=0,
        activations_modelled=True,
        active_params=_active(job),
        params_source=_params_source(job),
    )


def _hybrid_inference_estimate(job: Job) -> Estimate:
    """A hybrid or chunked-attention family: weights = the traced parameter count in the working
    dtype (an MXFP4 checkpoint's experts at 4.25 bits), split evenly over tp x pp (the trace has
    no per-rank shapes); vLLM's cache by its
    groups; activations by the config's widths (hybrid_layers.activation_bytes), over tp."""
    element = precision(job.precision).activation_bytes
    params = job.traced.parameters.total
    step = job.max_num_batched_tokens if job.engine == "vllm" else 0  # hf prefills whole
    acts = hybrid_activation_bytes(job.hybrid, job.seq, job.batch, element, step)
    experts = job.traced.parameters.parts.get("experts", 0)
    element_w = precision(job.precision).weight_bytes
    weights = hybrid_weights_bytes(job.hybrid, params, experts, element_w)
    return Estimate(
        params=params,
        trainable_params=0,
        weights_bytes=ceil_div(weights, job.tp * job.pp),
        grads_bytes=0,
        master_bytes=0,
        optimizer_bytes=0,
        activations_bytes=ceil_div(acts, job.tp),
        kv_cache_bytes=job.batch * kv_bytes_per_request(job, job.seq),
        overhead_bytes=job.overhead_bytes,
        host_bytes=0,
        activations_modelled=True,
        active_params=_active(job),
        params_source="traced",
        activations_source="formula (config widths)",
    )


def parameter_total(job: Job) -> int:
    """The whole model's parameter count (not one GPU's share)."""
    from rigcheck.memory.architecture import parameter_count

    if job.traced is not None:
        return job.traced.parameters.total
    return parameter_count(job.arch) if job.arch else job.params


def _state_fields(state: ModelState) -> dict[str, int]:
    names = ("params", "trainable_params", "weights_bytes", "grads_bytes", "master_bytes")
    return {name: getattr(state, name) for name in (*names, "optimizer_bytes")}
