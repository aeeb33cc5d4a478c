"""The meta model's parameters as TensorGroups, so the per-tensor rules (QLoRA's NF4 matrices,
8-bit Adam's small-tensor rule) apply to a family the formulas have no Architecture for.

Which matrices bitsandbytes quantizes is decided by transformers' own code, run on the meta model:
replace_with_bnb_linear (integrations/bitsandbytes.py, transformers 5.23) swaps every module whose
type is exactly nn.Linear (or GPT-2's Conv1D) and whose name passes should_convert_module against
get_keys_to_not_convert(model) (the output embedding, tied weights, the last parameter's module)
plus the model's _keep_in_fp32_modules (quantizer_bnb_4bit.py). Everything else (embeddings,
norms, biases, 3-D fused experts, convolutions, Mamba's A and D) stays in the working dtype.
tests/memory/test_traced_qlora.py holds this to a real 4-bit load on CPU.
"""

from collections import Counter

from rigcheck.memory.architecture import TensorGroup


def _not_converted(model) -> list[str]:
    """The module names transformers' bitsandbytes quantizer leaves alone for this model."""
    from transformers.quantizers.base import get_keys_to_not_convert

    keep = list(getattr(model, "_keep_in_fp32_modules", None) or [])
    return list(set(get_keys_to_not_convert(model)) | set(keep))


def _quantized_weights(model) -> set[int]:
    """ids of the weight parameters bitsandbytes would store in 4 bits."""
    import torch
    from transformers.pytorch_utils import Conv1D
    from transformers.quantizers.quantizers_utils import should_convert_module

    skip = _not_converted(model)
    return {
        id(module.weight)
        for name, module in model.named_modules()
        if (type(module) is torch.nn.Linear or isinstance(module, Conv1D))
        and should_convert_module(name, skip)
    }


def tensor_groups(model) -> tuple[TensorGroup, ...]:
    """Every parameter (a tied one once), grouped by shape: role "linear" for the matrices
    bitsandbytes quantizes, "flat" for the rest (kept whole, never split by the formulas)."""
    quantized = _quantized_weights(model)
    counts: Counter = Counter()
    for p in model.parameters():  # parameters() yields a shared tensor once
        role = "linear" if id(p) in quantized else "flat"
        counts[(tuple(p.shape), role)] += 1
    return tuple(
        TensorGroup(f"traced {role} {'x'.join(map(str, shape)) or 'scalar'}", shape, n, role)
        for (shape, role), n in sorted(counts.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    )
