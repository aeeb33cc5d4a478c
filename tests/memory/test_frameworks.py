"""Each framework's bytes per parameter, parallelism, inference engines and refused combinations.

The figures are the frameworks' own (see rigcheck/memory/frameworks.py for the source files):
Megatron's distributed-optimizer table, the HF Trainer's autocast copies, PEFT's fp32 cast under
QLoRA, vLLM's head replication and gpu_memory_utilization.
"""

import json

import pytest

from rigcheck.memory.architecture import tensor_groups
from rigcheck.memory.cli import main
from rigcheck.memory.estimate import Job, estimate, training_layout
from rigcheck.memory.model_state import model_state
from rigcheck.memory.precision import PRECISIONS
from rigcheck.memory.presets import preset
from rigcheck.memory.quantization import nf4_bits

P = 10**9


def fit(capsys, *argv: str) -> tuple[int, dict]:
    status = main(["fit", *argv, "--json"])
    return status, json.loads(capsys.readouterr().out)


def state_bytes(**kw) -> int:
    layout = training_layout(Job(params=P, optimizer="adam", **kw))
    return layout.state.total_bytes + layout.working_bytes


@pytest.mark.parametrize("d", [1, 2, 8, 64])
def test_megatron_distributed_optimizer_table(d: int) -> None:
    """dist_optimizer.md: bf16 params + fp32 grads 6 + 12/d; fp16 4 + 16/d; without it 18, 20."""
    mega = {"framework": "megatron", "gpus": d}
    assert state_bytes(precision="bf16-mixed", zero=1, **mega) == 6 * P + 12 * P // d
    assert state_bytes(precision="fp16-mixed", zero=1, **mega) == 4 * P + 16 * P // d
    assert state_bytes(precision="bf16-mixed", zero=0, **mega) == 18 * P
    assert state_bytes(precision="fp16-mixed", zero=0, **mega) == 20 * P


def test_deepspeed_without_zero_is_the_bf16_optimizers_20_bytes() -> None:
    assert state_bytes(precision="bf16-mixed", framework="deepspeed") == 20 * P
    assert state_bytes(precision="bf16-mixed", framework="plain") == 16 * P


def test_hf_trainer_adds_a_16_bit_copy_of_every_linear_weight() -> None:
    """fp32 weights, grads and AdamW state (16 B/param) plus 2 B per linear-layer parameter;
    the embedding (untied) is not cast. DDP over 2 GPUs adds its gradient buckets (4 B/param)."""
    arch = preset("llama-2-7b")
    linear = sum(g.total for g in tensor_groups(arch) if g.role in ("linear", "lm_head"))
    job = Job(arch=arch, framework="hf-trainer", seq=1)
    layout = training_layout(job)
    assert layout.state.total_bytes == 16 * 6_738_415_616
    assert layout.working_bytes == 2 * linear
    two = training_layout(Job(arch=arch, framework="hf-trainer", seq=1, gpus=2))
    assert two.working_bytes - layout.working_bytes == 4 * 6_738_415_616


def test_fsdp_steps_its_fp32_shards_and_gathers_units() -> None:
    arch = preset("llama-2-7b")
    full = training_layout(Job(arch=arch, framework="fsdp", zero=3, gpus=8, seq=1))
    assert full.state.master_bytes == 0
    assert full.state.total_bytes == 16 * 6_738_415_616 // 8
    root = 2 * 32000 * 4096 + 4096  # embedding, lm_head, final norm: larger than a layer here
    assert root > 4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096
    assert full.working_bytes == (2 * 2 + 4) * root
    grad_op = training_layout(Job(arch=arch, framework="fsdp", zero=2, gpus=8, seq=1))
    assert grad_op.working_bytes == 2 * 6_738_415_616 + 4 * root


@pytest.mark.parametrize(("model", "extra_gb"), [("llama-2-7b", 0.52), ("llama-3-8b", 2.10)])
def test_qlora_training_casts_the_unquantized_weights_to_fp32(model: str, extra_gb: float) -> None:
    """PEFT's prepare_model_for_kbit_training: embeddings, lm_head and norms become fp32."""
    base = tensor_groups(preset(model))
    prec = PRECISIONS["bf16-mixed"]
    as_loaded = model_state(base, (), "qlora", prec, "adamw", False, kbit_prep=False)
    prepared = model_state(base, (), "qlora", prec, "adamw", False, kbit_prep=True)
    assert round((prepared.weights_bytes - as_loaded.weights_bytes) / 1e9, 2) == extra_gb
    assert nf4_bits(False) == 4.5


