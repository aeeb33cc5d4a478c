"""The certificate on disk while a run goes: complete and valid after every finished check (a
run killed outright leaves it, marked partial), at a cost per check that does not grow with
the run.

certificate.json is a symbolic link to one of two copies (.certificate.a.json, .b.json). After a
check, the copy not linked is brought up to date (the checks it lacks appended, its short tail
rewritten: verdict, summary, root cause, the checks not run) and the link is swapped by rename.
A reader, or a run killed at any instant, only ever sees a complete copy, and no copy is written
whole again. Each check is masked and dumped once. The final certificate replaces the link with
a regular file (rigcheck.plugin.session) and the copies are removed.

Issue 43: rewriting the whole certificate after every check made each check cost as much as the
run so far (72 GPUs: 215 ms per check, 8 in 987 of the time spent rewriting)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from rigcheck.reports.certificate import FILE_NAME, measured_count, overall_verdict, write_atomic
from rigcheck.reports.masking import longest_first, masked_in_order, secrets_in
from rigcheck.reports.outcome import OUTCOMES
from rigcheck.reports.root_cause import root_cause
from rigcheck.verdict import FAIL

COPIES = (".certificate.a.json", ".certificate.b.json")
LINK = ".certificate.link"
# Written once per copy, before the checks; what changes while a run goes comes after them.
HEAD = ("schema_version", "run", "class", "software", "machine", "masked")
TAIL = ("verdict", "partial", "partial_reason", "root_cause", "exit_status", "summary", "not_run")


class _Copy:
    """One copy: its file and the byte offset each check's text starts at. The file is opened
    for each write, so a run that stops writing holds no file open (a full disk unmounts)."""

    def __init__(self, path: Path, head: bytes):
        self.path = path
        path.write_bytes(head)
        self.starts: list[int] = []
        self.end = len(head)  # just after the last check's text

    def put(self, at: int, data: bytes) -> None:
        """`data` from byte `at` to the end of the file (this copy is not the one linked)."""
        with open(self.path, "r+b") as file:
            file.seek(at)
            file.write(data)
            file.truncate()

    def cut_to(self, index: int) -> None:
        if len(self.starts) > index:
            self.end = self.starts[index]
            del self.starts[index:]


class LiveCertificate:
    def __init__(self, folder: Path, first: dict[str, Any], machine: dict[str, Any], unmask: bool):
        """`first`: the unmasked certificate of no check yet (build_certificate(mask_here=False)),
        whose parts other than TAIL and the checks stay as they are until the final write."""
        self.folder = folder
        self.order = () if unmask else longest_first(secrets_in(machine))
        self.selected = first["summary"]["selected"]
        # the checks not run yet, in their order, each id's masked text (joined per write)
        self.id_text = {i: self._dump(i, 2) for i in first["not_run"]}
        self.pending = dict(self.id_text)
        head = [f"  {json.dumps(k)}: {self._dump(v, 1)}" for k, v in first.items() if k in HEAD]
        self.head = ("{\n" + ",\n".join(head) + ',\n  "checks": [').encode()
        self.copies = [_Copy(folder / name, self.head) for name in COPIES]
        self.live = 1  # the copy certificate.json links to (none yet: the other is written first)
        self.links = True  # False where the file system has no symbolic links: whole rewrites
        self.texts: dict[int, bytes] = {}  # check index -> its text, until both copies hold it
        # running totals of the checks written, so that no write walks every check again
        self.counted: list[tuple[str, int]] = []  # per check: (outcome, figures measured)
        self.counts: Counter[str] = Counter()
        self.measured = 0
        self.failed: list[int] = []
        self.done: set[str] = set()

    def forget(self, checks: list[dict[str, Any]], check: dict[str, Any]) -> None:
        """A check changed after it was written (a warning pytest reports after its teardown):
        it and the checks after it are counted and written again."""
        index = next(i for i in range(len(checks) - 1, -1, -1) if checks[i] is check)
        for copy in self.copies:
            copy.cut_to(index)
        for at, (outcome, measured) in enumerate(self.counted[index:], index):
            self.counts[outcome] -= 1
            self.measured -= measured
            self.done.discard(checks[at]["id"])
        del self.counted[index:]
        self.pending = {i: t for i, t in self.id_text.items() if i not in self.done}
        self.failed = [i for i in self.failed if i < index]
        self.texts = {i: t for i, t in self.texts.items() if i < index}

    def write(self, checks: list[dict[str, Any]], partial_reason: str) -> str:
        """Bring the copy not linked up to date and link it; returns the verdict."""
        for index in range(len(self.counted), len(checks)):
            check = checks[index]
            self.counted.append((check["outcome"], measured_count([check])))
            self.counts[check["outcome"]] += 1
            self.measured += self.counted[-1][1]
            self.done.add(check["id"])
            self.pending.pop(check["id"], None)
            if check["outcome"] == FAIL:
                self.failed.append(index)
        tail, verdict = self._tail(checks, partial_reason)
        copy = self.copies[1 - self.live]
        self._append(copy, checks, tail)
        self._link(copy)
        self.live = 1 - self.live
        kept = min(len(c.starts) for c in self.copies)
        for index in [i for i in self.texts if i < kept]:
            del self.texts[index]
        return verdict

    def close(self) -> None:
        """After the final certificate replaced the link: the copies go."""
        for copy in self.copies:
            copy.path.unlink(missing_ok=True)

    def _append(self, copy: _Copy, checks: list[dict[str, Any]], tail: str) -> None:
        chunks, starts, at = [], [], copy.end
        for index in range(len(copy.starts), len(checks)):
            text = self.texts.get(index)
            if text is None:
                text = self.texts[index] = self._dump(checks[index], 2).encode()
            chunks.append((b"\n    " if index == 0 else b",\n    ") + text)
            starts.append(at)
            at += len(chunks[-1])
        closing = ("\n  ]" if checks else "]") + ",\n" + tail + "\n}\n"
        copy.put(copy.end, b"".join(chunks) + closing.encode())
        copy.starts += starts
        copy.end = at

    def _link(self, copy: _Copy) -> None:
        target = self.folder / FILE_NAME
        if self.links:
            link = self.folder / LINK
            link.unlink(missing_ok=True)
            try:
                os.symlink(copy.path.name, link)  # relative: the run folder can be moved
            except OSError:  # no symbolic links here (some network or Windows file systems)
                self.links = False
            else:
                os.replace(link, target)
                return
        write_atomic(target, copy.path.read_text(encoding="utf-8"))

    def _tail(self, checks: list[dict[str, Any]], partial_reason: str) -> tuple[str, str]:
        """The TAIL fields as build_certificate makes them, from the running counts."""
        verdict = overall_verdict([{"outcome": o} for o, n in self.counts.items() if n], True)
        failed = [checks[i] for i in self.failed]
        summary = {"selected": self.selected, "done": len(checks)}
        summary |= {o: self.counts[o] for o in OUTCOMES}
        summary["measured"] = self.measured
        shown = {"verdict": verdict, "partial": True, "partial_reason": partial_reason}
        shown["root_cause"] = root_cause({**shown, "checks": failed})
        shown |= {"exit_status": None, "summary": summary}
        fields = [f"  {json.dumps(k)}: {self._dump(v, 1)}" for k, v in shown.items()]
        not_run = self.pending.values()
        listed = "[\n    " + ",\n    ".join(not_run) + "\n  ]" if not_run else "[]"
        return ",\n".join([*fields, f'  "not_run": {listed}']), verdict

    def _dump(self, value: Any, depth: int) -> str:
        # JSON strings hold no raw newline, so every newline of the dump starts a line.
        text = json.dumps(masked_in_order(value, self.order), indent=2)
        return text.replace("\n", "\n" + "  " * depth)
