"""Multi-GPU and multi-node checks on torch.distributed, launched by torchrun.

worker.py is what torchrun runs on every rank; it writes one JSON result per rank (and a progress
file it keeps fresh) into a report folder named by host. launch.py starts one torchrun job from
pytest with a watchdog; results.py reads a report folder (live or recorded) back, and progress.py
names the rank that stopped answering. Nothing here imports torch except the worker side.
"""
