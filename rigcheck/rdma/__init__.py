"""The node-to-node RDMA fabric: port error counters and their change over a run, perftest
traffic between node pairs, NCCL-over-IB readiness. Judges only; the facts are in
rigcheck/facts/fabric/nics.py and rigcheck/facts/fabric/rdma_counters.py."""
