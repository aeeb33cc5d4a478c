"""Hugging Face config.json in, Architecture out: parameter counts equal transformers' own models.

Each config is built locally with transformers' configuration classes (nothing downloaded), the
model instantiated on the meta device, and its parameters counted as torch counts them (a tied
matrix once). Covers Llama (with attention and MLP biases), Mistral, Qwen2 (QKV biases, tied),
Qwen3 (q/k norms), Gemma (head_dim override, tied), Gemma-2 (four norms, sliding window),
Gemma-3, Phi-3 (fused qkv and gate_up), and three mixtures of experts: Mixtral, Qwen2-MoE (shared
expert, dense layers) and Qwen3-MoE.
"""

import json

import pytest

from rigcheck.memory.architecture import active_parameter_count, parameter_count
from rigcheck.memory.cli import main
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.hf_config import from_hf_config
from rigcheck.memory.presets import HF_CONFIGS, PUBLISHED_PARAMS

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

# DeepSeek's multi-head latent attention, small: q and kv latents, a shared rope key, routed and
# shared experts, a first dense layer.
MLA = dict(
    hidden_size=128, intermediate_size=256, num_hidden_layers=3, num_attention_heads=4,
    num_key_value_heads=4, vocab_size=100, q_lora_rank=64, kv_lora_rank=32, qk_rope_head_dim=16,
    qk_nope_head_dim=24, v_head_dim=20, n_routed_experts=8, num_experts_per_tok=2,
    moe_intermediate_size=48, n_shared_experts=2, first_k_dense_replace=1, n_group=2,
    topk_group=1, pad_token_id=0, bos_token_id=1, eos_token_id=1,
)  # fmt: skip
CONFIGS = {
    "llama-biases": lambda: transformers.LlamaConfig(attention_bias=True, mlp_bias=True),
    "llama-3-8b-shape": lambda: transformers.LlamaConfig(
        vocab_size=128256, intermediate_size=14336, num_key_value_heads=8
    ),
    "mistral": lambda: transformers.MistralConfig(),
    "qwen2-tied-qkv-bias": lambda: transformers.Qwen2Config(
        vocab_size=151936,
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=24,
        num_attention_heads=14,
        num_key_value_heads=2,
        tie_word_embeddings=True,
    ),
    "qwen3": lambda: transformers.Qwen3Config(),
    "gemma-head-dim": lambda: transformers.GemmaConfig(),
    "gemma2": lambda: transformers.Gemma2Config(),
    "gemma3-text": lambda: transformers.Gemma3TextConfig(),
    "phi3": lambda: transformers.Phi3Config(),
    "mixtral": lambda: transformers.MixtralConfig(),
    "qwen2-moe-dense-layers": lambda: transformers.Qwen2MoeConfig(
        num_hidden_layers=6, mlp_only_layers=[0, 3], decoder_sparse_step=1
    ),
    "qwen3-moe": lambda: transformers.Qwen3MoeConfig(),
    "deepseek-v3-mla": lambda: transformers.DeepseekV3Config(**MLA),
    "deepseek-v2-mla-no-q-lora": lambda: transformers.DeepseekV2Config(
        **{**MLA, "q_lora_rank": None}
    ),
}


def meta_count(config) -> int:
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parameter_count_equals_the_meta_device_model(name: str) -> None:
    config = CONFIGS[name]()
    # through JSON, as a config.json on disk would arrive
    arch = from_hf_config(json.loads(config.to_json_string()))
    assert parameter_count(arch) == meta_count(config)


@pytest.mark.parametrize("name", sorted(HF_CONFIGS))
def test_config_presets_equal_the_meta_device_model(name: str) -> None:
    fields = dict(HF_CONFIGS[name])
    config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
    assert meta_count(config) == PUBLISHED_PARAMS[name]


def test_moe_active_parameters_count_the_routed_experts_only() -> None:
    """Mixtral-8x7B: 46.7B parameters, 12.9B used per token (2 of 8 experts)."""
    config = transformers.MixtralConfig()
    arch = from_hf_config(config.to_dict())
    expert = 3 * config.hidden_size * config.intermediate_size
    assert parameter_count(arch) - active_parameter_count(arch) == 32 * 6 * expert
    assert round(active_parameter_count(arch) / 1e9, 1) == 12.9


def test_config_file_and_cached_model_id(tmp_path, monkeypatch, capsys) -> None:
    """--config reads a file; a hub id is found in the local cache only, never downloaded."""
    config = CONFIGS["qwen2-tied-qkv-bias"]()
    path = tmp_path / "config.json"
    config.to_json_file(path)
    main(["fit", "--config", str(path), "--vram", "80GB", "--json"])
    assert json.loads(capsys.readouterr().out)["params"] == 494_032_768
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = tmp_path / "hub" / "models--Qwen--Qwen2.5-0.5B" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    config.to_json_file(snapshot / "config.json")
    main(["fit", "--model", "Qwen/Qwen2.5-0.5B", "--vram", "80GB", "--json"])
    assert json.loads(capsys.readouterr().out)["params"] == 494_032_768
    assert main(["fit", "--model", "meta-llama/Nope-7b", "--vram", "80GB"]) == 2
    assert "not in the local Hugging Face cache" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model_type": "bert"}, "model_type 'bert' is not supported"),
        ({"model_type": "llama", "hidden_size": 64}, "config.json has none of num_hidden_layers"),
        ([1, 2], "JSON object"),
    ],
)
def test_unusable_configs_say_why(config, message) -> None:
    with pytest.raises(ConfigError, match=message):
        from_hf_config(config)


@pytest.mark.parametrize("layers", [26, 33, 34, 62])
@pytest.mark.parametrize(
    ("family", "pattern"), [("gemma2", None), ("gemma3_text", None), ("gemma3_text", 4)]
)
def test_sliding_layers_without_layer_types_follow_transformers(family, pattern, layers) -> None:
    """Hub configs of Gemma-3 give sliding_window_pattern and no layer_types: the sliding layers
    are those transformers' own config class derives (every pattern-th layer is full)."""
    kwargs = {"num_hidden_layers": layers}
    if pattern:
        kwargs["sliding_window_pattern"] = pattern
    config = transformers.AutoConfig.for_model(family, **kwargs)
    reference = sum(t == "sliding_attention" for t in config.layer_types)
    plain = config.to_dict()
    del plain["layer_types"]
    if pattern:
        plain["sliding_window_pattern"] = pattern
    assert from_hf_config(plain).sliding_layers == reference
