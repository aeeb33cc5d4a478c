"""The Trainer and Lightning callbacks write the step log; importing rigcheck imports neither."""

import importlib.util
import re
import subprocess
import sys
import types
from pathlib import Path
from types import SimpleNamespace

import pytest

from rigcheck.blame.callbacks import lightning_callback, trainer_callback
from rigcheck.blame.step_reader import read_step_logs


def test_importing_rigcheck_blame_imports_no_training_library():
    code = ("import sys, rigcheck.blame.callbacks, rigcheck.blame.cli; "
            "print(sorted({'torch', 'transformers', 'lightning'} & set(sys.modules)))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def stand_in(monkeypatch, module, name):
    """A stand-in package holding an empty base class: importing transformers costs ~13 s of
    CPU, more than this whole area may add to CI."""
    parts = module.split(".")
    for i in range(len(parts)):
        monkeypatch.setitem(sys.modules, ".".join(parts[: i + 1]), types.ModuleType(parts[i]))
    setattr(sys.modules[module], name, type(name, (), {}))


def test_the_trainer_callbacks_hooks_are_transformers_events():
    """Each hook is an event TrainerCallback declares (read from the installed source, not
    imported): a misnamed hook would never be called."""
    spec = importlib.util.find_spec("transformers")
    if spec is None:
        pytest.skip("transformers is not installed")
    source = (Path(spec.origin).parent / "trainer_callback.py").read_text()
    declared = set(re.findall(r"^    def (on_\w+)\(self, args", source, re.MULTILINE))
    hooks = {n for n in vars(type(trainer_callback_class())) if n.startswith("on_")}
    assert hooks and hooks <= declared, hooks - declared


def trainer_callback_class():
    with pytest.MonkeyPatch.context() as patch:
        stand_in(patch, "transformers", "TrainerCallback")
        return trainer_callback("unused")


def test_the_trainer_callback_writes_the_step_log(tmp_path, monkeypatch):
    stand_in(monkeypatch, "transformers", "TrainerCallback")
    callback = trainer_callback(tmp_path)
    args = SimpleNamespace(process_index=2)
    callback.on_train_begin(args, None, None)
    for _ in range(3):
        callback.on_pre_optimizer_step(args, None, None)
        callback.on_optimizer_step(args, None, None)
        callback.on_step_end(args, None, None)
    callback.on_train_end(args, None, None)
    ranks = read_step_logs(tmp_path / "steps")
    assert list(ranks) == [2] and len(ranks[2].times("compute_s")) == 3


def test_the_lightning_callback_times_the_forward_pass(tmp_path, monkeypatch):
    """Lightning is not in the self-test environment: a stand-in base class, its hooks called
    with Lightning 2.x's documented signatures (lightning.pytorch.callbacks.Callback)."""
    stand_in(monkeypatch, "lightning.pytorch", "Callback")
    callback = lightning_callback(tmp_path)
    trainer = SimpleNamespace(global_rank=1)
    callback.on_train_start(trainer, None)
    for batch_idx in range(4):
        callback.on_train_batch_start(trainer, None, None, batch_idx)
        callback.on_before_backward(trainer, None, None)
        callback.on_train_batch_end(trainer, None, None, None, batch_idx)
    callback.on_train_end(trainer, None)
    assert len(read_step_logs(tmp_path / "steps")[1].times("compute_s")) == 4
