"""rigcheck/testing."""
