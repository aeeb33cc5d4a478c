"""Apple silicon facts, read through sysctl: the chip, its cores and the memory the GPU shares
with the host (sysctl.py).
"""
