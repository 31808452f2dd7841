"""Test helpers for walking a typical training pod through a team namespace. The rules themselves — defaulting,
LimitRanger, validation, ResourceQuota, scheduling and Pod Security — are product code in ``lattice/route/``
(``pod_admission``, ``pod_security``), which ``lattice route`` runs; these helpers only pick the planned objects and
shape the pod the tests walk."""

from __future__ import annotations

import math

from lattice.route.pod_admission import Admission, Container


def namespaced(plan, kind: str, provider: str, namespace: str) -> list[dict]:
    """A kind's planned inputs in one namespace of one cluster."""
    return [
        r["inputs"] for r in plan.by_type(kind)
        if r["provider"] == provider and r["inputs"]["metadata"].get("namespace") == namespace
    ]  # fmt: skip


def fits_host(admission: Admission, cpus: float | None, memory_gib: float | None) -> bool:
    """Whether one such pod's requests fit on one node (None: the host is not known to the catalog)."""
    usage = admission.usage("requests")
    return (cpus is None or usage.get("cpu", 0) <= cpus) and (
        memory_gib is None or usage.get("memory", 0) <= memory_gib * 2**30
    )


def training_container(accelerator: str, count: int, cpus: int, memory_gib: int) -> Container:
    """The trainer container of a PyTorchJob / JobSet pod as the examples write it: CPU and memory requests, the
    accelerator as a limit only (extended resources default their request to it)."""
    return Container(
        "trainer",
        requests={"cpu": str(cpus), "memory": f"{memory_gib}Gi"},
        limits={accelerator: str(count)},
    )


def typical_shape(accelerators: int, cpus: float | None, memory_gib: float | None) -> tuple[int, int]:
    """CPUs and GiB a training pod that takes a whole node asks for: 90 CPUs and 1,000 GiB of a p5.48xlarge's 192 and
    2,048 (room for the system daemons and the kubelet's reservations), the same fractions of other known hosts,
    and of the standards' per-accelerator host where the catalog does not know the node."""
    from lattice.components.standards import TEAM_CPU_PER_ACCELERATOR, TEAM_MEMORY_GIB_PER_ACCELERATOR

    cpus = cpus if cpus is not None else TEAM_CPU_PER_ACCELERATOR * accelerators
    memory_gib = memory_gib if memory_gib is not None else TEAM_MEMORY_GIB_PER_ACCELERATOR * accelerators
    return math.floor(cpus * 90 / 192), math.floor(memory_gib * 1000 / 2048)
