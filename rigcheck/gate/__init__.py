"""The health gate: time-budgeted tiers, and the scheduler side (Slurm drain/resume, Kubernetes
labels and taints) that acts on a tier's verdict. docs/gate.md says what each tier catches."""
