"""A sample of tools/trace_sweep.py on every pass: `rigcheck fit` on transformers' default
configuration of a model_type (two layers) either counts exactly the parameters of the model
transformers builds on the meta device, or refuses in one line with transformers' own reason.
The whole sweep (every language-model type of CONFIG_MAPPING) is the tool; each type sampled
here was a traceback or a wrong refusal before the fix it names."""

import importlib.util
import logging
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

_PATH = Path(__file__).resolve().parents[2] / "tools" / "trace_sweep.py"
_SPEC = importlib.util.spec_from_file_location("trace_sweep", _PATH)
sweep = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sweep)

ANSWERED = {
    "falcon_h1": "time_step_limit's {'__float__': 'Infinity'} read back as from_pretrained does",
    "gpt_neo": "its own attention table has no flash stand-in: counted on the eager build",
    "hrm_text": "the meta forward raises IndexError: parameters stand, activations not traced",
    "mistral4": "only image-text-to-text maps it, with no vision_config",
}
# transformers 5.23 cannot build these from their own default configuration
REFUSED = {
    "dbrx": "DbrxAttentionConfig has no rope_theta",
    "nemotron": "head_dim None in an integer division",
}


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("model_type", sorted(ANSWERED))
def test_fit_counts_what_transformers_builds(model_type: str) -> None:
    row = sweep.check(model_type)
    assert row["outcome"] == "exact", row
    assert row["rigcheck"] == row["transformers"] > 0
    if model_type == "hrm_text":  # no formula either: said, not labelled "formula"
        assert row["activations"].startswith("not modelled (the meta-device trace of"), row


@pytest.mark.parametrize("model_type", sorted(REFUSED))
def test_fit_refuses_in_one_line_with_transformers_reason(model_type: str) -> None:
    row = sweep.check(model_type)
    assert row["outcome"] == "refused", row
    line = row["rigcheck_error"]
    assert line.startswith("rigcheck fit: error: transformers cannot build") and "\n" not in line
    reason = row["transformers_error"].split(": ", 1)[1][:60]
    assert reason in line
