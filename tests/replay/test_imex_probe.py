"""The IMEX channel probe (rigcheck/facts/nvidia/imex.py) on a fake /dev: no folder, an empty one,
channels among other files, and a folder it cannot list."""

from __future__ import annotations

from rigcheck.facts.nvidia.imex import CHANNEL_DIR, probe_imex


def test_no_channel_folder_is_no_channel(tmp_path):
    assert probe_imex(tmp_path) == {"channel_dir": False, "channels": []}


def test_an_empty_folder_has_no_channel(tmp_path):
    (tmp_path / CHANNEL_DIR).mkdir(parents=True)
    assert probe_imex(tmp_path) == {"channel_dir": True, "channels": []}


def test_channels_are_listed_by_number_and_other_files_ignored(tmp_path):
    folder = tmp_path / CHANNEL_DIR
    folder.mkdir(parents=True)
    for name in ("channel3", "channel0", "channel12", "channelx", "README", "xchannel1"):
        (folder / name).touch()
    assert probe_imex(tmp_path) == {"channel_dir": True, "channels": [0, 3, 12]}


def test_an_unlistable_folder_is_an_error_record(tmp_path, monkeypatch):
    folder = tmp_path / CHANNEL_DIR
    folder.mkdir(parents=True)

    def refuse(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(type(folder), "iterdir", refuse)
    record = probe_imex(tmp_path)
    assert set(record) == {"error"} and record["error"].startswith("PermissionError")
