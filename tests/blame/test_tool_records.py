"""The readers of other tools' records (data/SOURCES.md): NCCL RAS answers pasted by users and
shown in NCCL's docs, NCCL Inspector logs (its README's records; a real gloo job's all-reduce
times in Inspector's layout), NVRx straggler logs written by NVRx's own code; their refusals,
and the rank each one names or, when it cannot be sure, does not."""

import json
import shutil
from pathlib import Path

import pytest

from rigcheck.blame import inspector, ncclras, nvrx
from rigcheck.blame.step_reader import JobRecordError
from rigcheck.blame.suspects import HUNG, SLOW, find_suspect, read_job

DATA = Path(__file__).with_name("data")
RAS, EXCERPTS = DATA / "ncclras", DATA / "ncclras_excerpts"


def answers(*names):
    return [ncclras.read_answer(RAS / name) for name in names]


def test_a_healthy_ras_answer_names_nobody():
    (healthy,) = answers("nccl1730_healthy_2.26.2.txt")
    assert (healthy.version, healthy.world) == ("2.26.2", True)
    assert ncclras.find_ras_hang([healthy]) is None


def test_a_count_split_in_one_answer_is_a_running_job_not_a_hang():
    assert ncclras.find_ras_hang(answers("nccl1911_mismatch_2.26.2.txt")) is None


def test_a_stuck_split_whose_laggards_ras_did_not_list_names_no_rank():
    """nccl#1911: RAS lists the 2 ranks ahead (12, 13), not the 30 behind; neither is blamed."""
    hang = ncclras.find_ras_hang(answers(*["nccl1911_mismatch_2.26.2.txt"] * 2))
    assert hang.culprits == []
    assert "30 rank(s) stuck behind operation 641 of AllGather" in hang.evidence
    assert "RAS named 0 of them" in hang.evidence


def test_a_stuck_split_names_the_listed_ranks_behind():
    """NCCL's docs: 6 ranks listed at operation 6649, 26 at 6650."""
    lines = (EXCERPTS / "docs_mismatch_excerpt.txt").read_text().splitlines()
    ((kind, body),) = ncclras._blocks(lines, "#0-0")
    split = ncclras._splits(body)["collective"]
    hang = ncclras._behind("ncclras", "collective", split)
    assert kind == "MISMATCH" and hang.culprits == [0, 2, 3, 4, 5, 7]
    assert hang.places[3] == {"host": "172.16.64.210", "gpu": "3", "pid": 483075}


def test_the_missing_rank_of_an_older_nccl_is_read():
    lines = (EXCERPTS / "docs_dead_excerpt.txt").read_text().splitlines()
    (_, body), *_ = ncclras._blocks(lines, "#0-0")
    assert ncclras._missing(body) == {21: {}}


def test_a_communicator_smaller_than_the_job_names_no_rank():
    """nccl#1762: #0-0 holds 2 of the job's 10 GPUs; its rank 1 is not the job's rank 1."""
    hang = ncclras.find_ras_hang(answers("nccl1762_incomplete_2.27.3.txt"))
    assert hang.culprits == [] and "is not the job's" in hang.evidence


def test_an_unreachable_rank_in_json_is_the_hung_one_with_its_gpu():
    hang = ncclras.find_ras_hang(answers("docs_2.29.1.json"))
    assert hang.culprits == [1]
    assert hang.places[1] == {"host": "172.16.64.245", "gpu": "1", "pid": 1524345}


def test_a_stuck_json_split_names_the_rank_behind(tmp_path):
    """The docs' JSON answer with its missing rank answering, one AllReduce behind (edited)."""
    data = json.loads((RAS / "docs_2.29.1.json").read_text())
    comm = data["communicators"][0]
    late = {**comm["ranks"][0], "rank": 1, "pid": 1524345, "cuda_dev": 1, "nvml_dev": 1}
    comm["ranks"][0]["collective_counts"]["AllReduce"] = 7
    late["collective_counts"] = {**late["collective_counts"], "AllReduce": 6}
    comm.update(ranks=[comm["ranks"][0], late], missing_ranks=[])
    (tmp_path / "a.json").write_text(json.dumps(data))
    assert ncclras.find_ras_hang([ncclras.read_answer(tmp_path / "a.json")]) is None
    hang = ncclras.find_ras_hang([ncclras.read_answer(tmp_path / "a.json")] * 2)
    assert hang.culprits == [1] and hang.places[1]["gpu"] == "1"


@pytest.mark.parametrize(
    ("name", "old", "new", "said"),
    [
        ("nccl1730_healthy_2.26.2.txt", "2.26.2", "2.31.0", "NCCL 2.31.0; this rigcheck reads"),
        ("nccl1730_healthy_2.26.2.txt", "2.26.2", "2.23.4", "reads 2.24 to 2.30"),
        ("nccl1730_healthy_2.26.2.txt", "NCCL version", "NCCL", "no 'NCCL version' line"),
        ("docs_2.29.1.json", '"2.29.1"', '"3.0.1"', "JSON output of NCCL 3.0.1"),
        ("docs_2.29.1.json", '"communicators":', '"comms":', "no 'communicators' list"),
    ],
)
def test_an_unknown_ras_answer_is_refused(tmp_path, name, old, new, said):
    path = tmp_path / name
    path.write_text((RAS / name).read_text().replace(old, new, 1))
    with pytest.raises(JobRecordError, match=said):
        ncclras.read_answer(path)


