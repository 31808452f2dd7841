"""Jobs for a pool's workload, ready to submit (``lattice job-template``).

- ``template``: a JobSet or Worker-only PyTorchJob with the team's queue, DP × TP × PP and the Kueue topology.
- ``sbatch``: a Slurm batch script for a pool Slurm owns, with the same sizing and placement.
"""
