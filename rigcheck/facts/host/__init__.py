"""rigcheck/facts/host."""
