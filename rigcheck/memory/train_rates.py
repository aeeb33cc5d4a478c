"""Published training throughput, for the achieved fraction of a class and for checking estimates.

Each run is a job rigcheck can describe and the tokens/s per GPU it reached. The achieved
fraction a run implies is what rigcheck's step model needs to reproduce it: tokens/s per GPU x
hardware FLOPs per token x the pipeline's stretch / the class's achievable bf16 matmul rate.
Per class, the CALIBRATION runs give the fraction (their median) and its spread (lowest to
highest): the time estimate is an interval. The other runs are held out: the estimate is checked
against them (tests/memory/test_time_to_train.py), never tuned on them.

Sources: mosaicml/llm-foundry scripts/train/benchmarking/README.md (commit 061f2c7c), MPT models
with FSDP FULL_SHARD in bf16 on 8 GPUs; Narayanan et al. 2021 ("Efficient Large-Scale Language
Model Training on GPU Clusters Using Megatron-LM", arXiv:2104.04473) Table 2, GPT 175B and 530B
with tensor x pipeline parallelism on A100s (as cli99/llm-analysis examples/megatron-lm/
run_train.sh restates it); Smith et al. 2022 (MT-NLG 530B) section 2.4.

MPT shapes (llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml): GPT-style blocks with a 4x
non-gated MLP, tied embeddings, vocabulary 50368; the parameter counts below match the table's
NumParams column within 0.1% (the table also counts norm biases and a position table).
"""

from dataclasses import dataclass, field

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.estimate import Job

SOURCE = "mosaicml/llm-foundry scripts/train/benchmarking/README.md (commit 061f2c7c)"
# name: (d_model, n_layers, n_heads)
MPT = {
    "1b": (2048, 24, 16), "3b": (2560, 32, 20), "7b": (4096, 32, 32),
    "13b": (5120, 40, 40), "30b": (7168, 48, 64),
}  # fmt: skip


@dataclass(frozen=True)
class Run:
    """One row of the table: 8 GPUs of a class, FSDP FULL_SHARD, amp_bf16."""

    device: str
    model: str
    seq: int
    micro_batch: int
    checkpointing: bool
    tokens_per_s_per_gpu: float

    def job(self) -> Job:
        d, layers, heads = MPT[self.model]
        arch = Architecture(
            vocab=50368, hidden=d, layers=layers, heads=heads, kv_heads=heads, mlp_width=4 * d,
            gated_mlp=False, tied_embeddings=True,
        )  # fmt: skip
        recompute = "full" if self.checkpointing else "none"
        return Job(
            arch=arch, batch=self.micro_batch, seq=self.seq, gpus=8, zero=3, framework="fsdp",
            checkpointing=recompute, precision="bf16-mixed",
        )  # fmt: skip

    @property
    def where(self) -> str:
        ckpt = "with" if self.checkpointing else "no"
        return f"{SOURCE}: {self.device} MPT-{self.model} seq {self.seq}, {ckpt} checkpointing"

    def published(self) -> "Published":
        name = f"MPT-{self.model} seq {self.seq}" + (" ckpt" if self.checkpointing else "")
        return Published(self.device, name, self.job(), 1, self.tokens_per_s_per_gpu, self.where)


@dataclass(frozen=True)
class Published:
    """A published run: the job, micro-batches per pipeline and step, and its tokens/s per GPU."""

    device: str
    name: str
    job: Job = field(repr=False)
    microbatches: int
    tokens_per_s_per_gpu: float
    where: str = field(repr=False)


MPT_7B = {  # the 7B at sequence 2048 without and at 4096 with checkpointing: calibration
    "a100": (Run("a100", "7b", 2048, 6, False, 4641), Run("a100", "7b", 4096, 16, True, 3684)),
    "h100": (Run("h100", "7b", 2048, 6, False, 10643), Run("h100", "7b", 4096, 16, True, 8611)),
}
# MPT rows held out (8 GPUs, the table's rows as printed).
HELD_OUT = (
    Run("a100", "13b", 2048, 2, False, 2262),
    Run("a100", "3b", 2048, 10, False, 10811),
    Run("a100", "1b", 2048, 14, False, 20513),
    Run("a100", "3b", 8192, 3, False, 7695),
    Run("a100", "30b", 2048, 3, True, 916),
    Run("h100", "13b", 2048, 2, False, 4792),
    Run("h100", "3b", 4096, 5, False, 20964),
    Run("h100", "1b", 2048, 14, False, 45455),
    Run("h100", "30b", 2048, 3, True, 2002),
)


