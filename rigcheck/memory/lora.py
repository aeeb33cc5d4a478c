"""LoRA adapters: which matrices they attach to and the parameters they add.

PEFT (tuners/lora/layer.py) adds A (r x d_in) and B (d_out x r) to each adapted matrix:
r * (d_in + d_out) trainable parameters, no bias by default. "all-linear" is PEFT's shorthand for
every linear layer except the output layer.
"""

from rigcheck.memory.architecture import Architecture, Linear, TensorGroup, linears
from rigcheck.memory.errors import ConfigError

ALL_LINEAR = "all-linear"
# Hugging Face module names for the canonical ones (Llama/Mistral/Qwen; GPT-2's fused c_attn).
ALIASES = {
    "q_proj": "q",
    "k_proj": "k",
    "v_proj": "v",
    "o_proj": "o",
    "gate_proj": "gate",
    "up_proj": "up",
    "down_proj": "down",
    "c_attn": "qkv",
}


def default_targets(arch: Architecture) -> tuple[str, ...]:
    """PEFT's default target modules: q and v projections (GPT-2: the fused c_attn)."""
    return ("qkv",) if arch.fused_qkv else ("q", "v")


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
    available = {m.name: m for m in linears(arch)}
    if targets == ALL_LINEAR:
        return tuple(available.values())
    unknown = [t for t in targets if t not in available]
    if unknown:
        raise ConfigError(
            f"unknown LoRA target(s) {', '.join(unknown)} for this model; "
            f"its layer matrices are {', '.join(available)} (or all-linear)"
        )
    return tuple(available[t] for t in dict.fromkeys(targets))


def adapter_groups(
    arch: Architecture, rank: int, targets: str | tuple[str, ...]
) -> tuple[TensorGroup, ...]:
    """The A and B matrices of every adapter, one group per target across all layers."""
    groups = []
    for m in target_linears(arch, targets):
        groups.append(TensorGroup(f"lora_A.{m.name}", (rank, m.d_in), arch.layers, "adapter"))
        groups.append(TensorGroup(f"lora_B.{m.name}", (m.d_out, rank), arch.layers, "adapter"))
    return tuple(groups)