def test_inspector_readme_records_are_read():
    found = inspector.read_collectives(DATA / "inspector_readme")
    assert [(c.name, c.rank, c.n_ranks, c.exec_us) for c in found] == [
        ("AllReduce", 2, 8, 61974.0),
        ("ReduceScatter", 4, 8, 41057.0),
    ]
    assert inspector.late_ranks(found) == []  # one collective of each: nothing to compare


def test_inspector_names_the_rank_the_others_wait_for():
    (late,) = inspector.late_ranks(
        inspector.read_collectives(DATA / "inspector_slow_rank1_of_3" / "nccl_inspector")
    )
    assert (late.rank, late.host, late.name) == (1, "node01", "AllReduce")
    assert 0.005 < late.wait_s < 0.02  # its work was 10 ms longer than the others'
    clean = inspector.read_collectives(DATA / "inspector_clean_3" / "nccl_inspector")
    assert inspector.late_ranks(clean) == []


@pytest.mark.parametrize(
    ("old", "new", "cut", "said"),
    [
        ('"v4.0"', '"v5.0"', False, "output version 'v5.0'; this rigcheck reads v4.0"),
        ('"header"', '"head"', False, "no 'header'"),
        ("{", "[", True, "not JSON"),
    ],
)
def test_unknown_inspector_output_is_refused(tmp_path, old, new, cut, said):
    text = (DATA / "inspector_readme" / "example-hostname-pid1639453.log").read_text()
    lines = text.splitlines()
    lines[0] = lines[0].replace(old, new, 1)
    (tmp_path / "n-pid1.log").write_text("\n".join(lines) + "\n")
    with pytest.raises(JobRecordError, match=said):
        inspector.read_collectives(tmp_path)


def test_an_inspector_line_cut_by_a_kill_is_dropped(tmp_path):
    text = (DATA / "inspector_readme" / "example-hostname-pid1639453.log").read_text()
    (tmp_path / "n-pid1.log").write_text(text + '{"header": {"id"')
    assert len(inspector.read_collectives(tmp_path)) == 2


def test_nvrx_names_its_straggler_with_its_node_and_score():
    (found,) = nvrx.read_stragglers(DATA / "nvrx")
    assert (found.rank, found.node, found.kind, found.score) == (2, "node02", "relative", 0.68)


def test_nvrx_without_a_warning_names_nobody(tmp_path):
    shutil.copy(DATA / "nvrx" / "clean_hung_job_steps.log", tmp_path / "job.log")
    assert nvrx.read_stragglers(tmp_path) == []


def test_an_nvrx_warning_in_another_layout_is_refused(tmp_path):
    line = (
        "STRAGGLER DETECTION WARNING: Some GPUs have worse relative performance. "
        "Affected ranks: [2]"
    )  # hand-written: a layout NVRx does not print, to check the refusal
    (tmp_path / "job.log").write_text(line + "\n")
    with pytest.raises(JobRecordError, match="layout this rigcheck does not know"):
        nvrx.read_stragglers(tmp_path)


def test_each_tool_feeds_the_suspect(tmp_path):
    """Inspector before NVRx; RAS's hang before any slowness; the tools' own places."""
    job = tmp_path / "job"
    shutil.copytree(DATA / "inspector_slow_rank1_of_3" / "nccl_inspector", job / "nccl_inspector")
    shutil.copytree(DATA / "nvrx", job / "nvrx")
    slow = find_suspect(read_job(job))
    assert (slow.kind, slow.ranks, slow.host) == (SLOW, [1], "node01")
    shutil.rmtree(job / "nccl_inspector")
    assert find_suspect(read_job(job)).ranks == [2]
    (job / "ncclras").mkdir()
    shutil.copy(RAS / "docs_2.29.1.json", job / "ncclras")
    hung = find_suspect(read_job(job))
    assert (hung.kind, hung.ranks, hung.host, hung.gpu) == (HUNG, [1], "172.16.64.245", "1")


def test_a_rank_whose_wait_is_only_noise_is_not_named():
    """Hand-made collectives (not a tool's output): rank 0's median wait is 15 % of the others'
    time, over the 10 % bar, but its waits swing from -900 to +1000 us: within the noise."""
    waits = [-900, -800, -700, 150, 150, 150, 900, 950, 1000, 1000, 1000]
    collectives = [
        inspector.Collective("c", 3, rank, seq, "AllReduce", exec_us, f"n{rank}")
        for seq, wait in enumerate([0, 0, *waits])
        for rank, exec_us in ((0, 1000 - wait), (1, 1000), (2, 1000))
    ]
    assert inspector.late_ranks(collectives) == []
    assert [x.rank for x in inspector.late_ranks(collectives, z=0)] == [0]


def test_the_last_nvrx_report_is_the_one_read(tmp_path):
    """The real warning, then a later report naming rank 0 (its rank and node edited)."""
    text = (DATA / "nvrx" / "slow_rank2_of_3.log").read_text()
    later = text.splitlines()[0].replace("rank=2, node='node02'", "rank=0, node='node00'")
    (tmp_path / "job.log").write_text(text + "\nsome training line\n" + later + "\n")
    (found,) = nvrx.read_stragglers(tmp_path)
    assert (found.rank, found.node) == (0, "node00")
