"""Activations as transformers 5.23 really saves them, to the byte: one decoder layer of small
real Llama, Mistral, Qwen3 and Gemma 1-3 models on CPU, every tensor autograd keeps during its
forward pass (saved_tensors_hooks, one count per storage, parameters excluded), against
layer_activation_bytes
plus the rotary cos/sin the model computes once and every layer shares (head_activation_bytes
counts those once). Eager and SDPA attention (SDPA's CPU kernel keeps an fp32 logsumexp, as
flash attention does), bf16 and fp32 weights, multi-head and grouped-query attention."""

import warnings

import pytest

from rigcheck.memory.activations import (
    ActivationConfig,
    layer_activation_bytes,
    stored_activation_bytes,
)
from rigcheck.memory.hf_config import from_hf_config

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from .torch_models import saved_bytes  # noqa: E402  (needs torch)

SMALL = dict(
    hidden_size=128, intermediate_size=344, num_hidden_layers=1, num_attention_heads=4,
    head_dim=32, vocab_size=100, pad_token_id=0, bos_token_id=1, eos_token_id=1,
)  # fmt: skip
FAMILIES = {
    "llama": transformers.LlamaConfig,
    "mistral": transformers.MistralConfig,
    "qwen3": transformers.Qwen3Config,
    "gemma": transformers.GemmaConfig,
    "gemma2": transformers.Gemma2Config,  # eager only: transformers refuses SDPA for it
    "gemma3": transformers.Gemma3TextConfig,
}
DTYPES = {"bf16": (torch.bfloat16, 2), "fp32": (torch.float32, 4)}


def measure_layer(config, attention: str, dtype, seq: int, batch: int) -> int:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_config(
            config, dtype=dtype, attn_implementation=attention
        ).train()
    layer = model.model.layers[0]
    x = torch.randn(batch, seq, config.hidden_size, dtype=dtype, requires_grad=True)
    positions = torch.arange(seq).unsqueeze(0).expand(batch, seq)
    if isinstance(config, transformers.Gemma3TextConfig):  # one rotary per attention type
        rotary = model.model.rotary_emb(x, positions, layer_type=config.layer_types[0])
    else:
        rotary = model.model.rotary_emb(x, positions)
    return saved_bytes(layer, lambda: layer(x, position_embeddings=rotary, position_ids=positions))


# transformers 5.23 has no SDPA attention for Gemma-2: eager only there
ATTENTIONS = [
    (f, a) for f in sorted(FAMILIES) for a in ("eager", "sdpa") if (f, a) != ("gemma2", "sdpa")
]


@pytest.mark.parametrize("prec", sorted(DTYPES))
@pytest.mark.parametrize(("family", "attention"), ATTENTIONS)
@pytest.mark.parametrize("kv_heads", [4, 2])
@pytest.mark.parametrize(("seq", "batch"), [(64, 2), (32, 3)])
def test_a_real_layer_saves_what_the_formula_counts(family, kv_heads, attention, prec, seq, batch):
    config = FAMILIES[family](**SMALL, num_key_value_heads=kv_heads)
    dtype, e = DTYPES[prec]
    arch = from_hf_config(config.to_dict())
    mode = "eager" if attention == "eager" else "flash"
    formula = layer_activation_bytes(arch, ActivationConfig(seq, batch, e, "none", mode))
    rotary = 2 * e * seq * batch * arch.dim  # cos and sin, shared by every layer
    assert measure_layer(config, attention, dtype, seq, batch) == formula + rotary + gemma(arch)


def gemma(arch) -> int:
    """Gemma's norms keep (1 + w) in fp32, whatever the batch (the formula leaves it out)."""
    if arch.norm != "gemma":
        return 0
    return 4 * (arch.norms_per_layer * arch.hidden + (2 * arch.dim if arch.qk_norm else 0))


@pytest.mark.parametrize("prec", sorted(DTYPES))
@pytest.mark.parametrize("family", ["llama", "qwen3", "gemma", "gemma3"])
def test_a_whole_model_saves_the_layers_and_the_output_layers(family, prec) -> None:
    """Two layers, the embedding, the final norm, lm_head and the loss of a real model, run as
    a user runs it (input ids and labels): stored_activation_bytes to the byte, apart from three
    stated constants: transformers broadcasts one rotary cos/sin over the batch (the formula
    counts one per sequence), the loss keeps an fp32 scalar, and Gemma keeps its (1 + w) copies
    and its embedding's scale."""
    config = FAMILIES[family](**{**SMALL, "num_hidden_layers": 2}, num_key_value_heads=2)
    dtype, e = DTYPES[prec]
    seq, batch = 64, 2
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_config(
            config, dtype=dtype, attn_implementation="sdpa"
        ).train()
    ids = torch.randint(config.vocab_size, (batch, seq))
    measured = saved_bytes(model, lambda: model(input_ids=ids, labels=ids).loss)
    arch = from_hf_config(config.to_dict())
    formula = stored_activation_bytes(arch, ActivationConfig(seq, batch, e, "none", "flash"))
    broadcast_rotary = 2 * e * arch.dim * seq * (batch - 1)
    constants = 4  # the loss's fp32 total weight
    if arch.norm == "gemma":  # every layer's norms, the final norm's (1 + w), the scale
        constants += 2 * gemma(arch) + 4 * arch.hidden + e
    assert measured == formula - broadcast_rotary + constants
