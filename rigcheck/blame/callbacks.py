"""Step logs from Hugging Face's Trainer and from Lightning, as their callbacks. Each library is
imported only when its callback is asked for, so importing rigcheck imports neither.

What each can time as the rank's own work (compute_s), outside the gradient all-reduce:
- Trainer: the optimizer step (on_pre_optimizer_step to on_optimizer_step). Under DDP the
  all-reduce runs inside backward, so this is the only stretch free of it; with DeepSpeed or
  FSDP the step itself may communicate, and then the slow rank is found by its dumps instead.
- Lightning: the forward pass (on_train_batch_start to on_before_backward).
"""

from __future__ import annotations

import os
import time
from typing import Any

from rigcheck.blame.steplog import StepLog


def trainer_callback(job_dir: str | os.PathLike[str]) -> Any:
    """A transformers.TrainerCallback: `Trainer(..., callbacks=[trainer_callback(JOB_DIR)])`."""
    from transformers import TrainerCallback

    class StepLogCallback(TrainerCallback):
        log: StepLog | None = None
        _since: float | None = None

        def on_train_begin(self, args, state, control, **kwargs):
            self.log = StepLog(job_dir, rank=args.process_index)

        def on_pre_optimizer_step(self, args, state, control, **kwargs):
            self._since = time.monotonic()

        def on_optimizer_step(self, args, state, control, **kwargs):
            if self.log and self._since is not None:
                self.log.add_compute(time.monotonic() - self._since)

        def on_step_end(self, args, state, control, **kwargs):
            if self.log:
                self.log.step_end()

        def on_train_end(self, args, state, control, **kwargs):
            if self.log:
                self.log.close()

    return StepLogCallback()


def lightning_callback(job_dir: str | os.PathLike[str]) -> Any:
    """A Lightning Callback: `Trainer(callbacks=[lightning_callback(JOB_DIR)])` (lightning 2.x,
    or the older pytorch_lightning package)."""
    try:
        from lightning.pytorch import Callback
    except ImportError:
        from pytorch_lightning import Callback

    class StepLogCallback(Callback):
        log: StepLog | None = None
        _since: float | None = None

        def on_train_start(self, trainer, pl_module):
            self.log = StepLog(job_dir, rank=trainer.global_rank)

        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            self._since = time.monotonic()

        def on_before_backward(self, trainer, pl_module, loss):
            if self.log and self._since is not None:
                self.log.add_compute(time.monotonic() - self._since)

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if self.log:
                self.log.step_end()

        def on_train_end(self, trainer, pl_module):
            if self.log:
                self.log.close()

    return StepLogCallback()
