"""The kernel log as a source of facts: journalctl, /dev/kmsg or dmesg (reader.py), and what
its GPU lines mean: NVIDIA's Xid events (xid_table.py, NVIDIA's catalogue as data;
xid_catalog.py, what rigcheck makes of each code), the NVIDIA driver's records without an Xid
(nvrm.py), amdgpu's fault lines (amdgpu.py), and Xid events in wall-clock time for the burn-in
(xid_events.py).
"""
