"""Three small real jobs on GPU 0, each with torch.cuda.max_memory_allocated beside what
`rigcheck fit` computes for the same job. Part of tools/live_silicon.py.

    python tools/live_silicon_jobs.py OUT.json

The model is a small Llama (about 170M parameters) built by transformers from a config written
here, with random weights (nothing is downloaded); `rigcheck fit --config` reads the same
config. Without CUDA or transformers the file says so and nothing runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CONFIG = {  # a decoder-only Llama, small enough for any GPU with 8 GB
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 1024,
    "intermediate_size": 2752,
    "num_hidden_layers": 8,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "vocab_size": 32000,
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
}
# name -> (what the job does, rigcheck fit's options for it)
JOBS = {
    "train-fp32-adamw": ("two AdamW steps, fp32, batch 4 x 512",
                         ["--precision", "fp32", "--batch", "4", "--seq", "512"]),
    "train-bf16-adamw-checkpointed": ("two AdamW steps, bf16 weights, full recompute, 8 x 1024",
                                      ["--precision", "bf16", "--batch", "8", "--seq", "1024",
                                       "--checkpointing", "full"]),
    "inference-bf16-kv": ("one forward with the KV cache, bf16, batch 8 x 1024",
                          ["--inference", "--engine", "hf", "--precision", "bf16",
                           "--kv-dtype", "bf16", "--batch", "8", "--seq", "1024"]),
}  # fmt: skip


def measure(torch, transformers, name: str) -> int:
    """torch.cuda.max_memory_allocated over the job, from a clean allocator."""
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    config = transformers.LlamaConfig(**CONFIG)
    dtype = torch.float32 if "fp32" in name else torch.bfloat16
    model = transformers.LlamaForCausalLM(config).to("cuda", dtype)
    batch, seq = (4, 512) if name == "train-fp32-adamw" else (8, 1024)
    tokens = torch.randint(0, CONFIG["vocab_size"], (batch, seq), device="cuda")
    if name.startswith("inference"):
        with torch.no_grad():
            model(tokens, use_cache=True)
    else:
        if "checkpointed" in name:
            model.gradient_checkpointing_enable()
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
        for _ in range(2):  # the second step holds the optimizer state
            model(tokens, labels=tokens).loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    del model
    return peak


def fit(config: Path, options: list[str], vram: int) -> dict:
    argv = [sys.executable, "-m", "rigcheck.cli", "fit", "--config", str(config), *options,
            "--vram", f"{vram}B", "--json"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    record = {"argv": argv[1:], "exit_code": done.returncode}
    try:
        record["json"] = json.loads(done.stdout)
    except json.JSONDecodeError:
        record["stdout"], record["stderr"] = done.stdout[-2000:], done.stderr[-2000:]
    return record


def main(out: Path) -> int:
    try:
        import torch
    except ImportError as exc:
        return _skipped(out, f"cannot import torch: {exc}")
    if not torch.cuda.is_available():
        return _skipped(out, "torch sees no CUDA device")
    try:
        import transformers
    except ImportError as exc:
        return _skipped(out, f"cannot import transformers (never installed here): {exc}")
    vram = torch.cuda.get_device_properties(0).total_memory
    results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "transformers": transformers.__version__, "config": CONFIG, "jobs": {}}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.json"
        config.write_text(json.dumps(CONFIG))
        for name, (what, options) in JOBS.items():
            job = {"what": what, "rigcheck_fit": fit(config, options, vram)}
            try:
                job["max_memory_allocated"] = measure(torch, transformers, name)
            except Exception as exc:  # one job failing still leaves the others' numbers
                job["error"] = f"{type(exc).__name__}: {exc}"
            results["jobs"][name] = job
            out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


def _skipped(out: Path, why: str) -> int:
    out.write_text(json.dumps({"skipped": why}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
