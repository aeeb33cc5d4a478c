"""`rigcheck fit`: will this job fit in device memory, and with how much headroom.

Exit status: 0 fits, 1 does not fit, 2 bad input (one line on stderr saying what is wrong).
"""

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path

from rigcheck.errors import RigcheckError, one_line_errors
from rigcheck.memory import hybrid_layers, model_source, trace
from rigcheck.memory.activations import ATTENTION, RECOMPUTE
from rigcheck.memory.advice import advise
from rigcheck.memory.advice_report import print_advice
from rigcheck.memory.architecture import Architecture
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import DEFAULT_OVERHEAD_BYTES, Estimate, Job, estimate
from rigcheck.memory.frameworks import CONVENTIONS, DEFAULT_FRAMEWORK, FRAMEWORKS
from rigcheck.memory.hf_config import read_config
from rigcheck.memory.hybrid_layers import MAMBA_CACHE_MODES
from rigcheck.memory.inference import (
    ENGINES,
    KV_DTYPES,
    VLLM_GPU_MEMORY_UTILIZATION,
    VLLM_MAX_NUM_BATCHED_TOKENS,
)
from rigcheck.memory.kv_per_gpu import vllm_layout
from rigcheck.memory.lora import parse_targets
from rigcheck.memory.model_state import METHODS
from rigcheck.memory.optimizers import OPTIMIZERS
from rigcheck.memory.peft_defaults import peft_default_targets
from rigcheck.memory.precision import PRECISIONS
from rigcheck.memory.presets import PRESETS
from rigcheck.memory.report import print_table
from rigcheck.memory.time_report import print_time
from rigcheck.memory.time_to_train import add_time_arguments, rates_from_args, time_to_train
from rigcheck.memory.units import parse_size
from rigcheck.memory.vllm_kv import DEFAULT_VERSION as VLLM_DEFAULT_VERSION
from rigcheck.memory.vllm_kv import parse_version
from rigcheck.number_text import float_option, int_option, is_plain
from rigcheck.paths import holds_another_kind, json_with, output_problem

_COUNT_SUFFIXES = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}


MAX_PARAMS = 10**15
PLAN = json_with("method", "precision")  # what -o writes: every plan has these
# options of the command, not of the job
NOT_JOB = ("func", "json", "command", "output", "tokens", "steps", "matmul_tflops",
           "achieved_fraction", "busbw", "no_trace",
           "microbatches", "interleave")  # fmt: skip


def parse_count(text: str) -> int:
    """A parameter count: '6738415616', '7.5e9', '7.5B', '350M'."""
    body = text.strip().replace("_", "")  # 7_000_000_000: grouping, as Python writes it
    suffix = body[-1:].lower() if body[-1:].isalpha() and body[-1:].lower() != "e" else ""
    try:
        if not is_plain(body):  # Fraction('７') is 7
            raise ValueError(body)
        value = Fraction(body[: len(body) - len(suffix)]) * _COUNT_SUFFIXES[suffix]
    except (ValueError, KeyError, ZeroDivisionError):
        raise ConfigError(
            f"{text!r} is not a parameter count (e.g. 6738415616, 7.5e9, 7B)"
        ) from None
    if value.denominator != 1 or value < 1:
        raise ConfigError(f"{text!r}: a parameter count is a whole number >= 1")
    if value > MAX_PARAMS:  # beyond any model; far beyond, it overflows the float arithmetic
        raise ConfigError(f"{text!r}: more parameters than any model (at most {MAX_PARAMS:.0e})")
    return int(value)


SMALLEST_BARE_SIZE = 2**20  # a bare number below 1 MiB is no device's memory in bytes


def _positive_size(text: str) -> int:
    size = parse_size(text)
    if size < 1:
        raise ConfigError(f"{text!r}: a device's memory is a size above 0, e.g. 80GiB")
    if size < SMALLEST_BARE_SIZE and not any(c.isalpha() for c in str(text)):  # `--vram 80`: GiB?
        raise ConfigError(
            f"{text!r} would be {size} bytes: give the unit, e.g. {text}GiB or {text}GB"
        )
    return size


