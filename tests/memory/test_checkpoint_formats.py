"""Pre-quantized checkpoints (quantization_config): FP8 against transformers' own FP8 modules,
GPTQ and AWQ against the tensor shapes vLLM allocates for them, and the job rules."""

import json

import pytest

from rigcheck.memory.architecture import tensor_groups
from rigcheck.memory.checkpoint_formats import (
    CheckpointFormat,
    from_quantization_config,
    matrix_bytes,
    weights_bytes,
)
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.hf_config import from_hf_config
from rigcheck.memory.presets import HF_CONFIGS

SMALL = dict(
    hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, vocab_size=300, pad_token_id=0, bos_token_id=1, eos_token_id=1,
)  # fmt: skip


def test_gptq_4bit_group_128_as_vllm_allocates_it() -> None:
    """4096 x 11008 (Llama-7B's down_proj, d_out 4096, d_in 11008): qweight int32 (11008 / 8,
    4096), qzeros int32 (86, 4096 / 8), fp16 scales (86, 4096), g_idx int32 (11008)."""
    fmt = CheckpointFormat("gptq", 4, 128)
    groups = -(-11008 // 128)
    expected = 4 * (11008 // 8) * 4096 + 4 * groups * 4096 // 8 + 2 * groups * 4096 + 4 * 11008
    assert matrix_bytes(fmt, 4096, 11008) == expected
    assert 4.15 < 8 * expected / (4096 * 11008) < 4.17  # bits per weight


def test_awq_has_no_g_idx_and_packs_the_output_dim() -> None:
    fmt = CheckpointFormat("awq", 4, 128)
    assert matrix_bytes(fmt, 4096, 4096) == 4096 * 4096 // 2 + 32 * 4096 // 2 + 2 * 32 * 4096
    one_group = CheckpointFormat("gptq", 8, -1)
    assert matrix_bytes(one_group, 64, 64) == 64 * 64 + 64 + 2 * 64 + 4 * 64


def test_quantization_config_is_read_not_ignored() -> None:
    config = {**HF_CONFIGS["llama-7b"], "quantization_config": {"quant_method": "gptq",
              "bits": 4, "group_size": 128, "desc_act": False}}  # fmt: skip
    arch = from_hf_config(config)
    assert arch.checkpoint == CheckpointFormat("gptq", 4, 128)
    served = estimate(Job(arch=arch, inference=True, seq=16))
    bf16 = estimate(Job(arch=from_hf_config(HF_CONFIGS["llama-7b"]), inference=True, seq=16))
    assert served.weights_bytes == weights_bytes(tensor_groups(arch), arch.checkpoint, 2)
    assert 0.25 < served.weights_bytes / bf16.weights_bytes < 0.35
    with pytest.raises(ConfigError, match=r"pre-quantized \(gptq\) and frozen: .* --method lora"):
        Job(arch=arch, seq=16)
    lora = estimate(Job(arch=arch, seq=16, method="lora"))
    assert lora.weights_bytes == served.weights_bytes + 2 * lora.trainable_params


@pytest.mark.parametrize(
    ("config", "fmt"),
    [({"quant_method": "awq", "w_bit": 4, "q_group_size": 64}, CheckpointFormat("awq", 4, 64)),
     ({"quant_method": "fp8", "weight_block_size": [128, 128]}, CheckpointFormat("fp8", 8, 128)),
     ({"quant_method": "fp8"}, CheckpointFormat("fp8", 8, 0))],
)  # fmt: skip
def test_formats_from_their_configs(config, fmt) -> None:
    assert from_quantization_config(config) == fmt


def test_unknown_formats_are_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="quant_method 'exl2' is not supported"):
        from_quantization_config({"quant_method": "exl2"})


@pytest.mark.parametrize("block", [[128, 128], None])
@pytest.mark.parametrize("family", ["llama", "mixtral"])
def test_fp8_equals_transformers_fp8_modules(family, block) -> None:
    """transformers 5.23 replaces every nn.Linear but lm_head (and the fused experts) with its
    FP8 modules: their parameters and buffers, on the meta device, are counted byte by byte."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    fp8 = pytest.importorskip("transformers.integrations.finegrained_fp8")
    if family == "llama":
        config = transformers.LlamaConfig(**SMALL)
    else:
        config = transformers.MixtralConfig(**SMALL, num_local_experts=4, num_experts_per_tok=2)
    quant = transformers.FineGrainedFP8Config(weight_block_size=block)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model = fp8.replace_with_fp8_linear(model, ["lm_head"], quantization_config=quant)
    buffers = [b for name, b in model.named_buffers() if "rotary" not in name]  # not weights
    tensors = [*model.parameters(), *buffers]
    stored = sum(t.numel() * t.element_size() for t in tensors)
    as_saved = json.loads(quant.to_json_string())  # as config.json holds it
    arch = from_hf_config({**config.to_dict(), "quantization_config": as_saved})
    assert weights_bytes(tensor_groups(arch), arch.checkpoint, 2) == stored
