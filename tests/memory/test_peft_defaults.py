"""`--method lora` without --lora-targets does what PEFT does: its default target modules where
PEFT has one for the model type, a one-line refusal where get_peft_model refuses. Held to the
installed PEFT: its own mapping, and get_peft_model(LoraConfig(r)) with no targets on small
transformers models built on the meta device (so a change in PEFT's defaults is seen here)."""

import json
import warnings

import pytest

from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.hf_config import from_hf_config
from rigcheck.memory.peft_defaults import PEFT_DEFAULT_TARGETS, peft_default_targets
from rigcheck.memory.presets import preset

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

from .test_issue_families import ISSUE, auto_model  # noqa: E402
from .test_trace import FAMILIES, SMALL  # noqa: E402

MOE = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32)
# The families the formulas shape. PEFT 0.21 has a default for the first seven; Mixtral's is lost
# to its MoE remapping under transformers 5.
FORMULA = {
    "llama": {}, "mistral": {}, "qwen2": {}, "qwen3": {}, "gemma": {}, "gemma2": {},
    "gemma3_text": {}, "mixtral": dict(num_local_experts=4, num_experts_per_tok=2),
    "phi3": {}, "qwen2_moe": dict(MOE, shared_expert_intermediate_size=48), "qwen3_moe": MOE,
    "deepseek_v3": dict(MOE, n_routed_experts=4, q_lora_rank=32, kv_lora_rank=16,
                        qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16,
                        n_shared_experts=1, n_group=1, topk_group=1),
}  # fmt: skip
# PEFT's two refusals: no default for the type; a mixture of experts remapped to an empty set
REFUSED = ("Please specify `target_modules`", "No `target_modules` passed but also no")


def peft_default_count(config: dict) -> int | None:
    """PEFT's trainable count with no target_modules on the meta model; None if PEFT refuses."""
    model = auto_model(config, "meta")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            wrapped = peft.get_peft_model(model, peft.LoraConfig(r=4))
        except ValueError as exc:
            assert str(exc).startswith(REFUSED), exc
            return None
    return sum(p.numel() for p in wrapped.parameters() if p.requires_grad)


def test_the_table_is_the_installed_peft_s() -> None:
    from peft.utils.constants import TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING as theirs

    ours = {k: targets for k, (targets, _) in PEFT_DEFAULT_TARGETS.items()}
    assert ours == {k: v if isinstance(v, str) else tuple(v) for k, v in theirs.items()}


@pytest.mark.parametrize("family", FORMULA)
def test_formula_families_take_peft_s_default_or_its_refusal(family) -> None:
    config = transformers.CONFIG_MAPPING[family](**SMALL, **FORMULA[family]).to_dict()
    expected = peft_default_count(config)
    job = Job(arch=from_hf_config(config), method="lora", lora_rank=4, seq=16)
    if expected is None:
        refusal = f"no default LoRA targets for model_type '{family}'"
        with pytest.raises(ConfigError, match=refusal):
            estimate(job)
    else:
        assert estimate(job).trainable_params == expected


def fit(tmp_path, capsys, config: dict) -> tuple[int, str]:
    from rigcheck.memory.cli import main

    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    argv = ["fit", "--config", str(path), "--vram", "80GiB", "--json", "--seq", "8"]
    status = main([*argv, "--method", "lora", "--lora-rank", "4"])
    out = capsys.readouterr()
    return status, out.out if status != 2 else out.err


# Issue 39's eight (Llama-4 here as its text model, "llama4_text", which PEFT does not list) and
# two traced families PEFT has a default for (Bloom's fused query_key_value, MPT's Wqkv).
@pytest.mark.parametrize("family", [*ISSUE, "bloom", "mpt"])
def test_traced_families_take_peft_s_default_or_its_refusal(family, tmp_path, capsys) -> None:
    config = FAMILIES[family][0]
    expected = peft_default_count(config)
    status, text = fit(tmp_path, capsys, config)
    if expected is None:
        assert status == 2 and len(text.strip().splitlines()) == 1
        assert f"no default LoRA targets for model_type '{config['model_type']}'" in text
        assert "--lora-targets" in text
    else:
        assert json.loads(text)["trainable_params"] == expected > 0


def test_a_multimodal_wrapper_is_looked_up_by_its_own_type() -> None:
    """Gemma-3 4B+ is "gemma3" at the top, "gemma3_text" inside: PEFT lists only the latter."""
    config = {"model_type": "gemma3", "text_config": dict(SMALL, model_type="gemma3_text")}
    with pytest.raises(ConfigError, match="model_type 'gemma3'"):
        estimate(Job(arch=from_hf_config(config), method="lora", seq=16))


def test_presets_keep_peft_s_default() -> None:
    assert estimate(Job(arch=preset("llama-2-7b"), method="lora", seq=16)).trainable_params == (
        32 * 8 * (2 * 4096 + 2 * 4096)  # q and v: r (d_in + d_out) in each of 32 layers
    )
    assert preset("gpt2").model_type == "gpt2" and preset("mistral-7b").model_type == "mistral"


def test_an_older_peft_lacks_the_later_defaults() -> None:
    assert peft_default_targets("qwen3", "0.16.0") == ("q_proj", "v_proj")
    with pytest.raises(ConfigError, match=r"PEFT 0\.15\.2 .* 'qwen3' .* came in PEFT 0\.16"):
        peft_default_targets("qwen3", "0.15.2")
    with pytest.raises(ConfigError, match=r"'qwen2' .* came in PEFT 0\.12"):
        peft_default_targets("qwen2", "0.11.1")
    assert peft_default_targets("llama", "0.3.0") == ("q_proj", "v_proj")
    assert peft_default_targets("mixtral", "0.18.1") == ("q_proj", "v_proj")
    with pytest.raises(ConfigError, match=r"PEFT 0\.19\.0 under transformers 5 .* 'mixtral'"):
        peft_default_targets("mixtral", "0.19.0")