def _vllm_version(text: str) -> str:
    parse_version(text)
    return text.strip().lstrip("v")


def _argtype(parse: Callable[[str], object]) -> Callable[[str], object]:
    """Let argparse report a ConfigError's own message."""

    def wrapped(text: str) -> object:
        try:
            return parse(text)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    wrapped.__name__ = parse.__name__
    return wrapped


def add_fit_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `rigcheck fit`; --plan files use the same names."""
    model = parser.add_mutually_exclusive_group(required=True)
    model.add_argument(
        "--model", help=f"a preset ({', '.join(PRESETS)}) or a hub id in the local HF cache"
    )
    model.add_argument("--config", metavar="PATH", help="a Hugging Face config.json (decoder-only)")
    model.add_argument("--params", type=_argtype(parse_count), help="parameter count, e.g. 7B")
    job = parser.add_argument_group("the job")
    job.add_argument("--method", choices=METHODS, default="full")
    job.add_argument(
        "--lora-rank", type=int_option, default=8, metavar="R", help="default 8 (PEFT)"
    )
    job.add_argument(
        "--lora-targets", type=_argtype(parse_targets), metavar="LIST|all-linear",
        help="matrices to adapt: q,k,v,o,gate,up,down (or q_proj,...); default: PEFT's for the "
        "model type (q,v for Llama, Mistral, Qwen2/3, Gemma; GPT-2's c_attn), refused where PEFT "
        "has none",
    )  # fmt: skip
    job.add_argument("--double-quant", action="store_true", help="qlora: NF4 double quantization")
    job.add_argument("--precision", choices=list(PRECISIONS), default="bf16-mixed")
    job.add_argument("--optimizer", choices=OPTIMIZERS, help="default adamw (training only)")
    job.add_argument(
        "--framework", choices=FRAMEWORKS, default=DEFAULT_FRAMEWORK,
        help=f"whose allocation conventions (default {DEFAULT_FRAMEWORK}); plain = the ZeRO paper",
    )  # fmt: skip
    job.add_argument(
        "--zero", type=int_option, choices=(0, 1, 2, 3),
        help="0 = DDP (default; fsdp: 3 = FULL_SHARD, 2 = SHARD_GRAD_OP; megatron: 1 = "
        "distributed optimizer)",
    )  # fmt: skip
    job.add_argument(
        "--gpus", type=int_option, default=1,
        help="all GPUs of the job: tp x pp x cp x data parallel (inference: tp = gpus / pp)",
    )  # fmt: skip
    for name, what in (("tp", "tensor"), ("pp", "pipeline"), ("ep", "expert"), ("cp", "context")):
        job.add_argument(f"--{name}", type=int_option, help=f"{what}-parallel degree (default 1)")
    job.add_argument("--sp", action="store_true", help="Megatron sequence parallelism (with --tp)")
    job.add_argument(
        "--offload-optimizer", action="store_true",
        help="fp32 gradients, master weights and optimizer state on the host (ZeRO >= 1)",
    )  # fmt: skip
    job.add_argument("--offload-params", action="store_true", help="ZeRO-3: weights on host too")
    job.add_argument("--batch", type=int_option, default=1, help="micro-batch per GPU (default 1)")
    job.add_argument(
        "--seq",
        type=int_option,
        help="tokens per sequence (default 2048, or the model's positions)",
    )
    job.add_argument("--checkpointing", choices=RECOMPUTE, default="none")
    job.add_argument("--attention", choices=ATTENTION, default="flash", help="default flash")
    job.add_argument("--inference", action="store_true", help="weights + KV cache, no training")
    job.add_argument("--kv-dtype", choices=list(KV_DTYPES), help="default: the weights' dtype")
    job.add_argument("--engine", choices=ENGINES, default="vllm", help="inference (default vllm)")
    job.add_argument(
        "--gpu-memory-utilization", type=float_option, default=VLLM_GPU_MEMORY_UTILIZATION,
        metavar="F",
        help=f"vLLM: the share of the device the engine may use "
        f"(default {VLLM_GPU_MEMORY_UTILIZATION})",
    )  # fmt: skip
    job.add_argument(
        "--max-num-batched-tokens", type=int_option, default=VLLM_MAX_NUM_BATCHED_TOKENS,
        metavar="N",
        help=f"vLLM: tokens one step may schedule (default {VLLM_MAX_NUM_BATCHED_TOKENS})",
    )  # fmt: skip
    job.add_argument("--block-size", type=int_option, default=16, help="vLLM KV block tokens (16)")
    job.add_argument(
        "--vllm-version", type=_argtype(_vllm_version), default=VLLM_DEFAULT_VERSION,
        metavar="X.Y",
        help=f"whose KV accounting: 0.25 to 0.33 (default {VLLM_DEFAULT_VERSION}; from 0.26 a "
        "sliding-window layer keeps every in-flight batch)",
    )  # fmt: skip
    job.add_argument(
        "--mamba-cache-mode", choices=MAMBA_CACHE_MODES, default="none",
        help="vLLM, hybrid models: none (default; prefix caching off) is modelled, align and all "
        "are refused",
    )  # fmt: skip
    job.add_argument(
        "--no-async-scheduling", action="store_true",
        help="vLLM: one batch in flight (async scheduling is on by default)",
    )  # fmt: skip
    job.add_argument(
        "--overhead", type=_argtype(parse_size), default=DEFAULT_OVERHEAD_BYTES, metavar="SIZE",
        help="CUDA context + allocator slack per GPU, stated not hidden (default 1GiB)",
    )  # fmt: skip
    device = parser.add_argument_group("the device").add_mutually_exclusive_group()
    device.add_argument("--device", metavar="CLASS", help="a device class from expected/")
    device.add_argument("--vram", type=_argtype(_positive_size), metavar="SIZE", help="e.g. 80GiB")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--no-trace", action="store_true",
        help="hand formulas only, even where transformers could build the model and trace it",
    )  # fmt: skip
    add_time_arguments(parser)


def _model(args: argparse.Namespace) -> tuple[Architecture | None, dict | None]:
    """The formulas' Architecture, and the config.json fields to trace (None: no trace)."""
    path = model_source.config_path(args.model, getattr(args, "config", None))
    fields = read_config(path) if path else None
    traceable = fields is not None and not getattr(args, "no_trace", False) and trace.available()
    return model_source.architecture(args.model, fields, traceable), fields if traceable else None