def test_kv_heads_are_replicated_when_tp_exceeds_them(capsys) -> None:
    """Llama-2-70B has 8 KV heads: on 16 GPUs each keeps one whole head (vLLM, SGLang)."""
    argv = ("--model", "llama-2-70b", "--inference", "--vram", "80GB", "--seq", "2048")
    assert fit(capsys, *argv, "--gpus", "16")[1]["kv_cache_bytes"] == 83_886_080
    assert fit(capsys, *argv, "--gpus", "8")[1]["kv_cache_bytes"] == 83_886_080
    assert fit(capsys, *argv, "--gpus", "4")[1]["kv_cache_bytes"] == 2 * 83_886_080


def test_vllm_must_start_within_its_memory_share(capsys) -> None:
    """A job between 92% (vLLM 0.33's default share) and 100% of the device fits only with
    --gpu-memory-utilization 1."""
    argv = ["--model", "llama-2-13b", "--inference", "--seq", "4096", "--batch", "1", "--overhead",
            "0", "--vram", "32GB"]  # fmt: skip
    status, report = fit(capsys, *argv)
    assert 0.92 * 32e9 < report["total_bytes"] <= 32e9
    assert status == 1 and not report["fits"] and report["usable_bytes"] == int(0.92 * 32e9)
    assert fit(capsys, *argv, "--gpu-memory-utilization", "1")[0] == 0
    assert fit(capsys, *argv, "--engine", "hf")[0] == 0


def test_vllm_rounds_the_kv_cache_up_to_whole_blocks(capsys) -> None:
    argv = ("--model", "llama-2-7b", "--inference", "--vram", "80GB", "--seq", "2049")
    per_token = 2 * 32 * 4096 * 2
    assert fit(capsys, *argv)[1]["kv_cache_bytes"] == 2064 * per_token
    assert fit(capsys, *argv, "--engine", "hf")[1]["kv_cache_bytes"] == 2049 * per_token


def test_sliding_window_layers_in_vllm_and_transformers(capsys) -> None:
    """transformers holds every prefilled token until the first decoding step (inference.py; a
    real prefill in test_hf_hybrid_cache.py); vLLM reserves per request cdiv(min(window - 1 +
    in-flight tokens, length), block) + 1 blocks (SlidingWindowSpec.max_memory_usage_bytes,
    vllm/v1/kv_cache_interface.py at commit 001cabc1): one batch of max_num_batched_tokens up to
    vLLM 0.25, two under async scheduling from 0.26 (vllm/config/vllm.py at 000fc94b)."""
    argv = ("--model", "mistral-7b", "--inference", "--vram", "80GB", "--seq", "32768")
    old = (*argv, "--vllm-version", "0.25")
    per_token = 2 * 32 * 8 * 128 * 2
    assert fit(capsys, *argv, "--engine", "hf")[1]["kv_cache_bytes"] == 32768 * per_token
    assert fit(capsys, *old)[1]["kv_cache_bytes"] == (768 + 1) * 16 * per_token  # 4095 + 8192
    small_steps = fit(capsys, *old, "--max-num-batched-tokens", "2048")[1]
    assert small_steps["kv_cache_bytes"] == (384 + 1) * 16 * per_token  # 4095 + 2048 tokens
    short = fit(capsys, *argv[:-1], "5000")[1]  # the length caps it: ceil(5000 / 16) + 1 blocks
    assert short["kv_cache_bytes"] == (313 + 1) * 16 * per_token
    two_batches = (1280 + 1) * 16 * per_token  # 4095 + 2 x 8192
    assert fit(capsys, *argv)[1]["kv_cache_bytes"] == two_batches
    assert fit(capsys, *argv, "--no-async-scheduling")[1]["kv_cache_bytes"] == 769 * 16 * per_token


def test_pipeline_and_tensor_parallelism_split_the_weights(capsys) -> None:
    argv = ("--model", "llama-2-7b", "--framework", "megatron", "--vram", "80GB")
    one = fit(capsys, *argv)[1]["weights_bytes"]
    tp2 = fit(capsys, *argv, "--gpus", "2", "--tp", "2")[1]["weights_bytes"]
    pp2 = fit(capsys, *argv, "--gpus", "2", "--pp", "2")[1]["weights_bytes"]
    norms = 2 * 4096 * (2 * 32 + 1)  # replicated under tp
    assert tp2 == (one - norms) // 2 + norms
    # the last stage is the heavier: 16 layers, the final norm and lm_head
    assert pp2 == 2 * (16 * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096) + 32000 * 4096 + 4096)


