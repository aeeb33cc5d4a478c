"""PEFT's default LoRA targets: what get_peft_model adapts when LoraConfig names no target_modules.

PEFT looks the model's top-level config model_type up in TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_
MAPPING (peft/utils/constants.py; tuners/lora/model.py _prepare_adapter_config, the config from
BaseTuner.get_model_config: model.config.to_dict()) and refuses every other type with "Please
specify `target_modules` in `peft_config`". So Phi-3, Qwen2/3-MoE, DeepSeek-V2/V3, a multimodal
Gemma-3 ("gemma3", only "gemma3_text" is listed), gpt-oss, GLM-4, Granite, OLMo-2, SmolLM3,
Falcon-H1 and Qwen2.5-VL have no default, and Llama-4 ("llama4") adapts q_proj and v_proj wherever
they are, its vision tower's included.

Mixtral is listed but refused all the same from PEFT 0.19 under transformers 5: before the lookup
PEFT remaps a mixture of experts' targets to transformers 5's fused expert parameters
(utils/transformers_weight_conversion.py _convert_peft_config_moe, PRs #3083 and #3146), which
turns the absent target_modules into an empty set, so get_peft_model raises "No `target_modules`
passed but also no `target_parameters` found" (MOE_REMAPPED below).

The table below is PEFT 0.21.2's, as installed, with the first release holding each entry as it
stands now (read from huggingface/peft's tags v0.3.0 to v0.20.0; "phi" held Wqkv, out_proj, fc1,
fc2 in 0.7). An older PEFT lacks the later entries: Qwen2 needs 0.12, Gemma-2 0.13, Llama-4,
Gemma-3 and Qwen3 0.16. tests/memory/test_peft_defaults.py holds the table to the installed PEFT.
"""

from importlib import metadata

from rigcheck.memory.errors import ConfigError

# model_type -> (target_modules, first PEFT release with this entry)
PEFT_DEFAULT_TARGETS: dict[str, tuple[tuple[str, ...] | str, tuple[int, int]]] = {
    "t5": (("q", "v"), (0, 3)),
    "mt5": (("q", "v"), (0, 3)),
    "bart": (("q_proj", "v_proj"), (0, 3)),
    "gpt2": (("c_attn",), (0, 3)),
    "bloom": (("query_key_value",), (0, 3)),
    "blip-2": (("q", "v", "q_proj", "v_proj"), (0, 3)),
    "opt": (("q_proj", "v_proj"), (0, 3)),
    "gptj": (("q_proj", "v_proj"), (0, 3)),
    "gpt_neox": (("query_key_value",), (0, 3)),
    "gpt_neo": (("q_proj", "v_proj"), (0, 3)),
    "bert": (("query", "value"), (0, 3)),
    "roberta": (("query", "value"), (0, 3)),
    "xlm-roberta": (("query", "value"), (0, 3)),
    "electra": (("query", "value"), (0, 3)),
    "deberta-v2": (("query_proj", "value_proj"), (0, 3)),
    "deberta": (("in_proj",), (0, 3)),
    "layoutlm": (("query", "value"), (0, 3)),
    "llama": (("q_proj", "v_proj"), (0, 3)),
    "llama4": (("q_proj", "v_proj"), (0, 16)),
    "chatglm": (("query_key_value",), (0, 3)),
    "gpt_bigcode": (("c_attn",), (0, 4)),
    "mpt": (("Wqkv",), (0, 4)),
    "RefinedWebModel": (("query_key_value",), (0, 5)),
    "RefinedWeb": (("query_key_value",), (0, 5)),
    "falcon": (("query_key_value",), (0, 5)),
    "btlm": (("c_proj", "c_attn"), (0, 5)),
    "codegen": (("qkv_proj",), (0, 5)),
    "mistral": (("q_proj", "v_proj"), (0, 6)),
    "mixtral": (("q_proj", "v_proj"), (0, 8)),
    "stablelm": (("q_proj", "v_proj"), (0, 6)),
    "phi": (("q_proj", "v_proj", "fc1", "fc2"), (0, 8)),
    "gemma": (("q_proj", "v_proj"), (0, 9)),
    "gemma2": (("q_proj", "v_proj"), (0, 13)),
    "gemma3_text": (("q_proj", "v_proj"), (0, 16)),
    "gemma4": (r".*language_model\..*\.(q_proj|v_proj)", (0, 19)),
    "qwen2": (("q_proj", "v_proj"), (0, 12)),
    "qwen3": (("q_proj", "v_proj"), (0, 16)),
    "nemotron_h": (("q_proj", "k_proj", "v_proj", "o_proj"), (0, 20)),
    "rwkv": (("key", "value", "receptance", "output"), (0, 18)),
    "rwkv7": (("r_proj", "k_proj", "v_proj", "o_proj", "key", "value"), (0, 18)),
}
TABLE_VERSION = "0.21.2"  # the PEFT the table was read from, assumed when none is installed
# Listed types whose default PEFT loses to the MoE remapping, from this PEFT release on, under
# transformers 5 (the only other listed type in the remapping is none: qwen2/3-moe, deepseek,
# olmoe, ... have no default to lose).
MOE_REMAPPED = {"mixtral": (0, 19)}


def installed(package: str) -> str | None:
    """An installed package's version, read from its metadata (the package is not imported)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _release(version: str) -> tuple[int, int]:
    """'0.21.2' or '0.20.1.dev0' -> (0, 21)."""
    parts = [*version.split("."), "0"][:2]
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in parts)


def peft_default_targets(model_type: str | None, peft_version: str | None = None):
    """The target_modules PEFT adapts on this model type when none are given (module names, or
    PEFT's regular expression); a ConfigError where that PEFT refuses, in one line."""
    version = peft_version or installed("peft") or TABLE_VERSION
    targets, since = PEFT_DEFAULT_TARGETS.get(model_type or "", (None, None))
    if targets is not None and _remapped(model_type, version):
        raise ConfigError(
            f"PEFT {version} under transformers 5 keeps no default LoRA targets for model_type "
            f"{model_type!r} (its experts are remapped first; get_peft_model refuses): give "
            "--lora-targets, e.g. q_proj,v_proj (its default before PEFT 0.19) or all-linear"
        )
    if targets is not None and _release(version) >= since:
        return targets
    added = ""
    if targets:
        names = targets if isinstance(targets, str) else ",".join(targets)
        added = f" (its default {names} came in PEFT {since[0]}.{since[1]})"
    raise ConfigError(
        f"PEFT {version} has no default LoRA targets for model_type {model_type!r}{added} and "
        "refuses without them: give --lora-targets (all-linear, or the matrices to adapt)"
    )


def _remapped(model_type: str, peft_version: str) -> bool:
    since = MOE_REMAPPED.get(model_type)
    transformers = _release(installed("transformers") or "5")
    return since is not None and _release(peft_version) >= since and transformers >= (5, 0)
