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


# The layouts perftest has printed, row values as its format strings print them (hand-assembled
# from src/perftest_parameters.h's RESULT_FMT_QOS and RESULT_FMT_PER_PORT, and perftest 1.x's
# send_bw.c `printf(" #bytes #iterations    BW peak[MB/sec]    BW average[MB/sec] \n")`).
OLD_4_COLUMNS = (
    " #bytes #iterations    BW peak[MB/sec]    BW average[MB/sec] \n"
    "  65536        1000            3254.88            3254.83\n"
    "------------------------------------------------------------------\n"
)
QOS = (
    " #bytes    #sl      #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
    " 65536      3        5000             10402.09            10401.68            0.166427\n"
)
PER_PORT = (
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   "
    "BW Port1[Gb/sec]   MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]\n"
    " 65536      5000             96.10              96.02               0.183  48.01  0.09  "
    "48.01  0.09\n"
)
# A real run's table (perftest 4.x): a CPU-frequency warning between the header and the row.
WARNED = (
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
    "Conflicting CPU frequency values detected: 800.565000 != 3311.538000. CPU Frequency is not "
    "max.\n 4096       17338400         0.00               11288.12                   2.889760\n"
)


def test_every_bandwidth_layout_perftest_printed_is_read():
    old = parse_bw_text(OLD_4_COLUMNS)
    assert (old["bytes"], old["iterations"], old["msg_rate_mpps"]) == (65536, 1000, None)
    assert old["bw_avg_gbps"] == pytest.approx(3254.83 * 2**20 * 8 / 1e9, abs=1e-3)
    qos = parse_bw_text(QOS)  # the #sl column is not the iteration count
    assert (qos["iterations"], qos["msg_rate_mpps"]) == (5000, 0.166427)
    port = parse_bw_text(PER_PORT)
    assert (port["bw_avg_gbps"], port["msg_rate_mpps"]) == (96.02, 0.183)
    assert parse_bw_text(WARNED)["iterations"] == 17338400


@pytest.mark.parametrize("row", [" 65536      1000\n", " 65536      1000   3254.88\n"])
def test_a_short_bandwidth_row_is_refused_naming_it(row):
    header = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
    with pytest.raises(PerftestOutputError, match=f"row '{row.strip()}'"):
        parse_bw_text(header + row)


@pytest.mark.parametrize("text", ['{"test_info": {}, "results": {"BW_average": 1}}', "[]", "3"])
def test_a_json_of_another_shape_is_refused_not_a_crash(text):
    with pytest.raises(PerftestOutputError):
        parse_json(text)
