"""One team quota across two schedulers: a team's ``gpu_quota`` on a site split between Kueue's pools and Slurm's.

Kueue and Slurm cannot see each other's bookings, so a team's one number on a site (``teams[].gpu_quota``) is cut
in two fixed parts that add up to it: Kueue's (its ClusterQueue's ceiling and its namespace's GPU quota) and Slurm's
(its account's ``GrpTRES=gres/gpu=N``). The cut follows the pools' sizes — a site with 256 Kueue GPUs and 64 Slurm
GPUs gives a team of quota 80 64 under Kueue and 16 under Slurm — clamped so that neither side is given more than
its pools hold while the other could take the rest. Its guarantee (``gpu_guarantee``, of each pool) is a Slurm QOS
whose ``GrpTRES`` is the guarantee up to the team's Slurm part.

The cut is fixed: a team whose Kueue part is idle cannot spend it through ``sbatch``. That is the price of one
number across two schedulers that share no accounting; the stack file moves it by resizing pools or the quota.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QuotaSplit:
    """A team's GPU quota on a site, as each scheduler enforces it."""

    kueue: int
    slurm: int

    @property
    def total(self) -> int:
        return self.kueue + self.slurm


def split_quota(quota: int, kueue_gpus: int, slurm_gpus: int) -> QuotaSplit:
    """``quota`` cut in proportion to the GPUs each scheduler owns on the site (round half up), then clamped so that
    each part fits its pools where the other can absorb the rest; the parts always add up to ``quota``."""
    if slurm_gpus <= 0:
        return QuotaSplit(quota, 0)
    if kueue_gpus <= 0:
        return QuotaSplit(0, quota)
    slurm = (2 * quota * slurm_gpus + kueue_gpus + slurm_gpus) // (2 * (kueue_gpus + slurm_gpus))
    slurm = min(max(slurm, quota - kueue_gpus, 0), slurm_gpus, quota)
    return QuotaSplit(quota - slurm, slurm)


def site_scheduler_gpus(site) -> tuple[int, int]:
    """GPUs of a site's Kueue pools and of its Slurm pools (grid / edge pools say who owns them; cloud pools are
    Kueue's)."""
    kueue = slurm = 0
    for pool in getattr(site, "gpu_pools", []):
        gpus = getattr(pool, "gpus_per_node", 0) * pool.max_nodes
        if getattr(pool, "scheduler", "kueue") == "slurm":
            slurm += gpus
        else:
            kueue += gpus
    return kueue, slurm
