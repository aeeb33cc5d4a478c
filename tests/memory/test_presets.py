"""Parameter counts: the closed form reproduces every published count, and so does the real code.

With transformers installed, each preset is also built as the real Hugging Face model on the meta
device (config written by hand, nothing downloaded) and its parameters counted; without it those
tests skip and the closed form is still held to the published numbers.
"""

import pytest

from rigcheck.memory.architecture import Architecture, parameter_count, tensor_groups
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.presets import HF_CONFIGS, PRESETS, PUBLISHED_PARAMS, preset


def test_every_preset_has_a_published_count() -> None:
    assert set(PRESETS) == set(PUBLISHED_PARAMS)


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMS))
def test_closed_form_reproduces_the_published_count(name: str) -> None:
    assert parameter_count(PRESETS[name]) == PUBLISHED_PARAMS[name]


def test_llama_2_7b_by_hand() -> None:
    """6,738,415,616 = 2 x 32000 x 4096 + 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 4096."""
    layer = 4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096
    assert 2 * 32000 * 4096 + 32 * layer + 4096 == parameter_count(preset("llama-2-7b"))


def test_gpt2_by_hand() -> None:
    """124,439,808: tied embeddings counted once, learned positions, LayerNorm and linear biases."""
    h = 768
    layer = (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h) + 4 * h
    assert 50257 * h + 1024 * h + 12 * layer + 2 * h == parameter_count(preset("gpt2"))


def test_tensor_groups_have_positive_shapes() -> None:
    for arch in PRESETS.values():
        assert all(g.numel >= 1 and g.count >= 1 for g in tensor_groups(arch))


def test_unknown_model_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown model 'llama-9b'; known: gpt2"):
        preset("llama-9b")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"heads": 12, "kv_heads": 5}, "multiple of kv_heads"),
        ({"layers": 0}, "layers must be >= 1"),
        ({"hidden": 100, "heads": 3, "kv_heads": 3}, "head_dim"),
        ({"norm": "batch"}, "norm in"),
    ],
)
def test_invalid_architectures_are_refused(fields: dict, message: str) -> None:
    base = {"vocab": 10, "hidden": 64, "layers": 2, "heads": 4, "kv_heads": 4, "mlp_width": 128}
    with pytest.raises(ConfigError, match=message):
        Architecture(**{**base, **fields})


def _hf_model(arch: Architecture):
    """The Hugging Face model class and config for a preset's architecture, built by hand."""
    transformers = pytest.importorskip("transformers")
    if arch.positions:  # the GPT-2 family
        config = transformers.GPT2Config(
            vocab_size=arch.vocab, n_positions=arch.positions, n_embd=arch.hidden,
            n_layer=arch.layers, n_head=arch.heads, n_inner=arch.mlp_width,
        )  # fmt: skip
        return transformers.GPT2LMHeadModel, config
    family = "Qwen2" if arch.bias == "qkv" else "Llama"
    config = getattr(transformers, f"{family}Config")(
        vocab_size=arch.vocab, hidden_size=arch.hidden, intermediate_size=arch.mlp_width,
        num_hidden_layers=arch.layers, num_attention_heads=arch.heads,
        num_key_value_heads=arch.kv_heads, tie_word_embeddings=arch.tied_embeddings,
    )  # fmt: skip
    return getattr(transformers, f"{family}ForCausalLM"), config


@pytest.mark.parametrize("name", sorted(set(PRESETS) - set(HF_CONFIGS)))  # test_hf_config: rest
def test_meta_device_instantiation_matches(name: str) -> None:
    torch = pytest.importorskip("torch")
    model_class, config = _hf_model(PRESETS[name])
    with torch.device("meta"):
        model = model_class(config)
    assert sum(p.numel() for p in model.parameters()) == parameter_count(PRESETS[name])


def test_meta_model_has_the_tensor_shapes_the_rules_see() -> None:
    """Same multiset of shapes as tensor_groups (HF Linear weights are (out, in), as ours)."""
    torch = pytest.importorskip("torch")
    model_class, config = _hf_model(PRESETS["qwen2.5-0.5b"])
    with torch.device("meta"):
        model = model_class(config)
    real = sorted(tuple(p.shape) for p in model.parameters())
    ours = sorted(g.shape for g in tensor_groups(PRESETS["qwen2.5-0.5b"]) for _ in range(g.count))
    assert real == ours