def _trace(args: argparse.Namespace, arch: Architecture | None, fields: dict | None, seq: int):
    """The real model traced at the job's shape; a failed trace falls back to the formulas
    (the output says which answered), unless there are none for this family."""
    if fields is None:
        return None
    element = PRECISIONS[args.precision].activation_bytes
    lora = None
    if args.method != "full":
        # PEFT's own default for the checkpoint's model_type, or its refusal (peft_defaults)
        targets = args.lora_targets or peft_default_targets(fields.get("model_type"))
        lora = (args.lora_rank, targets) if trace.peft_available() else None
    try:
        return model_source.traced(fields, args.batch, seq, element, args.attention, lora)
    except ConfigError:
        if arch is None:
            raise
        return None


def _parallel(args: argparse.Namespace) -> dict:
    """Degrees of parallelism; inference spreads over --gpus by tensor parallelism by default."""
    # `is None`, not `or`: --tp 0 was read as left out (1) where --tp -2 was refused.
    pp, ep, cp = (1 if v is None else v for v in (args.pp, args.ep, args.cp))
    spread = args.inference and pp > 0 and args.gpus % pp == 0  # inference: tp = gpus / pp
    tp = args.tp if args.tp is not None else (args.gpus // pp if spread else 1)
    return {"tp": tp, "pp": pp, "ep": ep, "cp": cp, "sp": args.sp}


def job_from_args(args: argparse.Namespace) -> Job:
    """The Job the parsed options describe; a ConfigError for combinations that make no sense."""
    if args.inference and args.optimizer is not None:
        raise ConfigError("--inference has no optimizer: drop --optimizer")
    fsdp_training = args.framework == "fsdp" and not args.inference
    zero = args.zero if args.zero is not None else (3 if fsdp_training else 0)
    arch, fields = _model(args)
    seq = (
        args.seq if args.seq is not None else min(2048, (arch.max_positions if arch else 0) or 2048)
    )
    traced = _trace(args, arch, fields, seq)
    # Read only for --inference: a training run of these families needs no cache description.
    hybrid = hybrid_layers.from_config(fields) if fields and not arch and args.inference else None
    return Job(
        arch=arch,
        traced=traced,
        hybrid=hybrid,
        params=traced.parameters.total if traced and arch is None else args.params or 0,
        method=args.method,
        lora_rank=args.lora_rank,
        lora_targets=args.lora_targets,
        double_quant=args.double_quant,
        precision=args.precision,
        optimizer=args.optimizer or "adamw",
        zero=zero,
        gpus=args.gpus,
        offload_optimizer=args.offload_optimizer,
        offload_params=args.offload_params,
        framework=args.framework,
        engine=args.engine,
        gpu_memory_utilization=args.gpu_memory_utilization,
        block_size=args.block_size,
        max_num_batched_tokens=args.max_num_batched_tokens,
        vllm_version=args.vllm_version,
        async_scheduling=not args.no_async_scheduling,
        mamba_cache_mode=args.mamba_cache_mode,
        **_parallel(args),
        batch=args.batch,
        seq=seq,
        checkpointing=args.checkpointing,
        attention=args.attention,
        inference=args.inference,
        kv_dtype=args.kv_dtype,
        overhead_bytes=args.overhead,
    )


def device_bytes(args: argparse.Namespace) -> int:
    """Memory of one device: --vram as given, or what the --device class's spec promises."""
    if args.vram is not None:
        return args.vram
    if args.device is None:
        raise ConfigError("give the device: --device CLASS (a spec in expected/) or --vram SIZE")
    from rigcheck.spec import load_spec  # reads spec files; only needed for --device

    return load_spec(args.device).memory_bytes


def fit_report(args: argparse.Namespace, job: Job, result: Estimate, device: int) -> dict:
    """The JSON object: integer bytes per GPU, the verdict and the job it describes."""
    out = result.as_dict()
    usable = device
    if job.inference and job.engine == "vllm":  # the engine refuses to start beyond its share
        usable = int(device * job.gpu_memory_utilization)
    out.update(device_bytes=device, usable_bytes=usable, fits=result.total_bytes <= usable)
    out["headroom_bytes"] = usable - result.total_bytes
    out["framework"] = "inference: " + job.engine if job.inference else job.framework
    pure = PRECISIONS[job.precision].master_bytes == 0
    convention = CONVENTIONS[job.framework]
    out["convention"] = PRECISIONS[job.precision].convention if pure else convention
    if job.inference:
        out["convention"] = (
            f"{job.engine}: weights + KV cache (KV heads per GPU = max(1, kv_heads / tp))"
            + (f", {job.block_size}-token blocks" if job.engine == "vllm" else "")
        )
        if job.arch is None and job.hybrid is not None:
            out["convention"] = hybrid_convention(job)
    out["dp"] = job.dp
    if job.traced is not None:
        out["trace"] = trace.summary(job.traced)
    out.update(batch=job.batch, seq=job.seq, advice=advise(job, usable))
    if getattr(args, "tokens", None) or getattr(args, "steps", None):
        rates = rates_from_args(args, job.precision)
        length = (int(args.tokens or 0), args.steps or 0)
        chunks = (getattr(args, "microbatches", 1), getattr(args, "interleave", 1))
        out["time"] = time_to_train(job, rates, *length, *chunks)
    out["job"] = {k: v for k, v in vars(args).items() if k not in NOT_JOB}
    if isinstance(job.lora_targets, tuple):
        out["job"]["lora_targets"] = list(job.lora_targets)
    return out


def hybrid_convention(job: Job) -> str:
    """How a hybrid / chunked-attention family's figures were obtained, in one line."""
    hy = job.hybrid
    if job.engine != "vllm":
        parts = ["hf: weights = traced parameters / (tp x pp), split evenly",
                 "KV = every prefilled token in each attention layer (sliding and chunked too: "
                 "transformers frees them after the first decoding step)"]  # fmt: skip
        if hy.mamba_layers:
            parts.append(f"{hy.mamba_layers} {hy.mamba.kind} layers: conv state in the model's "
                         "dtype + fp32 ssm state per request")  # fmt: skip
        return "; ".join(parts) + "; activations: estimate from the config's widths"
    lay = vllm_layout(job, job.seq)
    parts = [
        f"vllm {job.vllm_version}: weights = traced parameters / (tp x pp), split evenly",
        f"KV = vLLM's groups ({lay.group_size} layers, {lay.block}-token blocks, "
        f"{lay.page_bytes:,} B pages)",
    ]
    if hy.mamba_layers:
        parts.append(f"{hy.mamba_layers} {hy.mamba.kind} layers: 1 padded page of conv + ssm "
                     "state per request (mamba_cache_mode none)")  # fmt: skip
    if hy.chunked_layers:
        parts.append(f"{hy.chunked_layers} chunked-attention layers ({hy.chunk}-token chunks)")
    if hy.sliding_layers:
        parts.append(f"{hy.sliding_layers} sliding-window layers ({hy.window}-token window)")
    if hy.quantization == "mxfp4":
        parts.append("routed experts' weights at MXFP4's 4.25 bits, the rest at --precision")
    elif hy.quantization:
        parts.append(f"weights at --precision: the checkpoint's {hy.quantization} not modelled")
    return "; ".join(parts) + "; activations: estimate from the config's widths"


def plan_written(output: str, device: str | None) -> str:
    """What to run next: the installed command (README's rows), the clone's pytest beside it."""
    name = device or "CLASS"
    return (
        f"wrote {output}: check it on the machine with rigcheck check {name} --plan={output} "
        f"(in a clone: pytest -m {name} --plan={output})"
    )


def run_fit(args: argparse.Namespace) -> int:
    """Estimate, print, and exit 0 (fits), 1 (does not fit) or 2 (bad input)."""
    try:
        if args.output and (
            problem := output_problem(args.output)
            or holds_another_kind(args.output, "-o", "plan", PLAN)
        ):
            raise ConfigError(problem)
        job = job_from_args(args)
        device = device_bytes(args)
        report = fit_report(args, job, estimate(job), device)
    except RigcheckError as exc:  # ConfigError, and the spec's UnknownClassError or SpecError
        print(f"rigcheck fit: error: {exc}", file=sys.stderr)
        return 2
    if args.output:  # the plan file `pytest --plan` reads: this job's options
        Path(args.output).write_text(json.dumps(report["job"], indent=2) + "\n")
        print(plan_written(args.output, args.device), file=sys.stderr)
    if args.json:
        print(json.dumps(report))
    else:
        print_table(report)
        print_advice(report)
        print_time(report)
    return 0 if report["fits"] else 1


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Add `fit` to the rigcheck command."""
    parser = subparsers.add_parser(
        "fit",
        help="will a training or inference job fit in device memory, with how much headroom",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_fit_arguments(parser)
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="also write the job as a --plan file"
    )
    parser.set_defaults(func=run_fit)
    one_line_errors(parser)  # the usage block would bury the one line that matters
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m rigcheck.memory.cli fit ...`: the same command without the rigcheck wrapper."""
    parser = argparse.ArgumentParser(prog="rigcheck")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
