"""The embedding and lm_head one tensor-parallel rank holds, by the engine the job names
(rigcheck/memory/parallel.py vocab_rows, each rule with its source)."""

import pytest

from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job, base_groups, estimate
from rigcheck.memory.parallel import vocab_rows
from rigcheck.memory.presets import preset


def test_vllm_pads_the_vocabulary_to_64_then_splits_it() -> None:
    """VocabParallelEmbedding's own example (its docstring): 1010 tokens padded to 1024, each of
    two ranks holding 512 rows; the padding applies at tp 1 too."""
    assert vocab_rows(1010, 1, "vllm") == 1024
    assert vocab_rows(1010, 2, "vllm") == 512
    with pytest.raises(ConfigError, match="pads the 32,000-token vocabulary to 32,000 rows"):
        vocab_rows(32000, 3, "vllm")  # divide() asserts: vLLM refuses the layout


def test_megatron_pads_to_128_times_tp() -> None:
    """_vocab_size_with_padding: GPT-2's 50,257 tokens are 50,304 rows at TP 1 (Megatron's
    '> padded vocab (size: 50257) with 47 dummy tokens (new size: 50304)'), 50,688 at TP 4."""
    assert vocab_rows(50257, 1, "megatron") == 50304
    assert vocab_rows(50257, 4, "megatron") == 50688 // 4
    assert vocab_rows(50257, 4) == 12565  # transformers, DeepSpeed, FSDP: ceil, no padding


def test_fit_charges_each_engine_s_rows() -> None:
    gpt2 = preset("gpt2")  # 50,257 x 768, tied: one matrix
    vllm = estimate(Job(arch=gpt2, inference=True, seq=64))
    hf = estimate(Job(arch=gpt2, inference=True, seq=64, engine="hf"))
    assert vllm.weights_bytes - hf.weights_bytes == 47 * 768 * 2  # bf16 rows of padding
    llama = preset("llama-2-7b")
    for framework, rows in (("megatron", 32768 // 8), ("deepspeed", 32000 // 8)):
        job = Job(arch=llama, gpus=8, tp=8, framework=framework, seq=64)
        embedding = [g for g in base_groups(job) if g.role == "embedding"]
        assert [g.shape for g in embedding] == [(rows, 4096)]


def test_transformers_tp_plan_shards_the_vocabulary() -> None:
    """transformers 5.23 adds embedding_rowwise to embed_tokens and keeps lm_head
    colwise_gather_output: both Shard(0), the vocabulary split as torch.chunk splits it."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(
        hidden_size=64, intermediate_size=96, num_hidden_layers=1, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=1010,
    )  # fmt: skip
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    plan = model.tp_plan
    assert plan["model.embed_tokens"] == "embedding_rowwise"
    assert plan["lm_head"] == "colwise_gather_output"
    rows = max(len(c) for c in torch.empty(1010, device="meta").chunk(4))
    assert rows == vocab_rows(1010, 4, "even") == 253
