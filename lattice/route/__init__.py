"""The flow models ``lattice route`` walks a job through, offline, from the plan.

Each module follows one upstream component and cites the file at the pinned commit it follows:

- ``quantities``: Kubernetes resource quantities as Kueue counts them (milli-CPU, bytes, devices) and prints them.
- ``pod_admission``: what the API server does to a pod in a namespace: defaulting, LimitRanger, validation,
  ResourceQuota, and whether the scheduler would put it on a node (labels, taints).
- ``pod_security``: Pod Security admission's baseline and restricted checks.
- ``kueue``: Kueue v0.19.2's flavor assignment (quota per flavor in order, borrowing through cohorts, flavor
  fungibility, node selector / affinity / taints, excluded resources) and its ClusterQueue activity rules.
- ``tas``: Kueue's Topology-Aware Scheduling: which levels a request needs (``HasLevel``) and where its pods land
  (domains per level, slices, BestFit).
- ``multikueue``: the incremental dispatcher's rounds (stepSize workers in MultiKueueConfig order, a fixed round
  timeout) and what the manager's configuration says about them.
- ``estate`` reads a plan into these models; ``jobs`` reads a job manifest as Kueue does (or writes a team's with
  ``lattice job-template``); ``walk`` runs the job through the models and says where it is admitted; ``report``
  makes the walk the document ``lattice route`` prints, with each admitting cluster's cost.

The models are held to upstream's own tests (tests/lattice/route/test_differential.py transcribes cases from Kueue's
test files at the pinned tag). What they do not model is said where it matters, never silently approximated.
"""
