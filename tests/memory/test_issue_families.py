"""Issue 39's eight families end to end: what `rigcheck fit` prints for each, against the real
libraries on small configs (tests/memory/test_trace.py FAMILIES), on CPU.

- parameters: the count of the model transformers builds on the meta device, built here
  independently of rigcheck's trace (its own Auto class, every parameter once);
- activations: every storage autograd saves (saved_tensors_hooks) in a real CPU forward of the
  same model with real weights and tokens, at the job's batch, sequence and dtype;
- LoRA: PEFT 0.21's get_peft_model on that real CPU model, trainable parameters counted.
Inference (vLLM's KV) is held to vLLM's arithmetic in test_hybrid_kv.py; QLoRA's NF4 bytes to a
real 4-bit load in test_traced_qlora.py.
"""

import json
import warnings

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from rigcheck.memory import trace  # noqa: E402

from .test_trace import FAMILIES, real_saved_bytes  # noqa: E402

ISSUE = ["falcon_h1", "glm4", "gpt_oss", "granite", "llama4", "olmo2", "qwen2_5_vl", "smollm3"]
PRECISION = {4: "fp32", 2: "bf16"}  # one copy in the dtype the real model runs in


def fit(tmp_path, capsys, config: dict, *argv: str) -> dict:
    from rigcheck.memory.cli import main

    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    status = main(["fit", "--config", str(path), "--vram", "80GiB", "--json", *argv])
    assert status == 0
    return json.loads(capsys.readouterr().out)


def auto_model(config: dict, device: str):
    """The model a checkpoint of this config loads as, built by transformers' Auto classes."""
    hf = trace.hf_config(config)
    vision = getattr(hf, "vision_config", None) is not None
    auto = transformers.AutoModelForImageTextToText if vision else transformers.AutoModelForCausalLM
    torch.manual_seed(0)
    with warnings.catch_warnings(), torch.device(device):
        warnings.simplefilter("ignore")
        return auto.from_config(hf)


@pytest.mark.parametrize("family", ISSUE)
def test_fit_parameters_and_activations_equal_the_real_model(family, tmp_path, capsys) -> None:
    config, element = FAMILIES[family]
    report = fit(tmp_path, capsys, config, "--precision", PRECISION[element],
                 "--attention", "eager", "--batch", "2", "--seq", "32")  # fmt: skip
    assert report["params_source"] == report["activations_source"] == "traced"
    meta = auto_model(config, "meta")
    assert report["params"] == sum(p.numel() for p in meta.parameters())
    assert report["activations_bytes"] == real_saved_bytes(config, element, 32, 2)


# PEFT 0.21 refuses all-linear on Falcon-H1 itself (its Mamba out_proj and conv1d are
# "incompatible with Mamba-based models"): the attention and MLP matrices are adapted instead.
TARGETS = {"falcon_h1": "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"}


# The layouts PEFT sees differently: Mamba beside attention, 3-D experts (not nn.Linear), a vision
# tower of plain linears, a tower and projector. GLM-4, Granite, OLMo-2 and SmolLM3 are Llama's
# layout here (all eight passed when written; four kept for the test budget).
LORA = ["falcon_h1", "gpt_oss", "llama4", "qwen2_5_vl"]


@pytest.mark.parametrize("family", LORA)
def test_fit_lora_counts_what_peft_adapts_on_the_real_model(family, tmp_path, capsys) -> None:
    import peft

    config = FAMILIES[family][0]
    targets = TARGETS.get(family, "all-linear")
    report = fit(tmp_path, capsys, config, "--method", "lora", "--lora-targets", targets,
                 "--lora-rank", "4", "--seq", "32")  # fmt: skip
    modules = targets if targets == "all-linear" else targets.split(",")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = peft.get_peft_model(
            auto_model(config, "cpu"), peft.LoraConfig(r=4, target_modules=modules)
        )
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert report["trainable_params"] == trainable > 0


def test_a_target_peft_refuses_is_refused_in_peft_s_words(tmp_path, capsys) -> None:
    from rigcheck.memory.cli import main

    path = tmp_path / "config.json"
    path.write_text(json.dumps(FAMILIES["falcon_h1"][0]))
    argv = ["fit", "--config", str(path), "--vram", "80GiB", "--seq", "32", "--method", "lora"]
    assert main([*argv, "--lora-targets", "all-linear"]) == 2
    err = capsys.readouterr().err.strip()
    assert "PEFT cannot adapt this model" in err and "incompatible with Mamba" in err
    assert len(err.splitlines()) == 1
