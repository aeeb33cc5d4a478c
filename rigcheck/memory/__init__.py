"""Memory math: exact bytes for training and inference jobs. Pure Python: no torch needed.

The public surface is small; the modules hold one idea each (units, architecture, presets,
precision, optimizers, quantization, checkpoint_formats, lora (with peft_defaults), model_state,
sharding, activations, inference, estimate); advice (what would fit) and time_to_train (will it
finish) ask estimate.
"""

from rigcheck.memory.architecture import Architecture, parameter_count, tensor_groups
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import DEFAULT_OVERHEAD_BYTES, Estimate, Job, estimate
from rigcheck.memory.presets import PRESETS, PUBLISHED_PARAMS, preset
from rigcheck.memory.units import GB, GiB, format_bytes, parse_size, to_gb, to_gib

__all__ = [
    "DEFAULT_OVERHEAD_BYTES",
    "GB",
    "PRESETS",
    "PUBLISHED_PARAMS",
    "Architecture",
    "ConfigError",
    "Estimate",
    "GiB",
    "Job",
    "estimate",
    "format_bytes",
    "parameter_count",
    "parse_size",
    "preset",
    "tensor_groups",
    "to_gb",
    "to_gib",
]
