"""LoRA adapters: which matrices they attach to and the parameters they add.

PEFT (tuners/lora/layer.py) adds A (r x d_in) and B (d_out x r) to each adapted matrix:
r * (d_in + d_out) trainable parameters, no bias by default. "all-linear" is PEFT's shorthand for
every linear layer except the output layer. Fused projections are one matrix to PEFT: Phi-3's
qkv_proj and gate_up_proj take one adapter each, and q_proj or v_proj do not exist there (PEFT
refuses them).

Mixtures of experts, as PEFT 0.21.2 adapts transformers 5.23's models under "all-linear"
(peft/utils/transformers_weight_conversion.py, _convert_peft_config_moe): transformers 5 stores a
layer's routed experts as two 3-D parameters, gate_up_proj (E, 2f, h) and down_proj (E, h, f);
PEFT wraps each (tuners/lora/layer.py ParamWrapper) with A (r*E x d_in) and B (d_out x r*E),
doubling the rank of gate_up_proj because it fuses two v4 matrices (w1 and w3, or gate_proj and
up_proj), and adapts the router (E x h). Dense-MLP layers of such a model are not adapted: their
gate_proj/up_proj/down_proj names are diverted to the experts' parameters; DeepSeek-V2/V3's shared
experts are not adapted either. Models with a gated shared expert (Qwen2-MoE) come out the other
way round: the shared expert's linears, its 1-wide gate and the dense-MLP layers are adapted, the
routed experts and the router are not. These behaviours are pinned against PEFT itself in
tests/memory/test_real_lora.py.
"""

from rigcheck.memory.architecture import ATTENTION_LINEARS, Architecture, Linear, TensorGroup
from rigcheck.memory.architecture import linears as layer_linears
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.peft_defaults import peft_default_targets

ALL_LINEAR = "all-linear"
# Hugging Face module names for the canonical ones (Llama/Mistral/Qwen; GPT-2's fused c_attn,
# Phi-3's fused qkv_proj and gate_up_proj).
ALIASES = {
    "q_proj": "q",
    "k_proj": "k",
    "v_proj": "v",
    "o_proj": "o",
    "gate_proj": "gate",
    "up_proj": "up",
    "down_proj": "down",
    "c_attn": "qkv",
    "qkv_proj": "qkv",
    "gate_up_proj": "gate_up",
    "q_a_proj": "q_a",  # DeepSeek's multi-head latent attention
    "q_b_proj": "q_b",
    "kv_a_proj_with_mqa": "kv_a",
    "kv_b_proj": "kv_b",
}


def default_targets(arch: Architecture) -> tuple[str, ...]:
    """PEFT's default target modules for the model's type (Llama, Mistral, Qwen2/3, Gemma: q and
    v; GPT-2: the fused c_attn), as matrix names; a ConfigError where PEFT has none."""
    try:
        modules = peft_default_targets(arch.model_type)
    except ConfigError as exc:  # name the matrices this model has
        names = ", ".join(m.name for m in layer_linears(arch))
        raise ConfigError(f"{exc}; this model's matrices: {names}") from None
    return tuple(ALIASES.get(m, m) for m in modules)


def parse_targets(text: str) -> str | tuple[str, ...]:
    """'all-linear' or a comma-separated list of matrix names ('q,v' or 'q_proj,v_proj')."""
    if text.strip() == ALL_LINEAR:
        return ALL_LINEAR
    names = tuple(ALIASES.get(n.strip(), n.strip()) for n in text.split(",") if n.strip())
    if not names:
        raise ConfigError("--lora-targets: give a comma-separated list of matrices or all-linear")
    return names


def target_linears(arch: Architecture, targets: str | tuple[str, ...]) -> tuple[Linear, ...]:
    """The layer matrices the adapters attach to; a ConfigError names any unknown target."""
    available = {m.name: m for m in layer_linears(arch)}
    if targets == ALL_LINEAR:
        return tuple(available.values())
    unknown = [t for t in targets if t not in available]
    if unknown:
        raise ConfigError(
            f"unknown LoRA target(s) {', '.join(unknown)} for this model; "
            f"its layer matrices are {', '.join(available)} (or all-linear)"
        )
    return tuple(available[t] for t in dict.fromkeys(targets))


def _pair(name: str, d_in: int, d_out: int, rank: int, count: int) -> list[TensorGroup]:
    """A (rank x d_in) and B (d_out x rank) of `count` adapters."""
    return [
        TensorGroup(f"lora_A.{name}", (rank, d_in), count, "adapter"),
        TensorGroup(f"lora_B.{name}", (d_out, rank), count, "adapter"),
    ]


def _layers_holding(arch: Architecture, m: Linear, targets: str | tuple[str, ...]) -> int:
    """Layers whose matrix m gets an adapter: attention in every layer; the MLP in dense-MLP
    layers, except under all-linear on an MoE model without a shared expert (see above)."""
    if m.name in ATTENTION_LINEARS:
        return arch.layers
    if targets == ALL_LINEAR and arch.experts and not _gated_shared_expert(arch):
        return 0
    return arch.mlp_layers


def _gated_shared_expert(arch: Architecture) -> bool:
    """Qwen2-MoE's layout, which PEFT adapts the other way round (see above)."""
    return bool(arch.shared_expert_width) and arch.shared_expert_gate


def _expert_adapters(arch: Architecture, rank: int) -> list[TensorGroup]:
    """All-linear's adapters on the MoE blocks (see the module docstring)."""
    h, n, s = arch.hidden, arch.moe_layers, arch.shared_expert_width
    if not n:
        return []
    if _gated_shared_expert(arch):  # Qwen2-MoE: the shared expert and its gate, not the routed
        shared = [("shared_expert.gate", h, s), ("shared_expert.up", h, s)]
        shared += [("shared_expert.down", s, h), ("shared_expert_gate", h, 1)]
        return [g for name, d_in, d_out in shared for g in _pair(name, d_in, d_out, rank, n)]
    e, experts = arch.expert_mlp_width or arch.mlp_width, arch.experts
    groups = _pair("router", h, experts, rank, n)
    groups += _pair("experts.gate_up", h, 2 * e, 2 * rank * experts, n)
    groups += _pair("experts.down", e, h, rank * experts, n)
    return groups


def adapter_groups(
    arch: Architecture, rank: int, targets: str | tuple[str, ...]
) -> tuple[TensorGroup, ...]:
    """The A and B matrices of every adapter, one group per target across all layers."""
    groups = []
    for m in target_linears(arch, targets):
        groups += _pair(m.name, m.d_in, m.d_out, rank, _layers_holding(arch, m, targets))
    if targets == ALL_LINEAR:
        groups += _expert_adapters(arch, rank)
    return tuple(g for g in groups if g.count)
