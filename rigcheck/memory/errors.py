"""The one error the memory model raises for input it cannot model."""

from rigcheck.errors import RigcheckError


class ConfigError(RigcheckError, ValueError):
    """A job description that is invalid or outside what the model covers; the message says why."""
