"""The Trainer and Lightning callbacks write the step log; importing rigcheck imports neither."""

import ast
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


def test_the_lightning_callbacks_hooks_are_lightnings_own_with_its_parameters():
    """Each hook is a method Lightning's Callback declares, with the same parameters (read from
    the installed lightning's source, not imported: importing it costs ~10 s of CPU). A hook
    misnamed or with a parameter Lightning does not pass would never run, or raise mid-fit."""
    spec = importlib.util.find_spec("lightning")
    if spec is None:
        pytest.skip("lightning is not installed (tox installs it)")
    source = Path(spec.origin).parent / "pytorch" / "callbacks" / "callback.py"
    declared = {
        node.name: [a.arg for a in node.args.args]
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("on_")
    }
    with pytest.MonkeyPatch.context() as patch:
        stand_in(patch, "lightning.pytorch", "Callback")
        ours = type(lightning_callback("unused"))
    hooks = {n: f for n, f in vars(ours).items() if n.startswith("on_")}
    assert len(hooks) == 5
    for name, function in hooks.items():
        params = list(function.__code__.co_varnames[: function.__code__.co_argcount])
        assert declared.get(name) == params, (name, params, declared.get(name))


def test_the_lightning_callback_times_the_forward_pass(tmp_path, monkeypatch):
    """A stand-in base class (importing lightning costs ~10 s of CPU), its hooks called as
    Lightning 2.x calls them; the test above holds their parameters to Lightning's own source.
    A real `Trainer.fit` with this callback (lightning 2.6.6, CPU, 3 batches) wrote 3 steps."""
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
