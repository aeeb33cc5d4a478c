"""Will it finish: tokens per second and wall time of a training job, from a machine's figures.

The model, stated:
- Model FLOPs per token (PaLM appendix B; mosaicml/llm-foundry's MFU): 6 x N + 12 x L x q x s, N
  the parameters of every matmul a token passes through (mixture of experts: the active ones;
  the embedding is a lookup, lm_head a matmul), q the query width, s the sequence (attention
  counted non-causal). LoRA/QLoRA: the frozen matmuls need no weight gradient, 4 x N, plus
  6 x the adapters. Full recomputation runs the forward again: + 2 x N + 4 x L x q x s (the
  hardware FLOPs llm-foundry calls HFU); selective recomputation + 4 x L x q x s.
- A GPU does its share (tensor, pipeline, context parallelism split a token's FLOPs) at
  `achieved` = matmul TFLOP/s x achieved fraction: the share of its measured matmul rate that
  real training steps reach (norms, activations, optimizer, kernel launches, communication not
  hidden), itself taken from a measured training run.
- Data-parallel gradient traffic (all-reduce, or ZeRO/FSDP's reduce-scatter + all-gathers) runs
  at the all-reduce bus bandwidth and overlaps the backward pass: the step takes the longer of
  the two.
- Pipeline parallelism idles each stage while the pipeline fills and drains: with p stages and
  m micro-batches per step, 1F1B takes (m + p - 1)/m of the ideal time (the bubble is
  (p-1)/(m+p-1) of the step), and the interleaved schedule with v model chunks per stage
  1 + (p-1)/(v m) (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
  Clusters Using Megatron-LM", sections 2.2.1-2.2.2).
"""

import argparse
import math
import statistics
from dataclasses import dataclass

from rigcheck.memory.architecture import parameter_count, tensor_groups
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job, estimate
from rigcheck.number_text import plain_float, plain_int


@dataclass(frozen=True)
class Rates:
    """What one GPU of the machine achieves, and where each figure came from."""

    matmul_tflops: float  # dense matmul at the job's precision
    achieved_fraction: float  # of matmul_tflops, that a real training step reaches
    busbw_gbps: float | None = None  # all-reduce bus bandwidth; None: not known
    source: str = ""
    # The spread of the achieved fraction over the published runs it came from (None: given,
    # no spread known): the time is then an interval.
    fraction_low: float | None = None
    fraction_high: float | None = None

    def __post_init__(self) -> None:
        if self.matmul_tflops <= 0 or not 0 < self.achieved_fraction <= 1:
            raise ConfigError("matmul TFLOP/s must be > 0 and the achieved fraction in (0, 1]")

    def at(self, fraction: float) -> "Rates":
        """The same machine at another achieved fraction."""
        return Rates(self.matmul_tflops, fraction, self.busbw_gbps, self.source)


MATMUL_ROLES = ("linear", "expert", "router", "lm_head")


def matmul_params(job: Job) -> int:
    """Weights of every matmul one token passes through: the routed experts it goes to only,
    lm_head counted (also when tied); embedding lookups, norms and biases are not matmuls."""
    arch = job.arch
    groups = tensor_groups(arch)
    n = sum(g.total for g in groups if g.role in MATMUL_ROLES)
    idle = arch.moe_layers * (arch.experts - arch.experts_per_token)
    n -= idle * sum(g.numel for g in groups if g.role == "expert")
    return n + (arch.vocab * arch.hidden if arch.tied_embeddings else 0)


def attention_flops(job: Job) -> int:
    """Forward attention FLOPs per token: QK^T and AV, 2 x 2 x L x q x s (non-causal)."""
    return 4 * job.arch.layers * job.arch.q_width * job.seq


def model_flops_per_token(job: Job) -> int:
    """6N + 12 L q s: the model FLOPs of one trained token (MFU's numerator)."""
    return 6 * matmul_params(job) + 3 * attention_flops(job)


def hardware_flops_per_token(job: Job) -> int:
    """The FLOPs the GPUs actually run per token: frozen weights skip their weight gradient,
    recomputation repeats (part of) the forward."""
    n, attention = matmul_params(job), attention_flops(job)
    if job.method == "full":
        flops = 6 * n + 3 * attention
    else:
        adapters = estimate(job).trainable_params
        flops = 4 * n + 6 * adapters + 3 * attention
    if job.checkpointing == "full":
        flops += 2 * n + attention
    elif job.checkpointing == "selective":
        flops += attention
    return flops


def gradient_traffic_bytes(job: Job) -> int:
    """Bytes each GPU sends per step for data parallelism: a ring all-reduce moves 2(n-1)/n of
    the gradients, as do ZeRO-2/3's reduce-scatter plus parameter all-gather (ZeRO-3 gathers the
    parameters twice: forward and backward, 3(n-1)/n); bus bandwidth already carries the 2(n-1)/n
    (nccl-tests PERFORMANCE.md), so the bytes here are what divides by it."""
    if job.dp == 1:
        return 0
    result = estimate(job)
    grads = 2 * result.trainable_params // (job.tp * job.pp)  # 16-bit gradients
    return grads * 3 // 2 if job.zero == 3 else grads


