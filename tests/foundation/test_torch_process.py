"""The torch probe's child process: it waits at the gate until NVML has been read, and every way
it can go wrong (no start, a crash, no JSON, a hang) is one error record, never a raise."""

import json
import subprocess
import sys
import time

from rigcheck.facts.collect import collect_facts
from rigcheck.facts.host.torch_process import GATE_FLAG, TorchProbe

ANSWER = {"torch": {"version": "2.5.1"}, "smoke": {}}


def child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


GATED = child(f"import sys; sys.stdin.readline(); print({json.dumps(json.dumps(ANSWER))})")


def test_the_child_waits_at_the_gate_until_released():
    probe = TorchProbe(argv=GATED)
    time.sleep(0.5)
    assert probe._proc.poll() is None  # still waiting: it has not touched a GPU
    probe.release()
    assert probe.result() == ANSWER


def test_result_opens_the_gate_itself_and_is_read_once():
    probe = TorchProbe(argv=GATED)
    assert probe.result() == ANSWER
    probe.release()  # after the end: does nothing, raises nothing
    assert probe.result() == ANSWER


def test_a_child_that_ends_before_the_gate_is_not_an_error_to_release():
    probe = TorchProbe(argv=child('print(\'{"torch": {"error": "import torch failed: x"}}\')'))
    probe._proc.wait()
    probe.release()
    assert probe.result() == {"torch": {"error": "import torch failed: x"}}


def test_a_crash_keeps_the_tail_of_stderr():
    probe = TorchProbe(
        argv=child("import sys; sys.stderr.write('a\\nSegfault in flash_attn\\n'); sys.exit(139)")
    )
    reason = probe.result()["torch"]["error"]
    assert reason.startswith("the torch probe exited 139") and "Segfault in flash_attn" in reason


def test_output_that_is_no_json_object_is_named():
    for out in ("'hello'", "'[1, 2]'"):
        reason = TorchProbe(argv=child(f"print({out})")).result()["torch"]["error"]
        assert reason.startswith("the torch probe printed no JSON object"), reason


def test_a_hung_child_is_killed_at_the_timeout():
    probe = TorchProbe(timeout_s=1, argv=child("import time; time.sleep(60)"))
    started = time.monotonic()
    reason = probe.result()["torch"]["error"]
    assert "did not finish in 1 s" in reason
    assert time.monotonic() - started < 10 and probe._proc.returncode is not None


def test_a_child_that_cannot_start_is_an_error_record():
    reason = TorchProbe(argv=["/nonexistent/python"]).result()["torch"]["error"]
    assert reason.startswith("the torch probe could not start")


def test_the_real_probe_passes_the_gate_on_end_of_file():
    """Run by hand with --gate and no stdin, it must not wait for ever."""
    argv = [sys.executable, "-m", "rigcheck.facts.host.torch_probe", GATE_FLAG]
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["torch"]["version"] and answer["smoke"]["cpu_bf16_matmul"]["ok"]


class Recorder:
    """Stands in for the probes collect_facts calls, to see the order it calls them in."""

    def __init__(self):
        self.calls = []

    def probe(self):
        self.calls.append("started")
        outer = self

        class Probe:
            def release(self):
                outer.calls.append("released")

            def result(self):
                outer.calls.append("result")
                return ANSWER

        return Probe()


def test_nvml_is_read_before_the_gate_opens(monkeypatch):
    from rigcheck.facts import collect

    seen = Recorder()

    def nvidia():
        seen.calls.append("nvml")
        return {"present": False, "reason": "no driver"}, []

    monkeypatch.setattr(collect, "probe_nvidia", nvidia)
    facts = collect_facts(torch_probe=seen.probe())
    assert seen.calls == ["started", "nvml", "released", "result"]
    assert facts.data["software"]["torch"] == ANSWER["torch"]
    assert facts.data["smoke"] == {}
