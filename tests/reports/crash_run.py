"""A test-only plugin (`-p crash_run`): pytest itself fails after the third check finishes,
as a broken plugin or an internal error would: the run must still end with its reports."""

finished = 0


def pytest_runtest_logfinish(nodeid, location):
    global finished
    finished += 1
    if finished == 3:
        raise RuntimeError("crash_run: a plugin crashed on purpose")