def pipeline_stretch(pp: int, microbatches: int, chunks: int = 1) -> float:
    """How much longer a step takes than its compute alone, for the pipeline bubble: 1F1B
    (m + p - 1)/m, interleaved with v chunks per stage 1 + (p - 1)/(v m); 1 without a pipeline."""
    if microbatches < 1 or chunks < 1:
        raise ConfigError("--microbatches and --interleave must be >= 1")
    return 1 + (pp - 1) / (chunks * microbatches)


def step_seconds(job: Job, rates: Rates, microbatches: int = 1, chunks: int = 1) -> dict:
    """Seconds of one optimizer step: `microbatches` micro-batches per data-parallel rank (the
    pipeline's m; gradient accumulation without one), through the pipeline's bubble."""
    if job.arch is None or job.inference:
        raise ConfigError("a time estimate needs a training job on a model: give --model")
    tokens = job.batch * job.seq * microbatches  # per data-parallel rank
    flops = tokens * hardware_flops_per_token(job) / (job.tp * job.pp * job.cp)
    stretch = pipeline_stretch(job.pp, microbatches, chunks)
    compute = stretch * flops / (rates.matmul_tflops * 1e12 * rates.achieved_fraction)
    traffic = gradient_traffic_bytes(job)
    if traffic and rates.busbw_gbps is None:
        raise ConfigError("data parallelism needs the all-reduce bus bandwidth: give --busbw")
    comm = traffic / (rates.busbw_gbps * 1e9) if traffic else 0.0
    return {
        "compute_s": compute,
        "communication_s": comm,
        "step_s": max(compute, comm),
        "bubble_fraction": 1 - 1 / stretch,
    }


