"""Every model_type transformers can build as a language model, through `rigcheck fit`.

    python tools/trace_sweep.py                 # all of CONFIG_MAPPING, a JSON line per type
    python tools/trace_sweep.py llama gpt_oss   # just these
    python tools/trace_sweep.py --summary out.jsonl   # counts from a finished sweep

For each model_type whose configuration class transformers maps to AutoModelForCausalLM or
AutoModelForImageTextToText, its default configuration (cut to two layers: shrink) is saved and
read back as a checkpoint's config.json is, `rigcheck fit --config` is run on the fields
save_pretrained writes, and its parameter count is compared with the model transformers itself
builds from that configuration on the meta device (the Auto class a checkpoint loads as, every
parameter once).
Outcomes:
  exact            rigcheck's count equals transformers' meta model
  wrong            it answered another count (a bug: fix it)
  refused_buildable  it refused a model transformers builds (a bug: fix it)
  refused          it refused, and transformers cannot build the model either (the why is
                   transformers' own error, and rigcheck's line is kept beside it)
  answered_unbuildable  transformers cannot build it, rigcheck answered from its formulas
tests/memory/test_trace_sweep.py runs a sample of this on every CI pass.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import signal
import sys
import tempfile
import time
import warnings
from pathlib import Path

TIMEOUT_S = 120  # a default configuration that takes longer is reported, not waited for


class Timeout(Exception):
    pass


def language_model_types() -> list[str]:
    """The model_types transformers maps to a causal-LM or image-text-to-text class."""
    import transformers

    auto = (transformers.AutoModelForCausalLM, transformers.AutoModelForImageTextToText)
    return sorted(
        name for name, cls in transformers.CONFIG_MAPPING.items()
        if any(cls in a._model_mapping for a in auto)
    )  # fmt: skip


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:240]}" if text else type(exc).__name__


def transformers_count(config) -> int:
    """Parameters of the model transformers builds from this configuration on the meta device:
    image-text-to-text when the configuration has a vision tower and that class exists for it,
    else causal LM (the class a checkpoint of it loads as)."""
    import torch
    import transformers

    auto = transformers.AutoModelForCausalLM
    image = transformers.AutoModelForImageTextToText
    vision = getattr(config, "vision_config", None) is not None
    if (vision and type(config) in image._model_mapping) or type(config) not in auto._model_mapping:
        auto = image
    with torch.device("meta"):
        model = auto.from_config(config)
    return sum(p.numel() for p in model.parameters())


LAYER_FIELDS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "num_decoder_layers",
                "depth", "decoder_layers", "encoder_layers")  # fmt: skip
SMALL_LAYERS = 2


def shrink(config) -> None:
    """Two layers in the configuration and each sub-configuration (vision tower, text model),
    lists of one entry per layer (layer_types, no_rope_layers, ...) cut to match: the shapes
    of every layer stay the release's, the meta model builds in a fraction of the time."""
    from transformers import PretrainedConfig

    subs = [v for v in vars(config).values() if isinstance(v, PretrainedConfig)]
    for cfg in [config, *subs]:
        for name in LAYER_FIELDS:
            layers = getattr(cfg, name, None)
            if isinstance(layers, int) and not isinstance(layers, bool) and layers > SMALL_LAYERS:
                setattr(cfg, name, SMALL_LAYERS)
                for key, value in list(vars(cfg).items()):
                    if isinstance(value, list) and len(value) == layers:
                        setattr(cfg, key, value[:SMALL_LAYERS])


def rigcheck_fit(fields: dict) -> tuple[int | None, str, str]:
    """`rigcheck fit --config` on these fields: (params, "", how its activations were obtained)
    or (None, its one-line error, "")."""
    from rigcheck.memory.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(fields))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["fit", "--config", str(path), "--vram", "1TiB", "--seq", "64", "--json"])
    if status in (0, 1):
        report = json.loads(out.getvalue())
        untraced = report.get("trace", {}).get("activations_not_traced", "")
        how = report["activations_source"] + (f" ({untraced})" if untraced else "")
        return report["params"], "", how
    lines = [x for x in err.getvalue().splitlines() if x.startswith("rigcheck fit:")]
    return None, (lines[-1] if lines else err.getvalue().strip()[-240:]), ""


def written(config, small: bool):
    """The configuration as a checkpoint's config.json gives it back: saved by save_pretrained,
    read by AutoConfig.from_pretrained (what a user's model would be built from)."""
    import transformers

    if small:
        shrink(config)
    with tempfile.TemporaryDirectory() as tmp:
        config.save_pretrained(tmp)
        return transformers.AutoConfig.from_pretrained(tmp)


def _config(model_type: str, small: bool):
    """The default configuration, two layers when that still builds (a per-layer dict keyed by
    layer index, Gemma-4's per_layer_config, does not survive the cut: then full size)."""
    import transformers

    cls = transformers.CONFIG_MAPPING[model_type]
    if small:
        try:
            config = written(cls(), True)
            transformers_count(config)
            return config
        except Timeout:
            raise
        except Exception:  # the full-size default says what is wrong
            pass
    return written(cls(), False)


def _alarm(signum, frame):
    raise Timeout(f"over {TIMEOUT_S} s")


def check(model_type: str, small: bool = True) -> dict:
    """One model_type's outcome, as a JSON-able dict (small: two layers, see shrink)."""
    start = time.monotonic()
    row: dict = {"model_type": model_type}
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                config = _config(model_type, small)
                fields = json.loads(config.to_json_string(use_diff=True))
                fields.setdefault("model_type", model_type)
                truth, why = transformers_count(config), ""
            except Timeout:
                raise
            except Exception as exc:  # any failure is "transformers cannot"
                truth, why = None, _first_line(exc)
                fields = {"model_type": model_type}
            try:
                params, refusal, activations = rigcheck_fit(fields)
            except Timeout:
                raise
            except Exception as exc:  # a traceback is itself a bug to report
                params, refusal, activations = None, "TRACEBACK " + _first_line(exc), ""
    except Timeout as exc:
        row.update(outcome="timeout", detail=str(exc))
        return row
    finally:
        signal.alarm(0)
    row.update(transformers=truth, rigcheck=params, seconds=round(time.monotonic() - start, 2))
    if truth is not None:
        row["outcome"] = (
            "exact" if params == truth else "wrong" if params is not None else "refused_buildable"
        )
    else:
        row["outcome"] = "refused" if params is None else "answered_unbuildable"
        row["transformers_error"] = why
    if refusal:
        row["rigcheck_error"] = refusal
    if activations:
        row["activations"] = activations
    return row


def summary(rows: list[dict]) -> dict:
    """Outcomes counted, and of the answered how many had their activations traced."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    traced = sum(row.get("activations") == "traced" for row in rows)
    return {"tried": len(rows), **dict(sorted(counts.items())), "activations_traced": traced}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("types", nargs="*", help="model_types (default: all)")
    parser.add_argument("--summary", metavar="JSONL", help="count the outcomes of a sweep file")
    parser.add_argument("--full-size", action="store_true", help="default configs unshrunk")
    args = parser.parse_args(argv)
    if args.summary:
        rows = [json.loads(x) for x in Path(args.summary).read_text().splitlines() if x.strip()]
        print(json.dumps(summary(rows)))
        return 0
    logging.disable(logging.WARNING)  # transformers' per-model kernel notices
    rows = []
    for model_type in args.types or language_model_types():
        rows.append(check(model_type, small=not args.full_size))
        print(json.dumps(rows[-1]), flush=True)
    print(json.dumps(summary(rows)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
