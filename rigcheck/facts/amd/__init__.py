"""rigcheck/facts/amd."""
