"""Named architectures whose parameter counts reproduce the published figures exactly.

Shapes are from each model's published config.json (Hugging Face hub); the counts are what
`model.num_parameters()` reports for those configs (tied matrices counted once), the figures the
model cards round to 124M, 6.74B and so on. tests/memory/test_presets.py checks each against the
closed form and, where transformers is installed, against a meta-device instantiation.
"""

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.errors import ConfigError


def _llama(
    vocab: int, hidden: int, layers: int, heads: int, kv: int, mlp: int, **kw
) -> Architecture:
    return Architecture(vocab, hidden, layers, heads, kv, mlp, **kw)


def _gpt2(hidden: int, layers: int, heads: int) -> Architecture:
    return Architecture(
        vocab=50257, hidden=hidden, layers=layers, heads=heads, kv_heads=heads,
        mlp_width=4 * hidden, gated_mlp=False, tied_embeddings=True, norm="layer", bias="all",
        positions=1024, fused_qkv=True, dropout=True,
    )  # fmt: skip


PRESETS: dict[str, Architecture] = {
    "gpt2": _gpt2(768, 12, 12),
    "gpt2-medium": _gpt2(1024, 24, 16),
    "qwen2.5-0.5b": _llama(151936, 896, 24, 14, 2, 4864, tied_embeddings=True, bias="qkv"),
    "tinyllama-1.1b": _llama(32000, 2048, 22, 32, 4, 5632),
    "llama-3.2-1b": _llama(128256, 2048, 16, 32, 8, 8192, tied_embeddings=True),
    "llama-2-7b": _llama(32000, 4096, 32, 32, 32, 11008),
    "llama-2-13b": _llama(32000, 5120, 40, 40, 40, 13824),
    "llama-2-70b": _llama(32000, 8192, 80, 64, 8, 28672),
    "llama-3-8b": _llama(128256, 4096, 32, 32, 8, 14336),
    "llama-3-70b": _llama(128256, 8192, 80, 64, 8, 28672),
    "mistral-7b": _llama(32000, 4096, 32, 32, 8, 14336),
}

# Published parameter counts, exact. Sources: the model cards and configs of openai-community/gpt2,
# gpt2-medium, Qwen/Qwen2.5-0.5B, TinyLlama/TinyLlama-1.1B, meta-llama/Llama-3.2-1B,
# meta-llama/Llama-2-{7,13,70}b-hf, meta-llama/Meta-Llama-3-{8,70}B, mistralai/Mistral-7B-v0.1.
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
}


def preset(name: str) -> Architecture:
    """The named architecture, or a ConfigError listing the known names."""
    try:
        return PRESETS[name.lower()]
    except KeyError:
        raise ConfigError(f"unknown model {name!r}; known: {', '.join(PRESETS)}") from None
