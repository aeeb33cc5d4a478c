"""AMD facts, read through amdsmi (AMD's binding of libamd_smi), sysfs and ROCm torch: devices
(devices.py), health per GPU (smi.py, with what each ROCm release answers differently in
smi_releases.py), xGMI topology (topology.py), and the host's ROCm versions (rocm.py).
amdgpu's kernel-log lines are in ../kernel_log/amdgpu.py.
"""
