"""Host facts, read from the operating system: OS, CPU, memory and virtualisation through
py-cpuinfo and psutil (system.py); limits that break ML jobs from /dev/shm, rlimits, cgroups and
sysfs (limits.py, iommu_devices.py, acs.py); uptime from /proc/uptime (uptime.py); and the torch
stack, probed in a child process so a broken CUDA cannot hang the run (torch_probe.py,
torch_process.py).
"""
