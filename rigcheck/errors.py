"""All of rigcheck's own errors, in one hierarchy."""


class RigcheckError(Exception):
    """Base of every error rigcheck raises on purpose."""


class SpecError(RigcheckError):
    """A spec file is missing, malformed or invalid."""


class UnknownClassError(RigcheckError):
    """A device class was named that has no spec file."""


class FactsError(RigcheckError):
    """A facts snapshot cannot be read or has the wrong schema."""


class FactUnavailable(RigcheckError):
    """A fact the check needs could not be read on this machine."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"fact {path!r} could not be read: {reason}")
        self.path = path
        self.reason = reason


class HistoryError(RigcheckError):
    """The history store cannot be read, or holds nothing under the name asked for."""
