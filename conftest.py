"""Wires the rigcheck pytest plugin into runs from this checkout; nothing else."""

pytest_plugins = ["rigcheck.plugin"]
