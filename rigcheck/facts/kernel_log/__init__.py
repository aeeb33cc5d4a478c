"""rigcheck/facts/kernel_log."""
