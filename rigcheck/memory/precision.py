"""Precision modes: the bytes per element of each copy of the model a training step keeps.

Conventions, stated because frameworks differ:
- fp32, bf16, fp16: one copy; torch's optimizers step it directly and keep their state in its
  dtype (torch/optim/adam.py _init_group: zeros_like(p)), so pure bf16 AdamW is 2+2+2+2 = 8 B/param.
- bf16-mixed, fp16-mixed: the ZeRO paper's layout (Rajbhandari et al. 2020, section 3.1), as in
  Megatron-LM and DeepSpeed: 16-bit weights and gradients, an fp32 master copy that the optimizer
  steps, optimizer state in fp32: Adam is 2 + 2 + 4 + 4 + 4 = 16 B/param. HF's "model memory
  anatomy" counts 18 B/param (fp32 gradients) and torch.autocast keeps fp32 weights and gradients
  (4 + 4 + 8 = 16 B/param, no separate master): same total for DDP, different split for ZeRO.
"""

from dataclasses import dataclass

from rigcheck.memory.errors import ConfigError


@dataclass(frozen=True)
class Precision:
    """Bytes per element of each copy of the parameters a precision mode keeps."""

    name: str
    weight_bytes: int  # the working copy used in forward and backward
    grad_bytes: int
    master_bytes: int  # an fp32 copy the optimizer steps; 0 when it steps the weights themselves
    state_bytes: int  # optimizer moments, in the dtype of the tensors the optimizer steps
    activation_bytes: int  # saved activations (autocast computes in 16 bit)
    convention: str  # whose layout this is, for reports


_TORCH = "torch.optim: one copy, optimizer state in the parameters' dtype"
_ZERO = "ZeRO paper 3.1: 16-bit weights and grads, fp32 master weights and optimizer state"
PRECISIONS: dict[str, Precision] = {
    "fp32": Precision("fp32", 4, 4, 0, 4, 4, _TORCH),
    "bf16": Precision("bf16", 2, 2, 0, 2, 2, _TORCH),
    "fp16": Precision("fp16", 2, 2, 0, 2, 2, _TORCH),
    "bf16-mixed": Precision("bf16-mixed", 2, 2, 4, 4, 2, _ZERO),
    "fp16-mixed": Precision("fp16-mixed", 2, 2, 4, 4, 2, _ZERO),
}


def precision(name: str) -> Precision:
    """The named precision mode, or a ConfigError listing the known ones."""
    try:
        return PRECISIONS[name]
    except KeyError:
        raise ConfigError(f"unknown precision {name!r}; known: {', '.join(PRECISIONS)}") from None
