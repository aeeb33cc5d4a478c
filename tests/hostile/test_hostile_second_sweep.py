"""Issue 38's second sweep (helper m38, 2026-11-29): 331 hostile or mistaken invocations written
as the held-out list's author would, weighted to `rigcheck fit`, blame, coverage, attest/verify,
history and fleet (the list and its results: the m38 note). What it found on main, each case
below failing there:

- a config.json whose count is Infinity or 1e309 was an OverflowError traceback; 4096.5, "4096",
  true or a sliding_window of -5 were taken as numbers (int() truncates) and answered;
  num_hidden_layers 10**9 was answered without a trace and ran for ever with one;
  transformers' own refusal of a config (gpt-oss layer_types, Jamba's attn_layer_period 0) was
  its traceback;
- `--tp 0`, `--pp 0`, `--cp 0`, `--ep 0` were read as left out (1) where -2 was refused;
  `--tokens 0.5` said "give the job's length once";
- `fit -o`, `report -o` and `facts -o` wrote over any file: the model's config.json, the run's
  certificate.json;
- `history --history sqlite:///typo.db` (and prune, and `fleet --from-history`) made an empty
  store at the typo and showed "0 runs", exit 0;
- every JSON reader read /dev/zero until memory ran out, and a 5,000-digit number or an array
  nested 200,000 deep was a traceback;
- `coverage --baseline` of a file that is no result was exit 1 (the gate's "coverage fell"),
  or a KeyError after the whole campaign; `--markdown`/`--html` wrote over any file;
- `fleet --band 0` made every node below the median an outlier; a blank $RIGCHECK_HISTORY
  was "Could not parse SQLAlchemy URL";
- as root, `report -o /dev/full` (and facts, fleet --force, history --html --force) replaced the
  device with a regular file, and `--history sqlite:////dev/full` left a journal in /dev;
- `blame` of a job folder whose records were empty, binary or named no communicator of the job
  said "no slow or hung rank" (exit 0) having read nothing;
- an empty positional (`keygen ''`, an unset variable) said "FILE .: is a folder", and
  `coverage --json ''` "--json .: is a folder".
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
import types
from pathlib import Path

import pytest

from rigcheck import cli, jsonfile
from tests.hostile.test_hostile_input import assert_one_clean_line, run_cli

ROOT = Path(__file__).resolve().parents[2]
CERTIFICATE = ROOT / "fixtures" / "certificates" / "h100-node-before.json"
LLAMA = {  # meta-llama/Llama-2-7b-hf's config.json, the fields rigcheck reads
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
}  # fmt: skip
FIT = ["fit", "--device", "h100", "--no-trace"]
L7 = ["fit", "--model", "llama-2-7b", "--device", "h100"]
COVERAGE = ["coverage", "--class", "h100"]  # its options are checked before the campaign
# A job folder whose records give nothing to judge: blame said "no slow or hung rank", exit 0.
BLAME = ["blame", "job", "--history", "none"]
RAS_RANKS_NOT_A_LIST = json.dumps({"nccl_version": "2.29.1", "communicators": [{"ranks": "x"}]})


def _config(**changed) -> str:
    return json.dumps({**LLAMA, **changed})


# (files to write: name -> text, argv, exit code, a word the one line must hold)
# fmt: off
CASES = [
    ({"c.json": _config().replace("32,", "Infinity,", 1)}, [*FIT, "--config", "c.json"], 2,
     "Infinity"),
    ({"c.json": _config().replace(": 32,", ": 1e309,", 1)}, [*FIT, "--config", "c.json"], 2,
     "num_attention_heads"),
    ({"c.json": _config(hidden_size=4096.5)}, [*FIT, "--config", "c.json"], 2, "hidden_size"),
    ({"c.json": _config(hidden_size="4096")}, [*FIT, "--config", "c.json"], 2, "hidden_size"),
    ({"c.json": _config(num_attention_heads=True)}, [*FIT, "--config", "c.json"], 2,
     "num_attention_heads"),
    ({"c.json": _config(model_type="mistral", sliding_window=-5)}, [*FIT, "--config", "c.json"],
     2, "sliding_window"),
    ({"c.json": _config(num_hidden_layers=10**9)}, [*FIT, "--config", "c.json"], 2,
     "num_hidden_layers"),
    ({"c.json": "[" * 200_000}, [*FIT, "--config", "c.json"], 2, "c.json"),
    ({"config.json": _config()}, [*FIT, "--config", "config.json", "-o", "config.json"], 2,
     "no plan"),
    ({}, [*L7, "-o", "cert.json"], 2, "no plan"),
    ({}, ["report", "cert.json", "-o", "cert.json"], 2, "no report page"),
    ({}, ["facts", "-o", "cert.json"], 2, "no facts snapshot"),
    ({}, [*L7, "--tokens", "0.5"], 2, "'0.5': tokens is a number of at least 1"),
    ({}, [*L7, "--inference", "--gpu-memory-utilization", "0"], 2, "the share of the device"),
    ({}, ["history", "--history", "sqlite:///typo.db"], 2, "no history store at"),
    ({}, ["history", "prune", "--older-than", "1d", "--history", "sqlite:///typo.db"], 2,
     "no history store at"),
    ({}, ["fleet", "--from-history", "sqlite:///typo.db"], 2, "no history store at"),
    ({"deep.json": "[" * 200_000}, ["detect", "--facts", "deep.json"], 2, "deep.json"),
    ({"digits.json": '{"a": ' + "9" * 5000 + "}"}, ["diff", "digits.json", "cert.json"], 2,
     "digits.json"),
    ({}, ["detect", "--facts", "/dev/zero"], 2, "/dev/zero"),
    ({"b.json": "{}"}, [*COVERAGE, "--baseline", "b.json"], 2, "not a saved --json result"),
    ({"b.json": "\x00\xff"}, [*COVERAGE, "--baseline", "b.json"], 2, "--baseline b.json: not"),
    ({}, [*COVERAGE, "--markdown", "cert.json"], 2, "no coverage matrix"),
    ({}, [*COVERAGE, "--html", "."], 2, "is a folder"),
    ({"job/ncclras/a.json": RAS_RANKS_NOT_A_LIST}, BLAME, 2, "nothing to judge"),
    ({"job/nccl_inspector/a.log": ""}, BLAME, 2, "nothing to judge"),
    ({"job/nvrx/a.log": "\x00\x01\x02"}, BLAME, 2, "nothing to judge"),
    ({"job/ncclras/sub.txt/x": ""}, BLAME, 2, "nothing to judge"),
    ({}, ["keygen", ""], 2, "an empty argument"),
    ({}, ["fleet", "cert.json", "--band", "0"], 2, "the band is a fraction above 0"),
    ({}, [*COVERAGE, "--json", ""], 2, "an empty value"),
] + [({}, [*L7, "--gpus", "8", f"--{n}", "0"], 2, f"--{n}") for n in ("tp", "pp", "cp", "ep")]
# fmt: on


@pytest.mark.parametrize(
    ("files", "argv", "code", "word"), CASES, ids=[" ".join(c[1]) for c in CASES]
)
def test_each_is_one_line_its_code_and_nothing_written(
    files, argv, code, word, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "execv", lambda *a: pytest.fail(f"the campaign started: {a[1]}"))
    # /dev/zero: 1 MiB read, not 256
    monkeypatch.setattr(jsonfile, "MAX_BYTES", 2**20, raising=False)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    shutil.copy(CERTIFICATE, tmp_path / "cert.json")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    got, err = run_cli(argv, capsys)
    assert_one_clean_line(err, got, code)
    assert word in err, err
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # nothing made or changed


def test_a_plan_written_before_is_replaced(tmp_path, monkeypatch, capsys):
    """-o refuses a file of another kind only: writing the plan again is what it is for."""
    monkeypatch.chdir(tmp_path)
    assert cli.main([*L7, "-o", "plan.json"]) == 1
    assert cli.main([*L7, "--batch", "2", "-o", "plan.json"]) == 1
    assert json.loads(Path("plan.json").read_text())["batch"] == 2
    capsys.readouterr()


def test_transformers_refusing_a_config_is_one_line(monkeypatch):
    """Its validators raise their own types (huggingface_hub's StrictDataclassClassValidationError
    for gpt-oss's layer_types ["x"]; Jamba's ZeroDivisionError for attn_layer_period 0, both
    seen through `fit --config ... --inference`): each was a traceback. transformers stands in
    here raising the latter (its import alone costs 5-20 s)."""
    from rigcheck.memory import trace
    from rigcheck.memory.errors import ConfigError

    class JambaConfig:  # the two class methods trace.hf_config calls, as transformers has them
        @staticmethod
        def _decode_special_floats(fields):
            return fields

        @classmethod
        def from_dict(cls, fields):
            return fields["attn_layer_offset"] % fields["attn_layer_period"]

    stand_in = types.SimpleNamespace(CONFIG_MAPPING={"jamba": JambaConfig}, __version__="5")
    monkeypatch.setitem(sys.modules, "transformers", stand_in)
    with pytest.raises(
        ConfigError, match=r"transformers \S+ refuses this \w+ config\.json: .*integer modulo"
    ):
        trace.hf_config({"model_type": "jamba", "attn_layer_period": 0, "attn_layer_offset": 4})


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "cert.json", "-o", "pipe"],
        ["facts", "-o", "pipe"],
        [*L7, "-o", "pipe"],
        ["fleet", "cert.json", "-o", "pipe", "--force"],
    ],
    ids=" ".join,
)
def test_a_device_or_pipe_is_never_replaced(argv, tmp_path, monkeypatch, capsys):
    """As root, `report -o /dev/full` replaced the device with the page (the temporary file
    renamed over it; seen on this machine): a named pipe stands in for the device here."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(CERTIFICATE, tmp_path / "cert.json")
    os.mkfifo(tmp_path / "pipe")
    got = cli.main(argv)
    assert_one_clean_line(capsys.readouterr().err, got, 2)
    assert stat.S_ISFIFO((tmp_path / "pipe").stat().st_mode)


