"""Packages for the wheel: rigcheck*, plus suites/ and expected/ shipped inside it.

suites/ and expected/ stay at the top of the clone (where `pytest -m CLASS` finds them); the
wheel carries them as rigcheck.suites and rigcheck.expected so `rigcheck check` works from any
directory. Computed here, not listed in pyproject, so a new suite folder ships by itself.
"""

from setuptools import find_namespace_packages, find_packages, setup

SUITES = ["rigcheck.suites"] + [
    f"rigcheck.suites.{name}"
    for name in find_namespace_packages(where="suites", exclude=["*__pycache__*"])
]

# The NVML simulator's profiles are data folders beside profiles.py (which reads them): listed
# as (namespace) packages so their JSON ships; `import ...nvml_sim.profiles` still finds the module.
DATA = ["rigcheck.testing.nvml_sim.profiles", "rigcheck.testing.nvml_sim.profiles.machines"]

setup(
    packages=find_packages(include=["rigcheck", "rigcheck.*"])
    + DATA
    + SUITES
    + ["rigcheck.expected", "rigcheck.expected.platforms"],
    package_dir={
        "rigcheck.suites": "suites",
        "rigcheck.expected": "expected",
        "rigcheck.expected.platforms": "expected/platforms",
    },
    package_data={"": ["*.json", "*.ini", "*.mako"]},
)
