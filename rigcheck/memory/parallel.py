"""Model parallelism: the parameter tensors one GPU holds under tensor, pipeline and expert
parallelism, and the rules that make a layout legal.

Tensor parallelism (Megatron-LM's column/row split, as vLLM and SGLang do it) splits q and the MLP
columns, the output rows, and the vocabulary of the embedding and lm_head; norms and row-parallel
biases stay whole. K and V are split by KV head, and when tp exceeds the KV heads each GPU keeps
one whole KV head (vLLM model_executor/layers/linear.py QKVParallelLinear: num_kv_head_replicas =
tp // total_num_kv_heads), so tp must divide the attention heads and either divide or be a multiple
of the KV heads. Pipeline parallelism gives each stage ceil(layers/pp) layers; the heaviest GPU is
the first stage (embedding) or the last (final norm and lm_head; with tied embeddings Megatron keeps
a copy of the embedding there). Expert parallelism gives each GPU experts/ep whole experts, each
split by tp too (Megatron-core's expert_tensor_parallel_size defaults to tp).
"""

from dataclasses import dataclass, replace

from rigcheck.memory.architecture import Architecture, TensorGroup
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import ceil_div

_COLUMN = (
    "q",
    "k",
    "v",
    "qkv",
    "gate",
    "up",
    "gate_up",
    "q_b",
    "kv_b",
)  # split along the output dimension
_ROW = ("o", "down")  # split along the input dimension; their bias stays whole


@dataclass(frozen=True)
class Parallel:
    """Degrees of parallelism; data parallelism is whatever of the GPUs is left."""

    tp: int = 1
    pp: int = 1
    ep: int = 1
    cp: int = 1  # context parallelism: each GPU holds seq/cp tokens of every sequence


def check_parallel(arch: Architecture | None, par: Parallel, gpus: int) -> int:
    """The data-parallel degree; a ConfigError for a layout the frameworks refuse."""
    for name in ("tp", "pp", "ep", "cp"):
        if getattr(par, name) < 1:
            raise ConfigError(f"--{name} must be >= 1, got {getattr(par, name)}")
    model = par.tp * par.pp * par.cp
    if gpus % model:
        raise ConfigError(f"--gpus {gpus} is not a multiple of tp x pp x cp = {model}")
    dp = gpus // model
    if dp % par.ep:
        raise ConfigError(f"--ep {par.ep} must divide the data-parallel degree {dp}")
    if arch is None:
        if par.tp > 1 or par.pp > 1 or par.ep > 1:
            raise ConfigError(
                "--tp, --pp and --ep need the tensor shapes: give --model or --config"
            )
        return dp
    if arch.heads % par.tp:
        raise ConfigError(
            f"tensor parallelism {par.tp} must divide the {arch.heads} attention heads "
            f"(try --tp {_divisors_hint(arch.heads, par.tp)})"
        )
    kv = arch.kv_heads
    if (kv >= par.tp and kv % par.tp) or (kv < par.tp and par.tp % kv):
        raise ConfigError(
            f"tensor parallelism {par.tp} must divide or be a multiple of {kv} KV heads"
        )
    if par.pp > arch.layers:
        raise ConfigError(f"--pp {par.pp} exceeds the {arch.layers} layers")
    if par.ep > 1 and (not arch.experts or arch.experts % par.ep):
        raise ConfigError(f"--ep {par.ep} must divide the number of experts ({arch.experts})")
    return dp


def _divisors_hint(n: int, near: int) -> int:
    return max(d for d in range(1, n + 1) if n % d == 0 and d <= near)


def kv_heads_per_gpu(arch: Architecture, tp: int) -> int:
    """KV heads each tensor-parallel GPU caches: a share, or one replicated head."""
    return max(1, arch.kv_heads // tp)


def _matrix(name: str) -> str:
    """'layers.q.weight' -> 'q'; 'layers.experts.gate' -> 'gate'."""
    parts = name.split(".")
    return parts[-2] if parts[-1] in ("weight", "bias") else parts[-1]


def _split(g: TensorGroup, arch: Architecture, tp: int) -> TensorGroup:
    """One GPU's slice of a tensor group under tensor parallelism tp."""
    if tp == 1 or g.role in ("norm", "position", "router", "flat"):
        return g
    if g.role in ("embedding", "lm_head"):
        return replace(g, shape=(ceil_div(g.shape[0], tp), *g.shape[1:]))
    m, out = _matrix(g.name), g.shape[0]
    if m in ("k", "v"):
        out = kv_heads_per_gpu(arch, tp) * arch.dim
    elif m == "qkv":
        out = arch.q_width // tp + 2 * kv_heads_per_gpu(arch, tp) * arch.dim
    elif m in _COLUMN:
        out = ceil_div(out, tp)
    elif m in _ROW and len(g.shape) == 2:
        return replace(g, shape=(out, ceil_div(g.shape[1], tp)))
    return replace(g, shape=(out, *g.shape[1:]))


def _stage(groups: list[TensorGroup], arch: Architecture, pp: int) -> list[TensorGroup]:
    """The heavier of the first and last pipeline stages."""
    if pp == 1:
        return groups
    per_stage = ceil_div(arch.layers, pp)
    layer = [replace(g, count=ceil_div(g.count * per_stage, arch.layers)) for g in groups]
    layer = [g for g in layer if g.name.startswith("layers.")]
    # "flat": what the formula does not shape (a vision tower, traced): it runs first
    first = layer + [g for g in groups if g.role in ("embedding", "position", "flat")]
    last = layer + [g for g in groups if g.role == "lm_head" or g.name.startswith("final_norm")]
    if arch.tied_embeddings:
        last += [replace(g, role="lm_head") for g in groups if g.role == "embedding"]
    return max(first, last, key=lambda gs: sum(g.total for g in gs))


def rank_groups(groups: tuple[TensorGroup, ...], arch: Architecture, par: Parallel) -> tuple:
    """The tensor groups the most loaded GPU holds."""
    split = [_split(g, arch, par.tp) for g in groups]
    split = [replace(g, count=g.count // par.ep) if g.role == "expert" else g for g in split]
    return tuple(_stage(split, arch, par.pp))
