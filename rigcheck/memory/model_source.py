"""Where `rigcheck fit` gets the model: a preset, a config.json, or a hub id in the local cache;
and, from a config when transformers is installed, the real model traced on the meta device."""

from dataclasses import replace
from pathlib import Path

from rigcheck.memory import trace
from rigcheck.memory.architecture import Architecture
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.hf_config import cached_config, from_hf_config
from rigcheck.memory.presets import PRESETS, preset


def config_path(model: str | None, config: str | None) -> Path | None:
    """The config.json a --config or a hub id names; None for a preset or --params."""
    if config:
        return Path(config)
    if not model or model.lower() in PRESETS or "/" not in model:
        return None
    path = cached_config(model)
    if path is None:
        raise ConfigError(
            f"{model!r} is not in the local Hugging Face cache (nothing is downloaded): "
            "give --config path/to/config.json"
        )
    return path


def architecture(model: str | None, fields: dict | None, traceable: bool) -> Architecture | None:
    """The formulas' Architecture; None when the family has none and the trace can answer."""
    if fields is None:
        return preset(model) if model else None
    try:
        return from_hf_config(fields)
    except ConfigError:
        if traceable:  # a family the formulas do not know: the trace counts it
            return None
        raise


def traced(fields: dict, batch: int, seq: int, element_bytes: int, attention: str, lora=None):
    """The trace of the real model at the planned shape (activations in 16 or 32 bit only);
    lora: (rank, targets) to count PEFT's adapters on it too."""
    result = trace.trace(fields, batch, seq, element_bytes if element_bytes in trace.DTYPES else 2,
                         attention)  # fmt: skip
    if element_bytes not in trace.DTYPES:
        note = f"{element_bytes}-byte activations are not traced"
        result = replace(result, activations=None, activation_problem=note)
    if lora is not None:
        result = replace(result, lora_trainable=trace.lora_trainable(fields, *lora))
    return result