def test_a_blank_history_setting_is_unset(tmp_path, monkeypatch, capsys):
    """`RIGCHECK_HISTORY=` (blank, from an env file) names the default store, as a blank
    $RIGCHECK_REPORT_DIR names ./reports: it was "Could not parse SQLAlchemy URL"."""
    monkeypatch.setenv("RIGCHECK_HISTORY", "  ")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    got = cli.main(["history"])
    err = capsys.readouterr().err
    assert_one_clean_line(err, got, 2)
    assert f"no history store at {tmp_path}/rigcheck/history.db" in err


def test_a_campaign_leaves_nothing_in_the_temporary_folder(tmp_path, monkeypatch):
    """`rigcheck coverage` kept each judged node's sysfs tree and reports in $TMPDIR after it
    ended (about 2 MB a campaign, one folder per run). Judging stands in here (a real node's
    judging writes its folder the same way; it costs seconds)."""
    from rigcheck.testing.coverage import campaign

    def judge(node, tier, folder, rng):
        (folder / "sys").mkdir(parents=True)  # what the real judge leaves: the node's tree
        return types.SimpleNamespace(verdict="pass", failed=(), unjudged=(), seconds=0.1)

    monkeypatch.setattr(campaign, "judge", judge)
    monkeypatch.setattr(campaign, "healthy_node", lambda *a: types.SimpleNamespace(log_lines=[]))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = campaign.run(campaign.Plan("cpu", "quick", 0, 2, 0))
    assert result["healthy"]["runs"] == 2
    assert list(tmp_path.iterdir()) == []


