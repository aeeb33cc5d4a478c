"""NVIDIA facts, read through NVML (nvidia-ml-py's pynvml over the driver's libnvidia-ml) and,
for the CUDA compiler, `nvcc --version`: identity and health per GPU (nvml.py), error counters,
fabric and firmware (counters.py), clock ceilings (clock_limits.py), GPU-to-GPU topology
(topology.py), IMEX channels (imex.py). The driver's kernel-log records are in ../kernel_log/.
"""
