"""Signed acceptance certificates: `rigcheck attest` signs a run, `rigcheck verify` checks one."""
