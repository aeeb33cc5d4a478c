"""rigcheck/facts/apple."""
