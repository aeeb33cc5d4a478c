"""rigcheck/facts/fabric."""
