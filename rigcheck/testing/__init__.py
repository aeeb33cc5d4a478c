"""rigcheck's testing home: what a user or a self-test imports to test checks without the
machine, the way numpy.testing and pytest's pytester ship theirs.

- synthetic.py: the good facts snapshot of any class (`python -m rigcheck.testing.synthetic`),
  from reference tables (synthetic_tables.py, synthetic_boards.py) and healthy counters, logs,
  topology and AMD records (synthetic_health.py, synthetic_topology.py, synthetic_amd.py);
- synthetic_trace.py: burn-in traces, healthy and with each fault a burn-in must catch;
- variants.py: broken variants (fixtures/broken_variants.json) replayed through the suites;
- mutations.py and fuzz.py: one judged fact broken at a time, and whether a replay caught it;
- nvml_sim/ and amdsmi_sim/: libnvidia-ml and libamd_smi simulated below the REAL nvidia-ml-py
  and amdsmi bindings, from profiles of real machines that name their sources.

Nothing that runs on a machine under test imports this package
(tests/foundation/test_layering.py holds that).
"""
