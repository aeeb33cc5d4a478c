"""Named architectures whose parameter counts reproduce the published figures exactly.

Shapes are from each model's published config.json (Hugging Face hub); the counts are what
`model.num_parameters()` reports for those configs (tied matrices counted once), the figures the
model cards round to 124M, 6.74B and so on. tests/memory/test_presets.py checks each against the
closed form and, where transformers is installed, against a meta-device instantiation.
"""

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.hf_config import from_hf_config


def _llama(
    vocab: int, hidden: int, layers: int, heads: int, kv: int, mlp: int, **kw
) -> Architecture:
    return Architecture(vocab, hidden, layers, heads, kv, mlp, **{"model_type": "llama", **kw})


def _gpt2(hidden: int, layers: int, heads: int) -> Architecture:
    return Architecture(
        vocab=50257, hidden=hidden, layers=layers, heads=heads, kv_heads=heads,
        mlp_width=4 * hidden, gated_mlp=False, tied_embeddings=True, norm="layer", bias="all",
        positions=1024, fused_qkv=True, dropout=True, max_positions=1024, model_type="gpt2",
    )  # fmt: skip


def _hf(
    model_type: str,
    vocab: int,
    hidden: int,
    mlp: int,
    layers: int,
    heads: int,
    kv: int,
    positions: int,
    **extra,
) -> dict:
    """A preset written as the fields of its published config.json."""
    return {
        "model_type": model_type, "vocab_size": vocab, "hidden_size": hidden,
        "intermediate_size": mlp, "num_hidden_layers": layers, "num_attention_heads": heads,
        "num_key_value_heads": kv, "max_position_embeddings": positions, **extra,
    }  # fmt: skip


PRESETS: dict[str, Architecture] = {
    "gpt2": _gpt2(768, 12, 12),
    "gpt2-medium": _gpt2(1024, 24, 16),
    "qwen2.5-0.5b": _llama(
        151936,
        896,
        24,
        14,
        2,
        4864,
        tied_embeddings=True,
        bias="qkv",
        max_positions=32768,
        model_type="qwen2",
    ),
    "tinyllama-1.1b": _llama(32000, 2048, 22, 32, 4, 5632, max_positions=2048),
    "llama-3.2-1b": _llama(
        128256, 2048, 16, 32, 8, 8192, tied_embeddings=True, max_positions=131072
    ),
    "llama-2-7b": _llama(32000, 4096, 32, 32, 32, 11008, max_positions=4096),
    "llama-2-13b": _llama(32000, 5120, 40, 40, 40, 13824, max_positions=4096),
    "llama-2-70b": _llama(32000, 8192, 80, 64, 8, 28672, max_positions=4096),
    "llama-3-8b": _llama(128256, 4096, 32, 32, 8, 14336, max_positions=8192),
    "llama-3-70b": _llama(128256, 8192, 80, 64, 8, 28672, max_positions=8192),
    # v0.1: a 4096-token sliding window on every layer
    "mistral-7b": _llama(
        32000,
        4096,
        32,
        32,
        8,
        14336,
        max_positions=32768,
        sliding_window=4096,
        sliding_layers=32,
        model_type="mistral",
    ),
}

# Presets kept as config.json fields, so the self-tests can build the real model from them.
HF_CONFIGS: dict[str, dict] = {
    "llama-7b": _hf("llama", 32000, 4096, 11008, 32, 32, 32, 2048),  # LLaMA-1
    "llama-13b": _hf("llama", 32000, 5120, 13824, 40, 40, 40, 2048),
    "llama-3.1-8b": _hf("llama", 128256, 4096, 14336, 32, 32, 8, 131072),
    "llama-3.1-70b": _hf("llama", 128256, 8192, 28672, 80, 64, 8, 131072),
    "qwen2.5-7b": _hf("qwen2", 152064, 3584, 18944, 28, 28, 4, 131072, tie_word_embeddings=False),
    "qwen2.5-72b": _hf("qwen2", 152064, 8192, 29568, 80, 64, 8, 131072, tie_word_embeddings=False),
    "gemma-2-9b": _hf(
        "gemma2", 256000, 3584, 14336, 42, 16, 8, 8192, head_dim=256, sliding_window=4096
    ),
    "phi-3-mini": _hf("phi3", 32064, 3072, 8192, 32, 32, 32, 4096, tie_word_embeddings=False),
    "mixtral-8x7b": _hf(
        "mixtral", 32000, 4096, 14336, 32, 32, 8, 32768, num_local_experts=8, num_experts_per_tok=2
    ),
}
PRESETS.update({name: from_hf_config(fields) for name, fields in HF_CONFIGS.items()})

# Published parameter counts, exact. Sources: the model cards and configs of openai-community/gpt2,
# gpt2-medium, Qwen/Qwen2.5-0.5B, TinyLlama/TinyLlama-1.1B, meta-llama/Llama-3.2-1B,
# meta-llama/Llama-2-{7,13,70}b-hf, meta-llama/Meta-Llama-3-{8,70}B, mistralai/Mistral-7B-v0.1,
# huggyllama/llama-{7,13}b, meta-llama/Llama-3.1-{8,70}B, Qwen/Qwen2.5-{7,72}B, google/gemma-2-9b,
# microsoft/Phi-3-mini-4k-instruct, mistralai/Mixtral-8x7B-v0.1 (46.7B total, 12.9B active).
PUBLISHED_PARAMS: dict[str, int] = {
    "gpt2": 124_439_808,
    "gpt2-medium": 354_823_168,
    "qwen2.5-0.5b": 494_032_768,
    "tinyllama-1.1b": 1_100_048_384,
    "llama-3.2-1b": 1_235_814_400,
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "mistral-7b": 7_241_732_096,
    "llama-7b": 6_738_415_616,
    "llama-13b": 13_015_864_320,
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "qwen2.5-7b": 7_615_616_512,
    "qwen2.5-72b": 72_706_203_648,
    "gemma-2-9b": 9_241_705_984,
    "phi-3-mini": 3_821_079_552,
    "mixtral-8x7b": 46_702_792_704,
}


def preset(name: str) -> Architecture:
    """The named architecture, or a ConfigError listing the known names."""
    try:
        return PRESETS[name.lower()]
    except KeyError:
        raise ConfigError(f"unknown model {name!r}; known: {', '.join(PRESETS)}") from None
