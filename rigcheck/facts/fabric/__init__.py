"""Fabric facts, read from sysfs (/sys/class/infiniband, /sys/class/net) and NCCL's own
settings: the RDMA NICs and where they sit (nics.py), their error counters (rdma_counters.py),
and what NCCL will be given (nccl_env.py: environment and config files; nccl_ib.py: its
InfiniBand/RoCE choices).
"""