def test_a_gate_timeout_beyond_the_clock_is_a_usage_error(tmp_path, monkeypatch, capsys):
    """`--timeout 1e30` passed the finite check and overflowed subprocess's clock after the
    quick tier had started: an OverflowError traceback, no verdict. Now the prolog's USAGE
    ERROR, exit 0 (a typo drains no node)."""
    monkeypatch.setenv("RIGCHECK_GATE_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as stopped:
        cli.main(["slurm", "prolog", "--dry-run", "--facts", "x.json", "--timeout", "1e30"])
    err = capsys.readouterr().err
    assert stopped.value.code == 0 and "USAGE ERROR" in err and "at most 604,800" in err, err


def test_a_kubeconfig_that_is_no_yaml_is_one_line(monkeypatch):
    """A binary kubeconfig was the YAML reader's UnicodeDecodeError traceback (seen through the
    real client); the client stands in here raising it (its import costs seconds)."""
    from rigcheck.gate import k8s

    class ConfigException(Exception):
        pass

    def load_kube_config():
        raise UnicodeDecodeError("utf-8", b"\x80", 0, 1, "invalid start byte")

    def load_incluster_config():
        raise ConfigException("not in a pod")

    config = types.SimpleNamespace(
        ConfigException=ConfigException,
        load_incluster_config=load_incluster_config,
        load_kube_config=load_kube_config,
    )
    stand_in = types.SimpleNamespace(client=types.SimpleNamespace(), config=config)
    monkeypatch.setitem(sys.modules, "kubernetes", stand_in)
    with pytest.raises(k8s.KubernetesError, match=r"no cluster to talk to.*invalid start byte"):
        k8s._core_api()
