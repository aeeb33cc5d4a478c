"""LoRA trainable parameters against PEFT 0.21 itself, on small real transformers 5.23 models
built on CPU: Llama and Phi-3 (fused qkv_proj, gate_up_proj) for explicit targets and all-linear,
and the three mixture-of-experts layouts PEFT treats differently under all-linear (Mixtral and
Qwen3-MoE: router and fused experts; Qwen2-MoE: shared expert and dense layers)."""

import warnings

import pytest

from rigcheck.memory.errors import ConfigError
from rigcheck.memory.hf_config import from_hf_config
from rigcheck.memory.lora import adapter_groups, parse_targets

transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
torch = pytest.importorskip("torch")

SMALL = dict(
    hidden_size=64, intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
    num_key_value_heads=2, vocab_size=100, pad_token_id=0, bos_token_id=1, eos_token_id=1,
)  # fmt: skip
MOE = dict(num_experts_per_tok=2, decoder_sparse_step=1)
CONFIGS = {
    "llama": lambda: transformers.LlamaConfig(**SMALL),
    "phi3": lambda: transformers.Phi3Config(**SMALL),
    "mixtral": lambda: transformers.MixtralConfig(**SMALL, num_local_experts=4,
                                                  num_experts_per_tok=2),
    "qwen3-moe-dense-layer": lambda: transformers.Qwen3MoeConfig(
        **SMALL, **MOE, num_experts=4, moe_intermediate_size=32, mlp_only_layers=[1]),
    "deepseek-v3-mla": lambda: transformers.DeepseekV3Config(
        **SMALL, q_lora_rank=64, kv_lora_rank=32, qk_rope_head_dim=16,
        qk_nope_head_dim=24, v_head_dim=20, n_routed_experts=8, num_experts_per_tok=2,
        moe_intermediate_size=48, n_shared_experts=2, first_k_dense_replace=1, n_group=2,
        topk_group=1),
    "qwen2-moe-shared-dense-layer": lambda: transformers.Qwen2MoeConfig(
        **SMALL, **MOE, num_experts=4, moe_intermediate_size=32,
        shared_expert_intermediate_size=48, mlp_only_layers=[1]),
}  # fmt: skip
CASES = [
    ("llama", "q_proj,v_proj"), ("llama", "all-linear"), ("phi3", "qkv_proj"),
    ("phi3", "qkv_proj,gate_up_proj"), ("phi3", "all-linear"), ("mixtral", "all-linear"),
    ("mixtral", "q_proj,v_proj"), ("qwen3-moe-dense-layer", "all-linear"),
    ("qwen2-moe-shared-dense-layer", "all-linear"), ("deepseek-v3-mla", "all-linear"),
    ("deepseek-v3-mla", "q_a_proj,kv_a_proj_with_mqa"),
]  # fmt: skip


def peft_trainable(config, targets: str, rank: int) -> int:
    """Trainable parameters PEFT gives the model for these targets."""
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config)
    modules = targets if targets == "all-linear" else targets.split(",")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped = peft.get_peft_model(model, peft.LoraConfig(r=rank, target_modules=modules))
    return sum(p.numel() for p in wrapped.parameters() if p.requires_grad)


def ours(config, targets: str, rank: int) -> int:
    arch = from_hf_config(config.to_dict())
    return sum(g.total for g in adapter_groups(arch, rank, parse_targets(targets)))


@pytest.mark.parametrize(("name", "targets"), CASES)
def test_trainable_parameters_equal_peft(name, targets) -> None:
    config = CONFIGS[name]()
    assert ours(config, targets, 8) == peft_trainable(config, targets, 8)


def test_rank_scales_the_fused_experts_like_peft() -> None:
    config = CONFIGS["mixtral"]()
    assert ours(config, "all-linear", 4) == peft_trainable(config, "all-linear", 4)


def test_q_and_v_are_refused_on_fused_attention_as_peft_refuses_them() -> None:
    config = CONFIGS["phi3"]()
    with pytest.raises(ValueError, match="not found"):
        peft_trainable(config, "q_proj,v_proj", 8)
    with pytest.raises(ConfigError, match=r"unknown LoRA target\(s\) q, v .* qkv, o, gate_up"):
        ours(config, "q_proj,v_proj", 8)