def test_expert_parallelism_divides_the_experts(capsys) -> None:
    argv = ("--model", "mixtral-8x7b", "--framework", "megatron", "--zero", "1", "--vram", "80GB",
            "--gpus", "8", "--checkpointing", "full")  # fmt: skip
    _, dense = fit(capsys, *argv)
    _, ep8 = fit(capsys, *argv, "--ep", "8")
    expert_params = 32 * 8 * 3 * 4096 * 14336
    assert dense["weights_bytes"] - ep8["weights_bytes"] == 2 * expert_params * 7 // 8
    assert ep8["active_params"] == 12_879_925_248 and ep8["params"] == 46_702_792_704


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "llama-2-70b", "--inference", "--gpus", "3"], "must divide the 64 attention"),
        (["--model", "llama-2-7b", "--zero", "0", "--offload-optimizer"], "needs ZeRO >= 1"),
        (["--model", "llama-2-7b", "--inference", "--optimizer", "adamw"], "has no optimizer"),
        (["--model", "llama-2-7b", "--inference", "--zero", "2"], "keeps no optimizer"),
        (["--model", "llama-2-7b", "--double-quant"], "needs --method qlora"),
        (["--model", "llama-2-7b", "--seq", "8192"], "longer than the model's 4096 positions"),
        (["--model", "llama-2-7b", "--framework", "fsdp", "--zero", "1"], "no --zero 1"),
        (["--model", "llama-2-7b", "--framework", "megatron", "--zero", "3"], "no --zero 3"),
        (["--model", "llama-2-7b", "--framework", "hf-trainer", "--zero", "2"], "no --zero 2"),
        (["--model", "llama-2-7b", "--zero", "2", "--offload-params"], "needs --zero 3"),
        (
            ["--model", "llama-2-7b", "--framework", "fsdp", "--offload-optimizer"],
            "--offload-params",
        ),
        (["--model", "llama-2-7b", "--gpus", "6", "--tp", "4"], "not a multiple of tp"),
        (["--model", "llama-2-7b", "--gpus", "2", "--ep", "2"], "number of experts (0)"),
        (["--params", "7B", "--gpus", "2", "--tp", "2"], "need the tensor shapes"),
        (
            ["--model", "llama-2-7b", "--inference", "--gpu-memory-utilization", "1.5"],
            "above 0 and at most 1",
        ),
    ],
)
def test_contradictory_options_are_refused_in_one_line(capsys, argv, message) -> None:
    assert main(["fit", *argv, "--vram", "80GB"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_the_default_framework_is_named(capsys) -> None:
    _, report = fit(capsys, "--model", "gpt2", "--vram", "80GB")
    assert report["framework"] == "deepspeed" and "DeepSpeed 0.19.8" in report["convention"]
    _, report = fit(capsys, "--model", "gpt2", "--vram", "80GB", "--framework", "fsdp")
    assert report["job"]["framework"] == "fsdp" and report["grads_bytes"] > 0


def test_offload_never_grows_the_gpu_share() -> None:
    arch = preset("llama-2-13b")
    for zero in (1, 2, 3):
        on = estimate(Job(arch=arch, zero=zero, gpus=4, offload_optimizer=True))
        off = estimate(Job(arch=arch, zero=zero, gpus=4))
        assert on.total_bytes < off.total_bytes and on.host_bytes > 0


def test_moe_activations_follow_the_experts_each_token_uses() -> None:
    """Mixtral sends each token through 2 experts of width 14336: the MLP activations of a
    dense model of width 2 x 14336, not of 8 experts and not of one."""
    from dataclasses import replace

    from rigcheck.memory.activations import ActivationConfig, layer_activation_bytes

    mixtral = preset("mixtral-8x7b")
    dense = replace(mixtral, experts=0, experts_per_token=0, mlp_width=2 * 14336)
    config = ActivationConfig(seq=1024, batch=1, attention="flash")
    assert layer_activation_bytes(mixtral, config) == layer_activation_bytes(dense, config)