# Held out at scale: Megatron-Turing NLG 530B (Smith et al. 2022, arXiv:2201.11990, section 2.4,
# as quoted in cli99/llm-analysis examples/megatron-turing-nlg/README.md): 105 layers, hidden
# 20480, 128 heads, vocabulary 50272, 2048 tokens, global batch 1920 sequences, tensor 8 x
# pipeline 35 on DGX A100 nodes (8 GPUs each), micro-batch 1 with activation checkpointing.
# (nodes, seconds per iteration, TFLOP/s per GPU the paper reports)
MT_NLG_SOURCE = "Smith et al. 2022 (arXiv:2201.11990) sec. 2.4, via cli99/llm-analysis"
MT_NLG = ((280, 60.1, 126), (350, 50.2, 121), (420, 44.4, 113))


def _gpt(layers: int, hidden: int, heads: int, vocab: int) -> Architecture:
    """A GPT-3-style model as Megatron trains it: 4h GELU MLP, tied embeddings, layer norms,
    biases everywhere, learned positions of 2048."""
    return Architecture(
        vocab=vocab, hidden=hidden, layers=layers, heads=heads, kv_heads=heads,
        mlp_width=4 * hidden, gated_mlp=False, tied_embeddings=True, norm="layer", bias="all",
        positions=2048,
    )  # fmt: skip


def _megatron_job(arch: Architecture, gpus: int, pp: int, sequences: int) -> tuple[Job, int]:
    """Tensor 8 x pipeline pp, micro-batch 1 with full recomputation, the distributed optimizer;
    and the micro-batches each pipeline runs per step."""
    job = Job(
        arch=arch, seq=2048, batch=1, gpus=gpus, tp=8, pp=pp, checkpointing="full",
        framework="megatron", zero=1,
    )  # fmt: skip
    return job, sequences // job.dp


def mt_nlg_job(nodes: int) -> tuple[Job, int]:
    """MT-NLG 530B's job on `nodes` DGX A100s, and its micro-batches per pipeline per step."""
    return _megatron_job(_gpt(105, 20480, 128, 50272), 8 * nodes, 35, 1920)


def mt_nlg_run(nodes: int, seconds: float) -> Published:
    job, microbatches = mt_nlg_job(nodes)
    tokens_per_s = 1920 * 2048 / seconds / job.gpus
    where = f"{MT_NLG_SOURCE}: {nodes} DGX A100, {seconds} s per iteration"
    return Published(
        "a100", f"MT-NLG 530B {8 * nodes} GPUs", job, microbatches, tokens_per_s, where
    )


# Narayanan et al. 2021 Table 2 (PTD parallelism, batch 1536 / 2240 sequences of 2048 tokens,
# vocabulary 51200): (layers, hidden, heads, pipeline, sequences) per model, and per run the GPUs
# and the TFLOP/s per GPU the paper reports by its formula 96 B s l h^2 (1 + s/6h + V/16lh)
# per iteration (full recomputation counted).
MEGATRON_SOURCE = "Narayanan et al. 2021 (arXiv:2104.04473) Table 2, via cli99/llm-analysis"
MEGATRON = {"175B": (96, 12288, 96, 12, 1536), "530B": (105, 20480, 128, 35, 2240)}
MEGATRON_RUNS = (("175B", 384, 153), ("175B", 768, 149), ("175B", 1536, 141),
                 ("530B", 560, 171), ("530B", 1120, 167), ("530B", 2240, 159))  # fmt: skip


def megatron_run(model: str, gpus: int, tflops: float) -> Published:
    layers, hidden, heads, pp, sequences = MEGATRON[model]
    job, microbatches = _megatron_job(_gpt(layers, hidden, heads, 51200), gpus, pp, sequences)
    s, v = 2048, 51200
    flops_per_token = 96 * layers * hidden**2 * (1 + s / (6 * hidden) + v / (16 * layers * hidden))
    where = f"{MEGATRON_SOURCE}: GPT {model} on {gpus} A100, {tflops} TFLOP/s per GPU"
    name = f"Megatron GPT {model} {gpus} GPUs"
    return Published("a100", name, job, microbatches, tflops * 1e12 / flops_per_token, where)


# Per class, the runs that set its achieved fraction and spread: for the A100 one of each
# source at a middle scale, for the H100 (only MPT published) the two 7B rows.
CALIBRATION = {
    "a100": (
        *(run.published() for run in MPT_7B["a100"]),
        megatron_run("175B", 768, 149),
        megatron_run("530B", 1120, 167),
        mt_nlg_run(350, 50.2),
    ),
    "h100": tuple(run.published() for run in MPT_7B["h100"]),
}
# Everything else published: never used to calibrate, only to check.
HELD_OUT_RUNS = (
    *(run.published() for run in HELD_OUT),
    *(megatron_run(*row) for row in MEGATRON_RUNS if row[1] not in (768, 1120)),
    mt_nlg_run(280, 60.1),
    mt_nlg_run(420, 44.4),
)
