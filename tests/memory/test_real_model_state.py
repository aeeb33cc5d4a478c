"""Real tensors on CPU: build small models, take real optimizer steps, sum the bytes of the actual
parameter, gradient and optimizer-state tensors; the model must agree exactly.

torch's scalar `step` tensors (one float32 per parameter tensor for Adam, AdamW and Adafactor,
kept on the host unless capturable or fused) are summed apart and checked against
step_tensor_bytes(), not hidden in the optimizer figure.
"""

import pytest

from rigcheck.memory.architecture import Architecture, parameter_count, tensor_groups
from rigcheck.memory.model_state import trainable_state
from rigcheck.memory.optimizers import optimizer_state_bytes, step_tensor_bytes
from rigcheck.memory.precision import PRECISIONS

torch = pytest.importorskip("torch")
from .torch_models import Decoder, next_token_loss  # noqa: E402  (needs torch)

ARCHS = {
    "llama-like-gqa": Architecture(
        vocab=97, hidden=64, layers=2, heads=4, kv_heads=2, mlp_width=172
    ),
    "gpt2-like": Architecture(
        vocab=101, hidden=48, layers=3, heads=4, kv_heads=4, mlp_width=192, gated_mlp=False,
        tied_embeddings=True, norm="layer", bias="all", positions=32, fused_qkv=True, dropout=True,
    ),
    "qwen-like": Architecture(
        vocab=150, hidden=96, layers=2, heads=6, kv_heads=2, mlp_width=256, tied_embeddings=True,
        bias="qkv",
    ),
    "wide-mqa": Architecture(vocab=64, hidden=128, layers=1, heads=2, kv_heads=1, mlp_width=512),
}  # fmt: skip
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
OPTIMIZERS = {
    "adam": lambda ps: torch.optim.Adam(ps, lr=1e-3),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-3),
    "sgd": lambda ps: torch.optim.SGD(ps, lr=1e-3),
    "sgd-momentum": lambda ps: torch.optim.SGD(ps, lr=1e-3, momentum=0.9),
    "adafactor": lambda ps: torch.optim.Adafactor(ps, lr=1e-3),
}


def state_bytes(optimizer, *, step: bool) -> int:
    """Bytes of the optimizer's state tensors: the `step` scalars, or everything else."""
    return sum(
        v.nbytes
        for state in optimizer.state.values()
        for k, v in state.items()
        if torch.is_tensor(v) and (k == "step") == step
    )


def train(model, optimizer, vocab: int, steps: int = 2) -> None:
    for _ in range(steps):  # a second step shows the state does not grow after the first
        optimizer.zero_grad(set_to_none=False)
        next_token_loss(model, vocab).backward()
        optimizer.step()


@pytest.mark.parametrize("arch_name", sorted(ARCHS))
def test_real_model_has_the_counted_parameters(arch_name: str) -> None:
    arch = ARCHS[arch_name]
    model = Decoder(arch)
    assert sum(p.numel() for p in model.parameters()) == parameter_count(arch)
    assert sorted(tuple(p.shape) for p in model.parameters()) == sorted(
        g.shape for g in tensor_groups(arch) for _ in range(g.count)
    )


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("prec", sorted(DTYPES))
@pytest.mark.parametrize("arch_name", sorted(ARCHS))
def test_weights_grads_and_state_agree_exactly(arch_name: str, prec: str, opt_name: str) -> None:
    torch.manual_seed(0)
    arch = ARCHS[arch_name]
    model = Decoder(arch, DTYPES[prec]).train()
    optimizer = OPTIMIZERS[opt_name](model.parameters())
    train(model, optimizer, arch.vocab)
    groups = tensor_groups(arch)
    want = trainable_state(groups, PRECISIONS[prec], opt_name)
    params = list(model.parameters())
    assert sum(p.nbytes for p in params) == want.weights_bytes
    assert sum(p.grad.nbytes for p in params) == want.grads_bytes
    assert want.master_bytes == 0
    assert state_bytes(optimizer, step=False) == want.optimizer_bytes
    assert state_bytes(optimizer, step=True) == step_tensor_bytes(groups, opt_name)


@pytest.mark.parametrize("opt_name", ["adam", "adamw", "sgd-momentum"])
@pytest.mark.parametrize("arch_name", sorted(ARCHS))
def test_mixed_precision_layout_agrees_exactly(arch_name: str, opt_name: str) -> None:
    """bf16-mixed as ZeRO/Megatron lay it out: bf16 model and grads, the optimizer stepping fp32
    master copies; 16 B/param for Adam."""
    torch.manual_seed(0)
    arch = ARCHS[arch_name]
    model = Decoder(arch, torch.bfloat16).train()
    masters = [p.detach().float().requires_grad_() for p in model.parameters()]
    optimizer = OPTIMIZERS[opt_name](masters)
    next_token_loss(model, arch.vocab).backward()
    for master, p in zip(masters, model.parameters(), strict=True):
        master.grad = p.grad.float()  # transient: ZeRO converts one bucket at a time
    optimizer.step()
    want = trainable_state(tensor_groups(arch), PRECISIONS["bf16-mixed"], opt_name)
    assert sum(p.nbytes for p in model.parameters()) == want.weights_bytes
    assert sum(p.grad.nbytes for p in model.parameters()) == want.grads_bytes
    assert sum(m.nbytes for m in masters) == want.master_bytes
    assert state_bytes(optimizer, step=False) == want.optimizer_bytes


@pytest.mark.parametrize("prec", sorted(DTYPES))
@pytest.mark.parametrize("arch_name", sorted(ARCHS))
def test_bitsandbytes_8bit_adamw_agrees_exactly(arch_name: str, prec: str) -> None:
    """Two uint8 states + fp32 absmax per 256-block; tensors under 4096 elements in fp32. The two
    quantization maps (qmap1, qmap2: 256 fp32 each) are shared by every tensor: counted once."""
    bnb = pytest.importorskip("bitsandbytes")
    torch.manual_seed(0)
    arch = ARCHS[arch_name]
    model = Decoder(arch, DTYPES[prec]).train()
    optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-3)
    train(model, optimizer, arch.vocab)
    by_storage = {}
    for state in optimizer.state.values():
        for key, value in state.items():
            if torch.is_tensor(value):
                by_storage[(key.startswith("qmap"), value.data_ptr())] = value.nbytes
    qmaps = sum(n for (is_qmap, _), n in by_storage.items() if is_qmap)
    states = sum(n for (is_qmap, _), n in by_storage.items() if not is_qmap)
    assert states == optimizer_state_bytes(tensor_groups(arch), "adamw-8bit", 0)
    assert qmaps in (0, 2 * 256 * 4)  # none when every tensor is under 4096 elements
