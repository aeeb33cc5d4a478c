"""rigcheck: is this machine the ML machine you paid for?"""

__version__ = "0.1.0"
