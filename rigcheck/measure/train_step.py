"""A small transformer training step: tokens/s, and the model FLOPs utilisation it implies.

What the user will actually run: a GPT-style decoder (8 layers, d_model 1024, 16 heads,
sequence 1024, batch 8, vocabulary 32768, ~134M matmul parameters) in mixed precision
(autocast bf16, or fp16 with a GradScaler where the class has no native bf16), causal SDPA,
fused AdamW on CUDA/ROCm. One call = forward, backward and optimizer step.

Model FLOPs per token (PaLM, appendix B): 6*N + 12*L*d*s, N the parameters of every matmul
(the token and position embeddings are lookups and not counted), attention counted as
non-causal. MFU = tokens/s * FLOPs per token / the class's datasheet peak at that precision.
"""

from __future__ import annotations

import math

from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.measurement import Measurement, rates
from rigcheck.measure.timing import Plan, Timer

VOCAB, D_MODEL, LAYERS, HEADS, SEQ, BATCH = 32768, 1024, 8, 16, 1024, 8
PLAN = Plan(rounds=8, warmup_rounds=2, round_s=0.05)


def matmul_params() -> int:
    return LAYERS * 12 * D_MODEL**2 + D_MODEL * VOCAB


def flops_per_token() -> float:
    return 6 * matmul_params() + 12 * LAYERS * D_MODEL * SEQ


def mfu(tokens_per_s: float, peak_tflops: float) -> float:
    return tokens_per_s * flops_per_token() / (peak_tflops * 1e12)


def train_step_tokens_per_s(device: MeasuredDevice, timer: Timer, half: str) -> Measurement:
    import torch

    torch.manual_seed(0)
    model = _gpt(torch).to(timer.device)
    fused = timer.device.type == "cuda"
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused)
    scaler = torch.amp.GradScaler(timer.device.type, enabled=half == "fp16")
    dtype = torch.bfloat16 if half == "bf16" else torch.float16
    tokens = torch.randint(VOCAB, (BATCH, SEQ + 1), device=timer.device)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    last = {}

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(timer.device.type, dtype=dtype):
            logits = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), targets.flatten())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        last["loss"] = loss.detach()

    timing = timer.time(step, PLAN, headline=True)
    loss = last["loss"].item()
    if not math.isfinite(loss):
        raise AssertionError(f"the training step's loss is {loss}: the numbers are broken")
    median, best = rates(BATCH * SEQ, timing.per_call_s)
    return Measurement(
        key="train_step_tokens_per_s",
        device=device.label,
        value=median,
        best=best,
        unit="tokens/s",
        definition=f"batch x seq ({BATCH}x{SEQ}) / median time of one training step of a "
        f"{LAYERS}-layer d={D_MODEL} GPT, autocast {half}, AdamW",
        samples_s=timing.per_call_s,
        details={
            "precision": half,
            "matmul_params": matmul_params(),
            "flops_per_token": flops_per_token(),
            "model_tflops": round(median * flops_per_token() / 1e12, 3),
            "calls_per_round": timing.calls_per_round,
            "final_loss": loss,
            "stored_by_pytest_benchmark": timing.stored,
        },
    )


def _gpt(torch):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
            self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL, bias=False)
            self.proj = nn.Linear(D_MODEL, D_MODEL, bias=False)
            self.fc1 = nn.Linear(D_MODEL, 4 * D_MODEL, bias=False)
            self.fc2 = nn.Linear(4 * D_MODEL, D_MODEL, bias=False)

        def forward(self, x):
            b, s, d = x.shape
            qkv = self.qkv(self.ln1(x)).view(b, s, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
            attn = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
            x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(VOCAB, D_MODEL), nn.Embedding(SEQ, D_MODEL)
            self.blocks = nn.Sequential(*(Block() for _ in range(LAYERS)))
            self.ln = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

        def forward(self, idx):
            positions = torch.arange(idx.shape[1], device=idx.device)
            return self.head(self.ln(self.blocks(self.tok(idx) + self.pos(positions))))

    return GPT()
