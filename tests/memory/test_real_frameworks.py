"""Two frameworks' conventions measured on CPU by tensor accounting, against the model (5%).

- hf-trainer: an fp32 model, a forward under torch.autocast(bf16), backward and an AdamW step.
  The 16-bit copies autocast makes are counted as they are made: a TorchDispatchMode sees every
  aten._to_copy of a parameter (autocast's cache makes one per weight per forward).
- fsdp: two ranks on gloo, each decoder layer and the root fully_shard-ed (FSDP2), bf16
  MixedPrecisionPolicy, one AdamW step; each rank sums its local shards of the parameters, the
  gradients and the optimizer state. FSDP2 pads each dim-0 shard: within the tolerance.
"""

import os
import socket

import pytest

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.estimate import Job, training_layout

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from .torch_models import Decoder, next_token_loss  # noqa: E402

TOLERANCE = 0.05
ARCHS = {
    "llama-like": Architecture(vocab=97, hidden=64, layers=2, heads=4, kv_heads=2, mlp_width=172),
    "qwen-like-tied-bias": Architecture(
        vocab=150, hidden=96, layers=2, heads=6, kv_heads=2, mlp_width=256,
        tied_embeddings=True, bias="qkv",
    ),
}  # fmt: skip


def close(measured: int, modelled: int) -> bool:
    return abs(measured - modelled) <= TOLERANCE * max(modelled, 1)


class ParamCasts(TorchDispatchMode):
    """Bytes of the 16-bit copies made of parameters (by storage), one per parameter."""

    def __init__(self, params) -> None:
        super().__init__()
        self.params = {p.data_ptr() for p in params}
        self.copies: dict[int, int] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        source = args[0] if args else None
        is_copy = func is torch.ops.aten._to_copy.default and out.dtype == torch.bfloat16
        if is_copy and source.data_ptr() in self.params:
            self.copies[source.data_ptr()] = out.nbytes
        return out


def optimizer_bytes(optimizer) -> int:
    return sum(
        (v.to_local() if hasattr(v, "to_local") else v).nbytes
        for state in optimizer.state.values()
        for k, v in state.items()
        if torch.is_tensor(v) and k != "step"
    )


@pytest.mark.parametrize("name", sorted(ARCHS))
def test_autocast_adamw_step_matches_hf_trainer(name: str) -> None:
    arch = ARCHS[name]
    torch.manual_seed(0)
    model = Decoder(arch, torch.float32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    casts = ParamCasts(model.parameters())
    with torch.autocast("cpu", dtype=torch.bfloat16), casts:
        loss = next_token_loss(model, arch.vocab)
    loss.backward()
    optimizer.step()
    params = list(model.parameters())
    job = Job(arch=arch, framework="hf-trainer", precision="bf16-mixed", optimizer="adamw")
    layout = training_layout(job)
    assert close(sum(p.nbytes for p in params), layout.state.weights_bytes)
    assert close(sum(p.grad.nbytes for p in params), layout.state.grads_bytes)
    assert close(optimizer_bytes(optimizer), layout.state.optimizer_bytes)
    assert close(sum(casts.copies.values()), layout.working_bytes)
    assert layout.state.master_bytes == 0  # the fp32 weights are what AdamW steps


def _fsdp_rank(rank: int, world: int, port: int, name: str, queue) -> None:
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world)
    try:
        arch = ARCHS[name]
        torch.manual_seed(0)
        model = Decoder(arch, torch.float32)
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for layer in model.layers:
            fully_shard(layer, mp_policy=policy)
        fully_shard(model, mp_policy=policy)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        next_token_loss(model, arch.vocab).backward()
        optimizer.step()
        params = list(model.parameters())
        queue.put(
            (
                rank,
                sum(p.to_local().nbytes for p in params),
                sum(p.grad.to_local().nbytes for p in params),
                optimizer_bytes(optimizer),
            )
        )
    finally:
        torch.distributed.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_rank_fsdp_step_matches_the_fsdp_layout() -> None:
    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not built in this torch")
    mp = torch.multiprocessing.get_context("spawn")
    queue = mp.SimpleQueue()
    name = "llama-like"
    ctx = torch.multiprocessing.start_processes(
        _fsdp_rank, args=(2, _free_port(), name, queue), nprocs=2, join=False,
        start_method="spawn",
    )  # fmt: skip
    while not ctx.join(timeout=60):
        pass
    measured = sorted(queue.get() for _ in range(2))
    job = Job(arch=ARCHS[name], framework="fsdp", zero=3, gpus=2, precision="bf16-mixed")
    state = training_layout(job).state
    for _, weights, grads, opt in measured:
        assert close(weights, state.weights_bytes)
        assert close(grads, state.grads_bytes)
        assert close(opt, state.optimizer_bytes)
    # the two shards hold the whole fp32 model exactly once
    whole = Job(arch=ARCHS[name], framework="fsdp", zero=3, gpus=1, precision="bf16-mixed")
    assert sum(m[1] for m in measured) == training_layout(whole).state.weights_bytes
