"""Weights, gradients, master weights and optimizer state of a model, before any sharding.

Trainable tensors get all four; frozen tensors (the base model under LoRA and QLoRA) get weights
only: no gradient, no master copy, no optimizer state. Under QLoRA the decoder-layer matrices are
stored in NF4 and everything else (embeddings, lm_head, norms, biases, fused MoE experts, routers)
stays in the working dtype, as bitsandbytes leaves them (it replaces nn.Linear modules only, and
skips lm_head).
"""

from dataclasses import dataclass
from fractions import Fraction

from rigcheck.memory.architecture import TensorGroup
from rigcheck.memory.optimizers import optimizer_state_bytes
from rigcheck.memory.precision import Precision
from rigcheck.memory.quantization import nf4_bits
from rigcheck.memory.units import bytes_for_bits

METHODS = ("full", "lora", "qlora")


@dataclass(frozen=True)
class ModelState:
    """Parameter counts and the bytes of each copy of the parameters."""

    params: int
    trainable_params: int
    weights_bytes: int
    grads_bytes: int
    master_bytes: int
    optimizer_bytes: int

    @property
    def total_bytes(self) -> int:
        """Weights + gradients + master weights + optimizer state."""
        return self.weights_bytes + self.grads_bytes + self.master_bytes + self.optimizer_bytes

    def __add__(self, other: "ModelState") -> "ModelState":
        return ModelState(*(a + b for a, b in zip(_fields(self), _fields(other), strict=True)))


def _fields(state: ModelState) -> tuple[int, ...]:
    return (
        state.params,
        state.trainable_params,
        state.weights_bytes,
        state.grads_bytes,
        state.master_bytes,
        state.optimizer_bytes,
    )


def trainable_state(groups: tuple[TensorGroup, ...], prec: Precision, optimizer: str) -> ModelState:
    """State of parameters that are trained: weights, grads, master copy, optimizer state."""
    n = sum(g.total for g in groups)
    return ModelState(
        params=n,
        trainable_params=n,
        weights_bytes=n * prec.weight_bytes,
        grads_bytes=n * prec.grad_bytes,
        master_bytes=n * prec.master_bytes,
        optimizer_bytes=optimizer_state_bytes(groups, optimizer, prec.state_bytes),
    )


# bitsandbytes replaces nn.Linear modules only (not lm_head): transformers 5 keeps a layer's
# routed experts as 3-D parameters (gate_up_proj, down_proj) and the router as a plain weight,
# so both stay 16-bit under QLoRA (transformers 5.23 integrations/bitsandbytes.py; pinned against
# a real 4-bit load in tests/memory/test_real_quantization.py).
QUANTIZED_ROLES = ("linear",)


def frozen_state(
    groups: tuple[TensorGroup, ...],
    prec: Precision,
    linear_bits: Fraction | None = None,
    kbit_fp32: bool = False,
) -> ModelState:
    """Frozen weights only; with linear_bits, layer matrices stored at that many bits per param.

    kbit_fp32: PEFT's prepare_model_for_kbit_training (peft/utils/other.py) casts every
    parameter that is not quantized (embeddings, lm_head, norms, biases) to fp32.
    """
    weights = 0
    for g in groups:
        if linear_bits is not None and g.role in QUANTIZED_ROLES:
            # bitsandbytes quantizes tensor by tensor, so round up per tensor
            weights += g.count * bytes_for_bits(g.numel, linear_bits)
        else:
            weights += g.total * (4 if kbit_fp32 else prec.weight_bytes)
    n = sum(g.total for g in groups)
    return ModelState(n, 0, weights, 0, 0, 0)


def model_state(
    base: tuple[TensorGroup, ...],
    adapters: tuple[TensorGroup, ...],
    method: str,
    prec: Precision,
    optimizer: str,
    double_quant: bool = False,
    kbit_prep: bool = False,
) -> ModelState:
    """Unsharded state for full fine-tuning, LoRA (frozen base) or QLoRA (frozen NF4 base);
    kbit_prep: QLoRA training's fp32 cast of the unquantized weights (see frozen_state)."""
    if method == "full":
        return trainable_state(base, prec, optimizer)
    qlora = method == "qlora"
    bits = nf4_bits(double_quant) if qlora else None
    frozen = frozen_state(base, prec, bits, kbit_fp32=qlora and kbit_prep)
    return frozen + trainable_state(adapters, prec, optimizer)
