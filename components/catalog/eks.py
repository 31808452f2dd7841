"""Amazon EKS Kubernetes versions and their support windows.

EKS supports a minor version for 14 months after its release (standard support), then for 12 more at an extra
charge per cluster hour (extended support); past that it upgrades the cluster itself. Sources: the "Amazon EKS
Kubernetes release calendar" (docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html); 1.29-1.31 as
transcribed from awsdocs/amazon-eks-user-guide (latest/ug/clusters/kubernetes-versions.adoc, December 2024),
1.32-1.35 as the calendar was reported in 2026 (endoflife.date/amazon-eks; the aws-samples eks-operation-review
calendar, verified 2026-04-24). Add a row when EKS announces a version; check it against the live calendar.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from .lookup import lookup

Support = Literal["standard", "extended", "ended"]


@dataclass(frozen=True)
class EksVersion:
    version: str
    end_of_standard_support: date
    end_of_extended_support: date

    def support_on(self, day: date) -> Support:
        """Which support a cluster on this version has on ``day`` (support ends at the start of the end date)."""
        if day < self.end_of_standard_support:
            return "standard"
        if day < self.end_of_extended_support:
            return "extended"
        return "ended"


EKS_VERSIONS = {
    row.version: row
    for row in (
        EksVersion("1.29", date(2025, 3, 23), date(2026, 3, 23)),
        EksVersion("1.30", date(2025, 7, 23), date(2026, 7, 23)),
        EksVersion("1.31", date(2025, 11, 26), date(2026, 11, 26)),
        EksVersion("1.32", date(2026, 3, 23), date(2027, 3, 23)),
        EksVersion("1.33", date(2026, 7, 29), date(2027, 7, 29)),
        EksVersion("1.34", date(2026, 12, 2), date(2027, 12, 2)),
        EksVersion("1.35", date(2027, 3, 27), date(2028, 3, 27)),
    )
}


def eks_version(version: str) -> EksVersion:
    return lookup(
        EKS_VERSIONS,
        version,
        kind="EKS Kubernetes version",
        hint="components/catalog/eks.py holds the versions EKS supports, with their support windows.",
    )
