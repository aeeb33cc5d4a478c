"""The memory estimate's decisions at their edges, each with its message.

Written against the survivors of `python tools/mutation.py memory` (tests/mutation/survivors.md):
what a parameter count alone cannot estimate, the Trainer's fp32 weights beside frozen ones,
torch's `step` tensors per optimizer, the tensor-parallel hint and a bias's matrix, where a
config.json and the hub cache are found.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from rigcheck.memory.architecture import tensor_groups
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.frameworks import Counts, deepspeed
from rigcheck.memory.hf_config import cached_config, from_hf_config, hub_cache, load_hf_config
from rigcheck.memory.inference import kv_element_bytes
from rigcheck.memory.lora import parse_targets
from rigcheck.memory.optimizers import STEP_BYTES, step_tensor_bytes
from rigcheck.memory.parallel import Parallel, _matrix, check_parallel
from rigcheck.memory.presets import HF_CONFIGS, preset
from rigcheck.memory.units import parse_size

SHAPES = "needs the tensor shapes: give --model instead of --params"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"params": 0}, "--params must be >= 1, got 0"),
        ({"method": "lora"}, f"--method lora/qlora {SHAPES}"),
        ({"optimizer": "adafactor"}, f"--optimizer adafactor {SHAPES}"),
        ({"inference": True}, f"--inference {SHAPES}"),
    ],
)
def test_a_parameter_count_alone_cannot_estimate_what_needs_shapes(change, message):
    with pytest.raises(ConfigError) as err:
        estimate(Job(**{"params": 7_000_000_000, **change}))
    assert str(err.value) == message
    assert estimate(Job(params=1)).params == 1  # the smallest count is fine


def test_the_trainer_keeps_fp32_weights_beside_the_frozen_ones_and_offloads_nothing():
    """hf-trainer holds 4 bytes per trainable parameter where DeepSpeed ZeRO-0 holds 2, and the
    frozen base weights the same in both."""
    job = Job(arch=preset("llama-2-7b"), method="lora", lora_targets="all-linear")
    trainer = estimate(replace(job, framework="hf-trainer"))
    ds = estimate(replace(job, framework="deepspeed"))
    assert trainer.weights_bytes - ds.weights_bytes == 2 * trainer.trainable_params
    assert trainer.host_bytes == 0 and ds.host_bytes == 0


@pytest.mark.parametrize(("optimizer", "per_tensor"), [("adam", STEP_BYTES), ("adamw", STEP_BYTES),
                         ("adafactor", STEP_BYTES), ("sgd", 0), ("adamw8bit", 0)])  # fmt: skip
def test_torch_keeps_one_step_tensor_per_parameter_tensor(optimizer, per_tensor):
    groups = tensor_groups(preset("llama-2-7b"))
    tensors = sum(g.count for g in groups)
    assert step_tensor_bytes(groups, optimizer) == per_tensor * tensors


@pytest.mark.parametrize(("heads", "tp", "hint"), [(25, 3, 1), (12, 5, 4), (32, 6, 4)])
def test_tensor_parallelism_that_does_not_divide_the_heads_suggests_the_nearest_below(
    heads, tp, hint
):
    arch = replace(preset("llama-2-7b"), heads=heads, kv_heads=heads, head_dim=128)
    with pytest.raises(ConfigError) as err:
        check_parallel(arch, Parallel(tp=tp), gpus=tp)
    assert str(err.value) == (
        f"tensor parallelism {tp} must divide the {heads} attention heads (try --tp {hint})"
    )


def test_a_bias_and_a_weight_belong_to_the_same_matrix():
    assert _matrix("layers.q.bias") == "q"
    assert _matrix("layers.q.weight") == "q"
    assert _matrix("layers.experts.gate") == "gate"


def test_empty_lora_targets_say_what_to_give():
    with pytest.raises(ConfigError) as err:
        parse_targets(" , ")
    assert str(err.value) == "--lora-targets: give a comma-separated list of matrices or all-linear"


def test_a_directory_is_read_through_its_config_json(tmp_path):
    name, fields = next(iter(HF_CONFIGS.items()))
    (tmp_path / "config.json").write_text(json.dumps(fields))
    assert load_hf_config(tmp_path) == preset(name)
    with pytest.raises(ConfigError) as err:
        load_hf_config(tmp_path / "missing")
    assert str(err.value).startswith(f"cannot read {tmp_path / 'missing'}: ")


def test_the_hub_cache_follows_huggingface_hub(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert hub_cache() == tmp_path / "hf" / "hub"
    monkeypatch.delenv("HF_HOME")
    assert hub_cache() == Path.home() / ".cache" / "huggingface" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    assert hub_cache() == tmp_path / "cache"


def test_the_newest_cached_snapshot_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert cached_config("org/model") is None
    snapshots = tmp_path / "models--org--model" / "snapshots"
    for name, age in (("a-newer", 0), ("b-older", 1000)):
        (snapshots / name).mkdir(parents=True)
        config = snapshots / name / "config.json"
        config.write_text("{}")
        os.utime(config, (1_700_000_000 - age, 1_700_000_000 - age))
    assert cached_config("org/model") == snapshots / "a-newer" / "config.json"


def test_fsdp_offload_moves_weights_grads_and_optimizer_state_to_the_host_whole():
    job = Job(arch=preset("llama-2-7b"), framework="fsdp", zero=3, gpus=4)
    kept = estimate(job)
    moved = estimate(replace(job, offload_optimizer=True, offload_params=True))
    assert kept.host_bytes == 0
    assert moved.host_bytes == kept.weights_bytes + kept.grads_bytes + kept.optimizer_bytes
    parts = (moved.weights_bytes, moved.grads_bytes, moved.optimizer_bytes, moved.master_bytes)
    assert parts == (0, 0, 0, 0)


def test_fsdp_with_expert_parallelism_adds_the_dense_and_expert_shards():
    job = Job(arch=preset("mixtral-8x7b"), framework="fsdp", zero=3, gpus=8, ep=2)
    result = estimate(job)
    assert result.params == 46_702_792_704 and result.host_bytes == 0


def test_a_size_with_a_bare_g_says_which_units_there_are():
    with pytest.raises(ConfigError) as err:
        parse_size("80G")
    assert str(err.value) == (
        "'80G' is not a size: use a byte count or a number with a unit (B, KB, MB, GB, TB for "
        "powers of 10; KiB, MiB, GiB, TiB for powers of 2), e.g. 80GiB"
    )


# DeepSpeed's layout per ZeRO stage for 1,000 trainable parameters (8 bytes of optimizer state
# each) on 4 data-parallel ranks: what each stage shards, and what offload moves to the host.
# (weights, 16-bit grads + fp32 grads, master, optimizer, host, working)
DS = Counts(params=1000, trainable=1000, frozen_weight_bytes=0, optimizer_bytes=8000,
            cast_params=1000, largest_layer=100, largest_unit=100)  # fmt: skip
DS_STAGES = {
    (0, False, False): (2000, 2000 + 4000, 4000, 8000, 0, 0),
    (1, False, False): (2000, 2000 + 1000, 1000, 2000, 0, 0),
    (2, False, False): (2000, 500 + 1000, 1000, 2000, 0, 0),
    (3, False, False): (500, 500 + 4 * 250, 1000, 2000, 0, 400),
    (1, True, False): (2000, 2000, 0, 0, 1000 + 1000 + 2000, 0),
    (2, True, False): (2000, 0, 0, 0, 4000, 0),
    (3, True, True): (0, 0, 0, 0, 4000 + 500, 400),
}


@pytest.mark.parametrize(("stage", "expected"), DS_STAGES.items(), ids=str)
def test_deepspeed_shards_what_each_zero_stage_shards(stage, expected):
    zero, offload_optimizer, offload_params = stage
    layout = deepspeed(DS, zero, 4, offload_optimizer, offload_params)
    s = layout.state
    got = (s.weights_bytes, s.grads_bytes, s.master_bytes, s.optimizer_bytes)
    assert (*got, layout.host_bytes, layout.working_bytes) == expected


def test_an_unknown_kv_cache_dtype_lists_the_known_ones():
    with pytest.raises(ConfigError) as err:
        kv_element_bytes("fp4")
    assert str(err.value) == "unknown KV cache dtype 'fp4'; known: fp32, bf16, fp16, fp8, int8"


ALTERNATING = ["sliding_attention", "sliding_attention", "full_attention"] * 11


@pytest.mark.parametrize(
    ("extra", "window", "sliding"),
    [({}, 0, 0), ({"sliding_window": 4096}, 4096, 33),
     ({"sliding_window": 4096, "use_sliding_window": False}, 0, 0),
     ({"sliding_window": 4096, "model_type": "gemma2"}, 4096, 17),
     ({"sliding_window": 512, "model_type": "gemma3_text"}, 512, 28),
     ({"sliding_window": 512, "sliding_window_pattern": 3}, 512, 22),
     ({"model_type": "gemma2"}, 0, 0),
     ({"sliding_window": 512, "layer_types": ALTERNATING}, 512, 22)],
)  # fmt: skip
def test_sliding_window_layers_are_read_from_the_config(extra, window, sliding):
    """33 layers: Gemma-2 slides on every even index, 0 to 32 (17); Gemma-3 on all but every
    sixth (28); an explicit pattern of 3 on two of every three (22)."""
    config = {**HF_CONFIGS["llama-7b"], "num_hidden_layers": 33, **extra}
    arch = from_hf_config(config)
    assert (arch.sliding_window, arch.sliding_layers) == (window, sliding)
    assert type(arch.sliding_layers) is int


@pytest.mark.parametrize(("step", "dense"), [(None, 0), (1, 0), (2, 16)])
def test_moe_layers_every_decoder_sparse_step(step, dense):
    config = {**HF_CONFIGS["mixtral-8x7b"], "decoder_sparse_step": step}
    assert from_hf_config(config).dense_layers == dense


def test_a_config_that_is_no_decoder_says_what_to_do():
    with pytest.raises(ConfigError) as err:
        from_hf_config([])
    assert str(err.value) == "config.json must hold a JSON object"
    with pytest.raises(ConfigError) as err:
        from_hf_config({"model_type": "bert"})
    assert str(err.value) == (
        "model_type 'bert' is not supported; known: llama, mistral, qwen2, qwen3, gemma, gemma2, "
        "gemma3_text, phi3, mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3 "
        "(or give --params for model state only)"
    )


def test_a_multimodal_config_is_read_through_its_text_config():
    inner = HF_CONFIGS["llama-7b"]
    wrapped = from_hf_config({"model_type": "llava", "text_config": inner})
    # the shapes are the text model's; the type stays the wrapper's, as PEFT looks it up
    assert wrapped == replace(from_hf_config(inner), model_type="llava")


def test_gpt2_trains_with_dropout_masks_in_its_activations():
    """GPT-2's presets keep dropout (1-byte masks per activation): more activation memory
    than the same model without it."""
    job = Job(arch=preset("gpt2"), batch=4, seq=1024)
    without = replace(job, arch=replace(preset("gpt2"), dropout=False))
    assert estimate(job).activations_bytes > estimate(without).activations_bytes


def test_gpt2_s_fused_attention_matrix_takes_one_adapter():
    """LoRA on GPT-2's c_attn (one h x 3h matrix): r x 4h per layer, not r x 6h for q, k, v."""
    job = Job(arch=preset("gpt2"), method="lora", lora_targets="all-linear", seq=1024)
    split = replace(job, arch=replace(preset("gpt2"), fused_qkv=False))
    assert estimate(job).trainable_params < estimate(split).trainable_params


def test_a_preset_s_sequence_limit_comes_from_its_config():
    with pytest.raises(ConfigError) as err:
        estimate(Job(arch=preset("llama-7b"), seq=4096))
    assert str(err.value) == (
        "--seq 4096 is longer than the model's 2048 positions (max_position_embeddings)"
    )
