"""Optimizer state bytes, tensor by tensor, as each implementation allocates it.

- adam, adamw (torch.optim): exp_avg and exp_avg_sq, each shaped and typed like the parameter.
- sgd: no state (torch keeps no momentum_buffer when momentum == 0).
- sgd-momentum: one momentum_buffer like the parameter.
- adamw-8bit (bitsandbytes AdamW8bit, optim/optimizer.py Optimizer2State): two uint8 states plus
  one fp32 absmax per block of 256 elements for each state; tensors under 4096 elements
  (min_8bit_size) keep two fp32 states. Its two shared 256-entry quantization maps (2 KiB in all)
  are not counted.
- adafactor (torch.optim.Adafactor, Shazeer & Stern 2018): no first moment; for a tensor of 2+
  dims, row_var (shape[:-1]) and col_var (shape[:-2] + shape[-1:]), i.e. n + m values for an n x m
  matrix; full variance for a 1-D tensor.
The scalar `step` tensors that torch's Adam, AdamW and Adafactor keep per parameter tensor are
counted apart, by step_tensor_bytes: they live on the host unless capturable or fused is set.
"""

from rigcheck.memory.architecture import TensorGroup
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import ceil_div

OPTIMIZERS = ("adam", "adamw", "sgd", "sgd-momentum", "adamw-8bit", "adafactor")
BNB_BLOCK = 256  # bitsandbytes blockwise quantization of optimizer states
BNB_MIN_8BIT_SIZE = 4096  # smaller tensors keep 32-bit states
STEP_BYTES = 4  # torch _get_scalar_dtype(): float32 unless the default dtype is float64


def check_optimizer(name: str) -> str:
    """The name, if it is a known optimizer; else a ConfigError listing them."""
    if name not in OPTIMIZERS:
        raise ConfigError(f"unknown optimizer {name!r}; known: {', '.join(OPTIMIZERS)}")
    return name


def _adam_8bit(numel: int) -> int:
    if numel < BNB_MIN_8BIT_SIZE:
        return 2 * 4 * numel
    return 2 * (numel + 4 * ceil_div(numel, BNB_BLOCK))


def _adafactor(shape: tuple[int, ...], state_bytes: int) -> int:
    if len(shape) < 2:
        return shape[0] * state_bytes if shape else state_bytes
    leading = 1
    for size in shape[:-2]:
        leading *= size
    return leading * (shape[-2] + shape[-1]) * state_bytes


def tensor_state_bytes(shape: tuple[int, ...], optimizer: str, state_bytes: int) -> int:
    """State bytes for one parameter tensor, `step` excluded."""
    numel = 1
    for size in shape:
        numel *= size
    if optimizer in ("adam", "adamw"):
        return 2 * numel * state_bytes
    if optimizer == "sgd-momentum":
        return numel * state_bytes
    if optimizer == "adamw-8bit":
        return _adam_8bit(numel)
    if optimizer == "adafactor":
        return _adafactor(shape, state_bytes)
    return 0


def optimizer_state_bytes(groups: tuple[TensorGroup, ...], optimizer: str, state_bytes: int) -> int:
    """State bytes for all tensors in `groups`, `step` excluded."""
    check_optimizer(optimizer)
    return sum(g.count * tensor_state_bytes(g.shape, optimizer, state_bytes) for g in groups)


def step_tensor_bytes(groups: tuple[TensorGroup, ...], optimizer: str) -> int:
    """Bytes of torch's scalar `step` tensors: one float32 per parameter tensor."""
    if optimizer in ("adam", "adamw", "adafactor"):
        return STEP_BYTES * sum(g.count for g in groups)
    return 0  # SGD keeps none; bitsandbytes keeps `step` as a Python int
