"""Hypothesis strategies that build valid memory-model inputs directly, never by filtering."""

from hypothesis import strategies as st

from rigcheck.memory.activations import ATTENTION, RECOMPUTE, ActivationConfig
from rigcheck.memory.architecture import BIASES, NORMS, Architecture, TensorGroup
from rigcheck.memory.estimate import Job
from rigcheck.memory.lora import ALL_LINEAR as ALL
from rigcheck.memory.optimizers import OPTIMIZERS
from rigcheck.memory.precision import PRECISIONS
from rigcheck.memory.presets import PRESETS

precisions = st.sampled_from(sorted(PRECISIONS))
optimizers = st.sampled_from(OPTIMIZERS)
# optimizers whose state is the same number of bytes for every element
uniform_optimizers = st.sampled_from(("adam", "adamw", "sgd", "sgd-momentum"))
gpu_counts = st.integers(1, 1024)
param_counts = st.integers(1, 10**12)


@st.composite
def architectures(draw: st.DrawFn, max_layers: int = 48) -> Architecture:
    """Any decoder-only shape: heads a multiple of kv_heads, hidden = heads x head_dim."""
    kv_heads = draw(st.integers(1, 8))
    heads = kv_heads * draw(st.integers(1, 8))
    hidden = heads * draw(st.integers(1, 64))
    return Architecture(
        vocab=draw(st.integers(1, 200_000)),
        hidden=hidden,
        layers=draw(st.integers(1, max_layers)),
        heads=heads,
        kv_heads=kv_heads,
        mlp_width=draw(st.integers(1, 4 * hidden)),
        gated_mlp=draw(st.booleans()),
        tied_embeddings=draw(st.booleans()),
        norm=draw(st.sampled_from(NORMS)),
        bias=draw(st.sampled_from(BIASES)),
        positions=draw(st.integers(0, 4096)),
        fused_qkv=draw(st.booleans()),
        dropout=draw(st.booleans()),
    )


presets = st.sampled_from(sorted(PRESETS)).map(PRESETS.__getitem__)
any_architecture = st.one_of(presets, architectures())


@st.composite
def tensor_group_lists(draw: st.DrawFn) -> tuple[TensorGroup, ...]:
    """A few parameter tensors of 1 to 3 dimensions."""
    shapes = st.lists(st.integers(1, 300), min_size=1, max_size=3).map(tuple)
    size = draw(st.integers(1, 6))
    return tuple(
        TensorGroup(f"t{i}", draw(shapes), draw(st.integers(1, 4)), "linear") for i in range(size)
    )


@st.composite
def activation_configs(draw: st.DrawFn, max_seq: int = 8192) -> ActivationConfig:
    """Sequence, micro-batch, element size and recompute/attention choices, tp=1."""
    return ActivationConfig(
        seq=draw(st.integers(1, max_seq)),
        batch=draw(st.integers(1, 64)),
        element_bytes=draw(st.sampled_from((1, 2, 4))),
        recompute=draw(st.sampled_from(RECOMPUTE)),
        attention=draw(st.sampled_from(ATTENTION)),
    )


# (framework, zero, offload_optimizer, offload_params) combinations each framework has
LEGAL_SETUPS = (
    [("deepspeed", z, False, False) for z in range(4)]
    + [("deepspeed", z, True, False) for z in (1, 2, 3)]
    + [("deepspeed", 3, True, True), ("plain", 3, True, True)]
    + [("plain", z, o, False) for z in range(4) for o in (False, True) if z or not o]
    + [("fsdp", 2, False, False), ("fsdp", 3, False, False), ("fsdp", 3, True, True)]
    + [("megatron", 0, False, False), ("megatron", 1, False, False)]
    + [("hf-trainer", 0, False, False)]
)


@st.composite
def jobs(draw: st.DrawFn) -> Job:
    """A training or inference job on a drawn architecture, with a legal combination of options."""
    inference = draw(st.booleans())
    method = draw(st.sampled_from(("full", "lora", "qlora")))
    framework, zero, offload, offload_params = draw(st.sampled_from(LEGAL_SETUPS))
    if inference:
        zero, offload, offload_params = 0, False, False
    arch = draw(any_architecture)
    return Job(
        framework=framework,
        offload_params=offload_params,
        arch=arch,
        method=method,
        lora_rank=draw(st.integers(1, 256)),
        # a drawn shape has no model_type, so no PEFT default: q and v (GPT-2's fused c_attn)
        lora_targets=draw(st.sampled_from((("qkv",) if arch.fused_qkv else ("q", "v"), ALL))),
        double_quant=method == "qlora" and draw(st.booleans()),
        precision=draw(precisions),
        optimizer=draw(optimizers),
        zero=zero,
        gpus=draw(st.integers(1, 64)),
        offload_optimizer=offload,
        batch=draw(st.integers(1, 32)),
        seq=draw(st.integers(1, min(8192, arch.max_positions or 8192))),
        checkpointing=draw(st.sampled_from(RECOMPUTE)),
        attention=draw(st.sampled_from(ATTENTION)),
        inference=inference,
        kv_dtype=draw(st.sampled_from((None, "fp8", "bf16", "fp32"))),
        overhead_bytes=draw(st.integers(0, 2**32)),
    )
