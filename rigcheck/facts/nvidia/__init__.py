"""rigcheck/facts/nvidia."""
