"""Coverage campaigns: how much of what stops large jobs each tier catches, and how often it
fails a healthy node, measured by injecting published failure signatures below rigcheck's
probes (docs/coverage.md).

| file | holds |
|---|---|
| `causes.json` | published causes with their shares, the signatures each leaves, sources |
| `model.py` | reads causes.json |
| `corpus.py` | real kernel-log lines (fixtures/realworld) by the event each gives |
| `node.py` | a randomised healthy node of a class and the injection of one signature |
| `judge.py` | a node's facts through pynvml over nvml_sim and the log reader, judged in a tier |
| `campaign.py` | the campaign and its statistics (Wilson intervals, weighted by share) |
| `report.py`, `gate.py` | the matrix in Markdown; the CI gate against a saved result |
"""
