"""Coverage campaigns: how much of what stops large jobs each tier catches, and how often it
fails a healthy node, measured by injecting published failure signatures below rigcheck's
probes (docs/coverage.md).

| file | holds |
|---|---|
| `causes.json` | published causes with their shares, the signatures each leaves, sources |
| `model.py` | reads causes.json |
| `corpus.py` | real kernel-log lines (fixtures/realworld) by the event each gives |
| `node.py` | a randomised healthy node of a class and the injection of one signature |
| `amd.py` | MI300X nodes: libamd_smi's answers read through the real amdsmi; AMD signatures |
| `fabric.py` | GPU nodes' RDMA fabric: their --fabric spec, a /sys/class/infiniband tree per node |
| `measurements.py` | the standard tier's measurements: recorded repeat noise, slowdowns |
| `judge.py` | a node's facts read by the probes over the simulators, judged in a tier |
| `campaign.py` | the campaign and its statistics (Wilson intervals, weighted by share) |
| `report.py`, `gate.py` | the matrix in Markdown; the CI gate against a saved result |
"""
