"""Burn-in: load every device at once, sample telemetry into a trace, judge the trace.

Load is a phase, not a fact (DESIGN.md): a live burn-in records a trace (record.py, in a child
process) and the checks in suites/burnin/ judge that trace; a saved or synthetic trace
(`--burn-in-trace=FILE`) is judged by the same code, which is how CI tests the GPU verdicts.
"""
