"""An Architecture from a Hugging Face config.json, for any decoder-only model of a known family.

Field names follow transformers 5.23's configuration classes (models/<family>/configuration_*.py);
the parameter tensors they imply were checked against meta-device instantiations of each family
(tests/memory/test_hf_config.py). A model id ('meta-llama/Llama-2-7b-hf') is resolved from the
local Hugging Face cache only (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub):
nothing is downloaded.
"""

import json
import math
import os
from pathlib import Path

from rigcheck.jsonfile import read_capped
from rigcheck.memory.architecture import Architecture
from rigcheck.memory.checkpoint_formats import from_quantization_config
from rigcheck.memory.errors import ConfigError

# model_type -> what differs from the Llama layout. Families not listed are refused by name.
_FAMILIES = {
    "llama": {},
    "mistral": {},
    "qwen2": {"bias": "qkv"},
    "qwen3": {"qk_norm": True},
    "gemma": {"norm": "gemma"},
    "gemma2": {"norm": "gemma", "norms_per_layer": 4},
    "gemma3_text": {"norm": "gemma", "norms_per_layer": 4, "qk_norm": True},
    "phi3": {"fused_qkv": True, "fused_gate_up": True},  # qkv_proj, gate_up_proj
    "mixtral": {},
    "qwen2_moe": {"bias": "qkv"},
    "qwen3_moe": {"qk_norm": True},
    "deepseek_v2": {},  # multi-head latent attention, shared experts: see _mla and _moe
    "deepseek_v3": {},
}


def _get(config: dict, *names: str, default: object = None) -> object:
    for name in names:
        if config.get(name) is not None:
            return config[name]
    if default is None:
        raise ConfigError(f"config.json has none of {', '.join(names)}")
    return default


# Every pattern-th layer attends fully, the others slide, when a config gives no layer_types:
# transformers 5.23 Gemma2Config (every second) and Gemma3TextConfig (sliding_window_pattern,
# default 6) build layer_types as "sliding" if (i + 1) % pattern else "full".
_DEFAULT_PATTERN = {"gemma2": 2, "gemma3_text": 6}


def _sliding(config: dict, layers: int) -> tuple[int, int]:
    """(window, layers using it): from layer_types when given, else from the family's pattern
    (Gemma-2/3), else every layer (Mistral)."""
    window = config.get("sliding_window") or 0
    if not window or config.get("use_sliding_window") is False:
        return 0, 0
    types = config.get("layer_types")
    if isinstance(types, list):
        return window, sum(t == "sliding_attention" for t in types)
    pattern = config.get("sliding_window_pattern") or _DEFAULT_PATTERN.get(config.get("model_type"))
    if pattern:
        return window, sum(1 for i in range(layers) if (i + 1) % int(pattern))
    return window, layers


def _moe(config: dict, layers: int) -> dict:
    experts = (
        config.get("num_local_experts")
        or config.get("num_experts")
        or config.get("n_routed_experts")  # DeepSeek
        or 0
    )
    if not experts:
        return {}
    top_k = _get(config, "num_experts_per_tok")
    step = config.get("decoder_sparse_step") or 1
    dense_only = set(config.get("mlp_only_layers") or [])
    first_moe = config.get("first_k_dense_replace") or 0  # DeepSeek: the first k stay dense
    dense = sum(1 for i in range(layers) if i in dense_only or (i + 1) % step or i < first_moe)
    moe_width = config.get("moe_intermediate_size") or 0
    shared = config.get("shared_expert_intermediate_size") or 0
    if config.get("n_shared_experts"):  # DeepSeek: one MLP n_shared times as wide, no gate
        shared = moe_width * config["n_shared_experts"]
    return {
        "experts": experts,
        "experts_per_token": top_k,
        "expert_mlp_width": moe_width,
        "shared_expert_width": shared,
        "shared_expert_gate": not config.get("n_shared_experts"),
        "dense_layers": dense,
    }


def _mla(config: dict) -> dict:
    """DeepSeek-V2/V3's multi-head latent attention (transformers 5.23 DeepseekV3Config)."""
    if not config.get("kv_lora_rank"):
        return {}
    return {
        "q_lora_rank": int(config.get("q_lora_rank") or 0),  # None: one q_proj (V2-Lite)
        "kv_lora_rank": int(config["kv_lora_rank"]),
        "rope_head_dim": int(_get(config, "qk_rope_head_dim")),
        "v_head_dim": int(_get(config, "v_head_dim")),
    }


