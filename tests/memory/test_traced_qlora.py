"""QLoRA on a family only the trace knows: which matrices bitsandbytes stores in NF4 is read off
the meta model with transformers' own rules (rigcheck/memory/traced_groups.py); here each of the
issue's families is saved small in bf16 and loaded for real with transformers 5.23's
BitsAndBytesConfig (NF4) on CPU, and every stored byte is counted."""

import json
import warnings

import pytest

from rigcheck.memory.model_state import frozen_state
from rigcheck.memory.precision import precision
from rigcheck.memory.quantization import nf4_bits

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("bitsandbytes")
from rigcheck.memory import trace  # noqa: E402

from .test_trace import FAMILIES  # noqa: E402

# The layouts that differ for bitsandbytes: Mamba's convolution and A/D (Falcon-H1), 3-D fused
# experts and attention sinks (gpt-oss), an nn.Linear subclass it does not swap and a vision tower
# (Llama-4), a vision tower and projector of plain linears (Qwen2.5-VL). OLMo-2, Granite, GLM-4 and
# SmolLM3 are Llama's layout here; all eight pass (about 0.5 s each, the first 3 s with imports).
ISSUE_FAMILIES = ["falcon_h1", "gpt_oss", "llama4", "qwen2_5_vl"]


def real_nf4_bytes(config: dict, tmp_path, double_quant: bool = False) -> int:
    """Weights a real 4-bit load keeps: packed codes plus each tensor's absmax (and, with double
    quantization, the absmaxes' own absmax), the unquantized tensors as loaded (bf16)."""
    hf = trace.hf_config(config)
    cls = trace._model_class(hf)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls.from_config(hf, dtype=torch.bfloat16).save_pretrained(tmp_path)
        nf4 = transformers.BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16,
            bnb_4bit_use_double_quant=double_quant,
        )  # fmt: skip
        model = cls.from_pretrained(
            tmp_path, quantization_config=nf4, dtype=torch.bfloat16, device_map="cpu"
        )
    stored = 0
    for p in model.parameters():
        state = getattr(p, "quant_state", None)
        stored += p.nbytes
        if state is not None:
            stored += state.absmax.nbytes + (state.state2.absmax.nbytes if state.nested else 0)
    return stored


@pytest.mark.parametrize("family", ISSUE_FAMILIES)
def test_traced_nf4_weights_equal_a_real_4bit_load(family, tmp_path) -> None:
    config = FAMILIES[family][0]
    groups = trace.count_parameters(trace.build_meta(config), config).groups
    assert any(g.role == "linear" for g in groups) and any(g.role == "flat" for g in groups)
    expected = frozen_state(groups, precision("bf16"), nf4_bits(False)).weights_bytes
    assert real_nf4_bytes(config, tmp_path) == expected


def test_fit_qlora_on_a_traced_family(capsys, tmp_path) -> None:
    """The CLI's frozen weights: NF4 matrices, the rest cast to fp32 by PEFT's
    prepare_model_for_kbit_training; the adapters PEFT's count, in bf16 with their gradients."""
    from rigcheck.memory.cli import main

    config = FAMILIES["olmo2"][0]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    argv = ["fit", "--config", str(path), "--vram", "80GiB", "--seq", "64", "--json"]
    assert main([*argv, "--method", "qlora", "--lora-targets", "q,v"]) == 0  # PEFT has no default
    report = json.loads(capsys.readouterr().out)
    groups = trace.count_parameters(trace.build_meta(config), config).groups
    frozen = frozen_state(groups, precision("bf16"), nf4_bits(False), kbit_fp32=True)
    adapters = trace.lora_trainable(config, 8, ("q", "v"))
    assert report["trainable_params"] == adapters
    assert report["weights_bytes"] == frozen.weights_bytes + 2 * adapters
