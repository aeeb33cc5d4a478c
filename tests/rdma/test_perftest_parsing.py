"""perftest's outputs read back: real text outputs (superbench's HDR loopback log in MB/sec,
NVIDIA's DGX Spark RoCE run in Gb/sec) and outputs in perftest's own layouts (text and
--out_json), as fixtures/rdma/perftest/SOURCES.md lists them."""

from pathlib import Path

import pytest

from rigcheck.rdma.perftest import (
    PerftestOutputError,
    bw_argv,
    lat_argv,
    parse_bw_text,
    parse_json,
    parse_lat_text,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rdma" / "perftest"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_superbench_loopback_in_mib_per_s_is_converted_to_gbps():
    result = parse_bw_text(read("ib_write_bw-superbench-loopback-8M.txt"))
    assert result["unit_read"] == "MB/sec" and result["bytes"] == 8388608
    assert result["bw_avg_gbps"] == pytest.approx(24056.72 * 2**20 * 8 / 1e9, abs=1e-3)
    assert result["bw_avg_gbps"] == pytest.approx(201.80, abs=0.01)
    assert (result["device"], result["link_type"], result["mtu"]) == ("ib0", "IB", 4096)


def test_dgx_spark_run_in_gbps_takes_the_last_row():
    result = parse_bw_text(read("ib_write_bw-dgx-spark-rocep1s0f0.txt"))
    assert result["bw_avg_gbps"] == 92.57 and result["iterations"] == 882821
    assert result["bw_peak_gbps"] == 0.0  # --run_infinitely: "BW peak won't be measured"
    assert (result["device"], result["link_type"], result["mtu"]) == (
        "rocep1s0f0",
        "Ethernet",
        1024,
    )


def test_json_and_text_agree():
    text = parse_bw_text(read("ib_write_bw-dgx-spark-rocep1s0f0.txt"))
    data = parse_json(read("ib_write_bw-out_json.json"))
    assert data["bw_avg_gbps"] == text["bw_avg_gbps"] and data["device"] == "rocep1s0f0"
    assert (
        (data["mtu"], data["link_type"]) == (text["mtu"], text["link_type"]) == (1024, "Ethernet")
    )
    lat_text = parse_lat_text(read("ib_read_lat-text.txt"))
    lat_json = parse_json(read("ib_read_lat-out_json.json"))
    for key in ("t_min_us", "t_typical_us", "t_avg_us", "p99_us", "p99_9_us", "bytes"):
        assert lat_text[key] == lat_json[key], key
    assert lat_text["p99_us"] == 2.45 and lat_text["t_typical_us"] == 1.98


@pytest.mark.parametrize(
    "text",
    ["", " WARNING: Couldn't connect to 10.0.0.2:18515\nUnable to open file descriptor\n",
     " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n----\n"],
)  # fmt: skip
def test_an_output_without_a_result_row_is_an_error(text):
    with pytest.raises(PerftestOutputError):
        parse_bw_text(text)


def test_a_short_latency_row_or_a_bad_json_is_an_error():
    header = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n"
    with pytest.raises(PerftestOutputError, match="columns"):
        parse_lat_text(header + " 2 1000 1.9 5.1 1.98\n")
    with pytest.raises(PerftestOutputError, match="out_json"):
        parse_json('{"results": {}}')


def test_command_lines_are_argument_lists():
    assert bw_argv("mlx5_0", 1, 5, None, None) == [
        "ib_write_bw", "-d", "mlx5_0", "-i", "1", "-s", "8388608", "-D", "5", "-F",
        "--report_gbits"]  # fmt: skip
    assert bw_argv("mlx5_3", 1, 5, "10.0.0.2", 3)[-2:] == ["--use_cuda=3", "10.0.0.2"]
    assert lat_argv("mlx5_0", 1, "node0") == [
        "ib_read_lat",
        "-d",
        "mlx5_0",
        "-i",
        "1",
        "-F",
        "node0",
    ]


def test_a_latency_row_with_a_trailing_column_keeps_the_nine():
    """perftest with --cpu_util appends CPU_Util[%] (RESULT_EXT_CPU_UTIL) after the columns."""
    text = read("ib_read_lat-text.txt").replace("5.10\n---", "5.10\t    12.50\n---")
    assert parse_lat_text(text)["p99_9_us"] == 5.10
