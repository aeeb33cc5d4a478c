"""Published training throughput, for the achieved fraction of a class and for checking estimates.

mosaicml/llm-foundry scripts/train/benchmarking/README.md (commit 061f2c7c) tabulates MPT models
trained with FSDP FULL_SHARD in bf16 on 8 GPUs: throughput in tokens/s per GPU, per model, sequence
length, micro-batch and activation checkpointing. One run per class (7B at sequence 2048, no
checkpointing) gives that class's achieved fraction: tokens/s x hardware FLOPs per token / the
class's achievable bf16 matmul rate (its spec figure). The other runs are held out: the estimate
is checked against them (tests/memory/test_time_to_train.py).

MPT shapes (llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml): GPT-style blocks with a 4x
non-gated MLP, tied embeddings, vocabulary 50368; the parameter counts below match the table's
NumParams column within 0.1% (the table also counts norm biases and a position table).
"""

from dataclasses import dataclass

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


# The reference run of each class: it sets the class's achieved fraction.
REFERENCE = {
    "a100": Run("a100", "7b", 2048, 6, False, 4641),
    "h100": Run("h100", "7b", 2048, 6, False, 10643),
}
# Held-out runs the estimate is checked against (8 GPUs, the table's rows as printed).
HELD_OUT = (
    Run("a100", "13b", 2048, 2, False, 2262),
    Run("a100", "3b", 2048, 10, False, 10811),
    Run("a100", "1b", 2048, 14, False, 20513),
    Run("a100", "3b", 8192, 3, False, 7695),
    Run("a100", "7b", 4096, 16, True, 3684),
    Run("a100", "30b", 2048, 3, True, 916),
    Run("h100", "13b", 2048, 2, False, 4792),
    Run("h100", "3b", 4096, 5, False, 20964),
    Run("h100", "1b", 2048, 14, False, 45455),
    Run("h100", "7b", 4096, 16, True, 8611),
    Run("h100", "30b", 2048, 3, True, 2002),
)


# Held out at scale: Megatron-Turing NLG 530B (Smith et al. 2022, arXiv:2201.11990, section 2.4,
# as quoted in cli99/llm-analysis examples/megatron-turing-nlg/README.md): 105 layers, hidden
# 20480, 128 heads, vocabulary 50272, 2048 tokens, global batch 1920 sequences, tensor 8 x
# pipeline 35 on DGX A100 nodes (8 GPUs each), micro-batch 1 with activation checkpointing.
# (nodes, seconds per iteration, TFLOP/s per GPU the paper reports)
MT_NLG_SOURCE = "Smith et al. 2022 (arXiv:2201.11990) sec. 2.4, via cli99/llm-analysis"
MT_NLG = ((280, 60.1, 126), (350, 50.2, 121), (420, 44.4, 113))


def mt_nlg_job(nodes: int) -> tuple[Job, int]:
    """MT-NLG 530B's job on `nodes` DGX A100s, and its micro-batches per pipeline per step."""
    arch = Architecture(
        vocab=50272, hidden=20480, layers=105, heads=128, kv_heads=128, mlp_width=81920,
        gated_mlp=False, tied_embeddings=True, norm="layer", bias="all", positions=2048,
    )  # fmt: skip
    gpus = 8 * nodes
    job = Job(
        arch=arch, seq=2048, batch=1, gpus=gpus, tp=8, pp=35, checkpointing="full",
        framework="megatron", zero=1,
    )  # fmt: skip
    return job, 1920 // job.dp
