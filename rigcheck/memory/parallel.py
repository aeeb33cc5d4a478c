"""Model parallelism: the parameter tensors one GPU holds under tensor, pipeline and expert
parallelism, and the rules that make a layout legal.

Tensor parallelism (Megatron-LM's column/row split, as vLLM and SGLang do it) splits q and the MLP
columns, the output rows, and the vocabulary of the embedding and lm_head (by the engine's own
padding: vocab_rows); norms and row-parallel biases stay whole. K and V are split by KV head, and
when tp exceeds the KV heads each GPU keeps one whole KV head (vLLM model_executor/layers/linear.py
QKVParallelLinear: num_kv_head_replicas = tp // total_num_kv_heads), so tp must divide the attention
heads and either divide or be a multiple of the KV heads. Pipeline parallelism gives each stage
ceil(layers/pp) layers; the heaviest GPU is the first stage (embedding) or the last (final norm and
lm_head; with tied embeddings Megatron keeps a copy of the embedding there). Expert parallelism
gives each GPU experts/ep whole experts, each split by tp too (Megatron-core's
expert_tensor_parallel_size defaults to tp).
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


# The embedding's and lm_head's rows one tensor-parallel rank holds, by whose layout:
# - vllm: VocabParallelEmbedding and ParallelLMHead pad the vocabulary to a multiple of 64
#   (DEFAULT_VOCAB_PADDING_SIZE, pad_vocab_size), also at tp 1, and give each rank padded / tp,
#   refusing a tp that does not divide it (divide()): vllm/model_executor/layers/
#   vocab_parallel_embedding.py, vllm-project/vllm at 7f5d141a.
# - megatron: the vocabulary padded to a multiple of make_vocab_size_divisible_by (default 128)
#   x tp, each rank padded / tp (Megatron-LM megatron/training/tokenizer/tokenizer.py
#   _vocab_size_with_padding; VocabParallelEmbedding and the ColumnParallelLinear output layer).
# - even: ceil(vocab / tp) on the most loaded rank, nothing padded. transformers 5.23's tp_plan
#   (--engine hf, hf-trainer) shards embed_tokens on the vocabulary (embedding_rowwise, added by
#   distributed/mixin.py init_parallel_plans; 4.x left it replicated) and lm_head by
#   colwise_gather_output, both DTensor Shard(0) (torch.chunk's split). DeepSpeed AutoTP slices the
#   embedding's hidden dimension and lm_head's input (module_inject/auto_tp.py _slice_embedding,
#   LmHeadLinearAllreduce, 0.19.8): the same 1/tp share while tp divides the hidden size, as the
#   attention heads already require. FSDP with torch's TP takes the user's plan (torchtitan's
#   shards tok_embeddings and output on the vocabulary).
VOCAB_PADDING = {"vllm": 64, "megatron": 128}


def vocab_rows(vocab: int, tp: int, layout: str = "even") -> int:
    """Rows of the embedding (and of lm_head) on one tensor-parallel rank (see above)."""
    if layout not in VOCAB_PADDING:
        return ceil_div(vocab, tp)
    multiple = VOCAB_PADDING[layout] * (tp if layout == "megatron" else 1)
    padded = ceil_div(vocab, multiple) * multiple
    if padded % tp:
        raise ConfigError(
            f"vLLM pads the {vocab:,}-token vocabulary to {padded:,} rows, which --tp {tp} does "
            "not divide: vLLM refuses it (try a power of two)"
        )
    return padded // tp


def _split(g: TensorGroup, arch: Architecture, tp: int, vocab: str = "even") -> TensorGroup:
    """One GPU's slice of a tensor group under tensor parallelism tp; `vocab`: whose layout of
    the embedding and lm_head (vocab_rows)."""
    if g.role in ("embedding", "lm_head"):
        return replace(g, shape=(vocab_rows(g.shape[0], tp, vocab), *g.shape[1:]))
    if tp == 1 or g.role in ("norm", "position", "router", "flat"):
        return g
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


def rank_groups(
    groups: tuple[TensorGroup, ...], arch: Architecture, par: Parallel, vocab: str = "even"
) -> tuple:
    """The tensor groups the most loaded GPU holds; `vocab`: whose embedding layout."""
    split = [_split(g, arch, par.tp, vocab) for g in groups]
    split = [replace(g, count=g.count // par.ep) if g.role == "expert" else g for g in split]
    return tuple(_stage(split, arch, par.pp))
