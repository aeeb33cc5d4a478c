"""Hypothesis strategies that build valid memory-model inputs directly, never by filtering."""

from hypothesis import strategies as st

from rigcheck.memory.activations import ATTENTION, RECOMPUTE, ActivationConfig
from rigcheck.memory.architecture import BIASES, NORMS, Architecture, TensorGroup
from rigcheck.memory.estimate import Job
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


@st.composite
def jobs(draw: st.DrawFn) -> Job:
    """A training or inference job on a drawn architecture."""
    inference = draw(st.booleans())
    method = draw(st.sampled_from(("full", "lora", "qlora")))
    return Job(
        arch=draw(any_architecture),
        method=method,
        lora_rank=draw(st.integers(1, 256)),
        lora_targets=draw(st.sampled_from((None, "all-linear"))),
        double_quant=draw(st.booleans()),
        precision=draw(precisions),
        optimizer=draw(optimizers),
        zero=draw(st.integers(0, 3)),
        gpus=draw(st.integers(1, 64)),
        offload_optimizer=draw(st.booleans()),
        batch=draw(st.integers(1, 32)),
        seq=draw(st.integers(1, 8192)),
        checkpointing=draw(st.sampled_from(RECOMPUTE)),
        attention=draw(st.sampled_from(ATTENTION)),
        inference=inference,
        kv_dtype=draw(st.sampled_from((None, "fp8", "bf16", "fp32"))),
        overhead_bytes=draw(st.integers(0, 2**32)),
    )
