"""rigcheck/facts/host/uptime.py: the host's uptime from /proc/uptime, or why not."""

from rigcheck.facts.host.uptime import probe_uptime
from rigcheck.facts.probe import is_error


def test_reads_the_first_field_of_proc_uptime(tmp_path):
    path = tmp_path / "uptime"
    path.write_text("86400.52 170000.10\n")  # format: proc(5), "uptime idle" in seconds
    assert probe_uptime(path) == {"since_boot_s": 86400.52, "source": str(path)}


def test_a_missing_file_is_an_error_record(tmp_path):
    found = probe_uptime(tmp_path / "absent")
    assert is_error(found) and "uptime is unknown" in found["error"]


def test_garbage_is_an_error_record_not_a_number(tmp_path):
    path = tmp_path / "uptime"
    for text in ("", "soon\n"):
        path.write_text(text)
        assert is_error(probe_uptime(path)), text
