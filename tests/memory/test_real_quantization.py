"""NF4 weights as bitsandbytes stores them on CPU, against the exact bits per parameter."""

import pytest

from rigcheck.memory.quantization import nf4_bits
from rigcheck.memory.units import bytes_for_bits

torch = pytest.importorskip("torch")
bnb_functional = pytest.importorskip("bitsandbytes.functional")


@pytest.mark.parametrize("shape", [(1024, 512), (256, 64 * 256), (4096, 64)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_nf4_is_4_5_bits_per_param(shape, dtype) -> None:
    """Packed 4-bit codes + one fp32 absmax per block of 64; the 16-entry NF4 code is shared."""
    packed, state = bnb_functional.quantize_4bit(
        torch.randn(shape, dtype=dtype), blocksize=64, quant_type="nf4", compress_statistics=False
    )
    n = shape[0] * shape[1]
    assert packed.nbytes + state.absmax.nbytes == bytes_for_bits(n, nf4_bits(False)) == n * 9 // 16


@pytest.mark.parametrize("shape", [(1024, 1024), (64 * 256, 64)])
def test_nf4_double_quant_is_4_127_bits_per_param(shape) -> None:
    """Absmaxes in uint8, in blocks of 256 with an fp32 absmax each: 4 + 8/64 + 32/(64*256) bits,
    exact for whole blocks. Per tensor one fp32 offset (4 B) and the shared 256-entry code table
    come on top; they do not grow with the tensor."""
    packed, state = bnb_functional.quantize_4bit(
        torch.randn(shape, dtype=torch.bfloat16), blocksize=64, quant_type="nf4",
        compress_statistics=True,
    )  # fmt: skip
    n = shape[0] * shape[1]
    measured = packed.nbytes + state.absmax.nbytes + state.state2.absmax.nbytes
    assert measured == bytes_for_bits(n, nf4_bits(True))
    assert state.offset.nbytes == 4


def test_qlora_weights_equal_a_real_4bit_load_of_an_moe_model(tmp_path) -> None:
    """A small Qwen2-MoE saved in bf16 and loaded with transformers 5.23's BitsAndBytesConfig
    (NF4, no double quantization) on CPU: the attention and shared-expert linears (and the 1-wide
    shared-expert gate, an nn.Linear) become NF4; the fused routed experts, the router, the
    embeddings and lm_head stay bf16. Every stored byte is counted."""
    transformers = pytest.importorskip("transformers")
    from rigcheck.memory.architecture import tensor_groups
    from rigcheck.memory.hf_config import from_hf_config
    from rigcheck.memory.model_state import frozen_state
    from rigcheck.memory.precision import precision

    config = transformers.Qwen2MoeConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=100, pad_token_id=0, bos_token_id=1, eos_token_id=1,
        num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
        shared_expert_intermediate_size=48, decoder_sparse_step=1,
    )  # fmt: skip
    transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).save_pretrained(
        tmp_path
    )
    nf4 = transformers.BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16
    )
    model = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path, quantization_config=nf4, dtype=torch.bfloat16, device_map="cpu"
    )
    stored = 0
    for p in model.parameters():
        state = getattr(p, "quant_state", None)
        stored += p.nbytes + (state.absmax.nbytes if state is not None else 0)
    arch = from_hf_config(config.to_dict())
    expected = frozen_state(tensor_groups(arch), precision("bf16"), nf4_bits(False))
    assert stored == expected.weights_bytes