def from_hf_config(config: dict) -> Architecture:
    """The Architecture a decoder-only config.json describes; a ConfigError says what is wrong."""
    if not isinstance(config, dict):
        raise ConfigError("config.json must hold a JSON object")
    quantization = config.get("quantization_config")  # at the top, also for multimodal wrappers
    outer_type = config.get("model_type")  # what PEFT keys its default LoRA targets by
    config = config.get("text_config") or config  # multimodal wrappers keep the LM inside
    family = config.get("model_type")
    if family not in _FAMILIES:
        raise ConfigError(
            f"model_type {family!r} is not supported; known: {', '.join(_FAMILIES)} "
            "(or give --params for model state only)"
        )
    layers = int(_get(config, "num_hidden_layers"))
    heads = int(_get(config, "num_attention_heads"))
    window, sliding = _sliding(config, layers)
    default_bias = _FAMILIES[family].get("bias", "none")
    kw = dict(_FAMILIES[family])
    kw["bias"] = "attn" if config.get("attention_bias") and default_bias == "none" else default_bias
    try:
        return Architecture(
            vocab=int(_get(config, "vocab_size")),
            hidden=int(_get(config, "hidden_size")),
            layers=layers,
            heads=heads,
            kv_heads=int(config.get("num_key_value_heads") or heads),
            mlp_width=int(_get(config, "intermediate_size")),
            tied_embeddings=bool(config.get("tie_word_embeddings", family.startswith("gemma"))),
            head_dim=int(
                (config.get("qk_nope_head_dim") if _mla(config) else config.get("head_dim")) or 0
            ),
            max_positions=int(config.get("max_position_embeddings") or 0),
            mlp_bias=bool(config.get("mlp_bias", False)),
            sliding_window=window,
            sliding_layers=sliding,
            checkpoint=from_quantization_config(quantization) if quantization else None,
            **kw,
            **_moe(config, layers),
            **_mla(config),
            attn_softcap=bool(config.get("attn_logit_softcapping")),
            model_type=str(outer_type or family),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"config.json: {exc}") from None


def read_config(path: str | Path) -> dict:
    """The fields of a config.json (or of a directory holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / "config.json"
    try:
        config = json.loads(read_capped(path), parse_constant=_not_a_number)
    except (OSError, ValueError, RecursionError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: config.json must hold a JSON object")
    for fields in (config, config.get("text_config")):
        if isinstance(fields, dict):
            _check_counts(path, fields)
    return config


def _check_counts(path: Path, fields: dict) -> None:
    bad = next(((k, v) for k, v in fields.items() if _not_a_count(k, v)), None)
    if bad:
        raise ConfigError(
            f"{path}: {bad[0]} is {bad[1]!r}, not a count (a whole number >= 0) as in the "
            "model's own config.json: a hand edit or a damaged copy?"
        )
    layers = fields.get("num_hidden_layers") or 0
    if layers > MAX_LAYERS:  # the trace and the per-layer patterns would run for hours
        raise ConfigError(
            f"{path}: num_hidden_layers {layers:,} is more than any model has (at most "
            f"{MAX_LAYERS:,} here; Llama-3.1-405B has 126): a damaged copy?"
        )


# The fields read as counts (layers, widths, heads, experts, windows): int() took 4096.5 for
# 4096, "4096" and true for numbers, a sliding_window of -5 was served, and Infinity was an
# OverflowError's traceback.
COUNT_FIELDS = frozenset((
    "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "hidden_size",
    "intermediate_size", "vocab_size", "head_dim", "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim", "q_lora_rank", "kv_lora_rank", "max_position_embeddings", "sliding_window",
    "sliding_window_pattern", "num_local_experts", "num_experts", "n_routed_experts",
    "n_shared_experts", "num_experts_per_tok", "decoder_sparse_step", "first_k_dense_replace",
    "moe_intermediate_size", "shared_expert_intermediate_size", "shared_intermediate_size",
    "intermediate_size_mlp", "attention_chunk_size", "attn_layer_period", "attn_layer_offset",
    "no_rope_layer_interval", "mamba_d_conv", "mamba_d_head", "mamba_d_ssm", "mamba_d_state",
    "mamba_n_groups", "mamba_n_heads",
))  # fmt: skip


MAX_LAYERS = 10_000  # 80 times the deepest published decoder's (Llama-3.1-405B: 126)


def _not_a_count(name: str, value: object) -> bool:
    if name not in COUNT_FIELDS or value is None:
        return False
    if isinstance(value, float):
        return not (math.isfinite(value) and value.is_integer() and value >= 0)
    return isinstance(value, bool) or not isinstance(value, int) or value < 0


def _not_a_number(word: str) -> float:
    """json's parse_constant: NaN and Infinity are no JSON numbers (Python's json takes them)."""
    raise ValueError(f"{word} is not a JSON number")


def load_hf_config(path: str | Path) -> Architecture:
    """Read a config.json (or a directory holding one)."""
    return from_hf_config(read_config(path))


def hub_cache() -> Path:
    """Where huggingface_hub keeps downloaded repositories on this machine."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface"
    return Path(home) / "hub"


def cached_config(model_id: str) -> Path | None:
    """The newest cached config.json of a hub model id, or None when it is not in the cache."""
    repo = hub_cache() / ("models--" + model_id.replace("/", "--"))
    found = sorted(repo.glob("snapshots/*/config.json"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None