def time_to_train(
    job: Job, rates: Rates, tokens: int = 0, steps: int = 0, microbatches: int = 1, chunks: int = 1
) -> dict:
    """Tokens per second (whole job), steps and wall time for `tokens` or `steps` (JSON-ready);
    with a spread of the achieved fraction, the wall time as an interval (fastest, slowest)."""
    if (tokens > 0) == (steps > 0):
        raise ConfigError("give the job's length once: --tokens N or --steps N")
    step = step_seconds(job, rates, microbatches, chunks)
    per_step = job.batch * job.seq * job.dp * microbatches
    steps = steps or -(-tokens // per_step)
    tokens_per_s = per_step / step["step_s"]
    ends = (rates.fraction_high, rates.fraction_low)
    interval = [steps * step_seconds(job, rates.at(f), microbatches, chunks)["step_s"]
                for f in ends] if None not in ends else None  # fmt: skip
    return {
        **step,
        "tokens_per_step": per_step,
        "steps": steps,
        "tokens_per_s": tokens_per_s,
        "tokens_per_s_per_gpu": tokens_per_s / job.gpus,
        "wall_s": steps * step["step_s"],
        "wall_s_interval": interval,
        "model_flops_per_token": model_flops_per_token(job),
        "hardware_flops_per_token": hardware_flops_per_token(job),
        "mfu_of_matmul": tokens_per_s
        / job.gpus
        * model_flops_per_token(job)
        / (rates.matmul_tflops * 1e12),
        "rates": vars(rates),
    }


def total_params(job: Job) -> int:
    """The model's parameter count, for reports."""
    return parameter_count(job.arch)


MATMUL_FIGURE = {"bf16": "matmul_bf16_tflops", "fp16": "matmul_fp16_tflops"}


def matmul_figure(precision: str) -> str:
    """The spec figure of the matmul rate a precision runs at (16-bit mixed: the 16-bit one)."""
    return MATMUL_FIGURE.get(precision.removesuffix("-mixed"), "matmul_fp32_tflops")


def achievable(figures: dict, key: str) -> float | None:
    """A spec figure's achievable value, or None where the spec has none."""
    tier = (figures.get(key) or {}).get("achievable") or {}
    return tier.get("value")


def implied_fraction(run, matmul_tflops: float) -> float:
    """The achieved fraction under which the step model reproduces a published run
    (train_rates.Published): its compute rate per GPU, stretched by its pipeline's bubble."""
    job = run.job
    stretch = pipeline_stretch(job.pp, run.microbatches)
    achieved = run.tokens_per_s_per_gpu * hardware_flops_per_token(job) * stretch
    return achieved / (matmul_tflops * 1e12)


def class_fraction(device: str, matmul_tflops: float) -> tuple[float, float, float] | None:
    """(lowest, median, highest) achieved fraction over the class's calibration runs, or None."""
    from rigcheck.memory.train_rates import CALIBRATION

    runs = CALIBRATION.get(device)
    if not runs:
        return None
    fractions = sorted(implied_fraction(run, matmul_tflops) for run in runs)
    return fractions[0], statistics.median(fractions), fractions[-1]


def class_rates(device: str, figures: dict, precision: str, fraction: float | None) -> Rates:
    """Rates of a device class from its spec's achievable figures; the achieved fraction (and
    its spread) from the class's published calibration runs unless given."""
    key = matmul_figure(precision)
    matmul = achievable(figures, key)
    if matmul is None:
        raise ConfigError(f"the {device} spec has no achievable {key}: give --matmul-tflops")
    source = f"{device} spec: achievable {key} {matmul}"
    busbw = achievable(figures, "allreduce_busbw_gbps")
    if fraction is not None:
        return Rates(matmul, min(fraction, 1.0), busbw, source)
    spread = class_fraction(device, matmul)
    if spread is None:
        raise ConfigError(
            f"no published training run gives {device}'s achieved fraction: give "
            "--achieved-fraction F (the share of the matmul rate a training step reaches)"
        )
    from rigcheck.memory.train_rates import CALIBRATION

    low, median, high = spread
    names = ", ".join(run.name for run in CALIBRATION[device])
    source += (
        f"; achieved fraction {median:.3f} (median; {low:.3f}-{high:.3f}) of "
        f"{len(CALIBRATION[device])} published runs: {names} (train_rates.py)"
    )
    return Rates(matmul, median, busbw, source, low, high)


def rates_from_args(args, precision: str) -> Rates:
    """Measured figures given on the command line, else the --device class's spec figures."""
    if args.matmul_tflops is not None:
        if args.achieved_fraction is None:
            raise ConfigError("--matmul-tflops needs --achieved-fraction (measured on a real step)")
        source = f"given: {_given(args)}"
        return Rates(args.matmul_tflops, args.achieved_fraction, args.busbw, source)
    if args.device is None:
        raise ConfigError("a time estimate needs --device CLASS or --matmul-tflops")
    from rigcheck.spec import load_spec

    rates = class_rates(
        args.device, load_spec(args.device).figures, precision, args.achieved_fraction
    )
    busbw = rates.busbw_gbps if args.busbw is None else args.busbw
    given = f"; given: {_given(args)}" if _given(args) else ""
    return Rates(
        rates.matmul_tflops, rates.achieved_fraction, busbw, rates.source + given,
        rates.fraction_low, rates.fraction_high,
    )  # fmt: skip


def _given(args) -> str:
    """The rate options given on the command line, as given: the report names what it used."""
    options = (
        ("--matmul-tflops", args.matmul_tflops),
        ("--achieved-fraction", args.achieved_fraction),
        ("--busbw", args.busbw),
    )
    return ", ".join(f"{name} {value:g}" for name, value in options if value is not None)


def _positive(what: str, most: float = math.inf, least: float = 0.0):
    """An argparse type: a finite number above 0 (at least `least`, at most `most`), else a
    usage error. float() alone took 'inf' and 0 (a traceback, an option silently ignored) and
    1.5 as a fraction (clamped to 1 without a word); --tokens 0.5 became 0 tokens, and then
    "give the job's length once"."""

    def parse(text: str) -> float:
        try:
            value = plain_float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and max(0, least) <= value <= most and value > 0):
            low = f"of at least {least:g}" if least else "above 0"
            bound = f" and at most {most:g}" if math.isfinite(most) else ""
            raise argparse.ArgumentTypeError(f"{text!r}: {what} is a number {low}{bound}")
        return value

    parse.__name__ = what  # argparse names the type in its messages
    return parse


def _count(what: str):
    """An argparse type: a whole number above 0, else a usage error naming `what`."""

    def parse(text: str) -> int:
        try:
            value = plain_int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{text!r}: {what} are a whole number above 0")
        return value

    return parse


_positive_int = _count("the steps")


def add_time_arguments(parser) -> None:
    """The options of the time estimate (`rigcheck fit ... --tokens N`)."""
    group = parser.add_argument_group("will it finish (training)")
    length = group.add_mutually_exclusive_group()
    length.add_argument(
        "--tokens", type=_positive("tokens", least=1), help="tokens to train on, e.g. 2e9"
    )
    length.add_argument("--steps", type=_positive_int, help="optimizer steps to run")
    group.add_argument(
        "--matmul-tflops", type=_positive("the matmul rate"), metavar="X",
        help="this machine's measured matmul TFLOP/s per GPU (default: the --device spec's)",
    )  # fmt: skip
    group.add_argument(
        "--achieved-fraction", type=_positive("the achieved fraction", most=1.0), metavar="F",
        help="share of the matmul rate a training step reaches (default: from a published run)",
    )  # fmt: skip
    group.add_argument("--busbw", type=_positive("the bus bandwidth"), metavar="GBPS",
                       help="all-reduce bus bandwidth GB/s")  # fmt: skip
    group.add_argument(
        "--microbatches", type=_count("the micro-batches"), default=1, metavar="M",
        help="micro-batches per step and data-parallel rank (the pipeline's m; default 1)",
    )  # fmt: skip
    group.add_argument(
        "--interleave", type=_count("the model chunks per stage"), default=1, metavar="V",
        help="model chunks per pipeline stage (Megatron's interleaved 1F1B; default 1)",
    )  # fmt: skip
