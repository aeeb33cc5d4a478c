"""The kernel log as a source of facts: journalctl, /dev/kmsg or dmesg (reader.py), each line
with its priority and time (line_form.py), and what its GPU lines mean: NVIDIA's Xid events
(xid_table.py, NVIDIA's catalogue as data; xid_catalog.py, what rigcheck makes of each code),
the NVIDIA driver's records without an Xid (nvrm.py), the NVSwitch driver's SXids (sxid_table.py,
NVIDIA's list as data; sxid.py), amdgpu's fault lines (amdgpu.py), the ConnectX NIC driver's
records (mlx5.py), the driver error lines no rule explains (unexplained.py, with
benign_errors.json), and Xid events in wall-clock time for the burn-in (xid_events.py).
"""
