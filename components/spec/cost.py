"""The spec's cost inputs: what usage ``lattice cost`` assumes (``cost_assumptions``) and what a grid or edge
site's GPUs cost its owners (``sites[].cost``, an internal recharge rate)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..standards import (
    COST_BUCKET_GIB,
    COST_LINK_GIB_PER_MONTH,
    COST_LOG_INGESTION_GIB_PER_MONTH,
    COST_NAT_GIB_PER_MONTH,
    COST_TRAIL_DATA_EVENTS_PER_MONTH,
)
from .storage import Strict
from .types import SiteName

GiB = Annotated[float, Field(ge=0, le=1e12)]


class SiteCostSpec(Strict):
    gpu_hour: float = Field(
        gt=0,
        le=1000,
        description="What one GPU-hour of the site costs its users, in USD (the institution's recharge rate); "
        "lattice cost prices the site's pools with it. Unset: the site's pools are reported unpriced.",
        examples=[2.1],
    )


class BudgetSpec(Strict):
    """What a stack, or a team, may spend a month: the policy pack's ``monthly-budget`` rule holds the plan to it,
    priced by the same code as ``lattice cost`` (advisory in dev, mandatory in prod, waivable like every rule)."""

    monthly_usd: float = Field(
        gt=0,
        le=1e10,
        description="USD a month the plan may cost (lattice cost's total; for a team, its chargeback share).",
        examples=[250000],
    )
    at: Literal["min", "desired", "max"] = Field(
        "max",
        description="Which of lattice cost's three columns is held to the budget: the pools at their minimum, "
        "desired or maximum nodes. Default max: autoscaling may spend that much without anyone applying a change.",
    )


class LinkTrafficSpec(Strict):
    sites: Annotated[list[SiteName], Field(min_length=2, max_length=2)] = Field(
        description="The two ends of a planned link (hub and spoke, or a pair).", examples=[["grid-hpc", "aws-use1"]]
    )
    gib_per_month: GiB = Field(
        description="GiB leaving each end of the link a month (checkpoints and datasets crossing sites).",
        examples=[51200],
    )


class CostAssumptionsSpec(Strict):
    """Usage the plan cannot say, for lattice cost: each value it uses is printed with the report."""

    bucket_gib: GiB = Field(
        COST_BUCKET_GIB, description="GiB stored in each object bucket (S3, S3 Express, GCS) not listed below."
    )
    buckets: dict[SiteName, GiB] = Field(
        default_factory=dict,
        description="GiB stored per bucket, by the bucket's name in storage.buckets / express_checkpoints.",
        examples=[{"datasets": 204800}],
    )
    log_ingestion_gib_per_month: GiB = Field(
        COST_LOG_INGESTION_GIB_PER_MONTH, description="GiB ingested into each log group or log bucket a month."
    )
    trail_data_events_per_month: float = Field(
        COST_TRAIL_DATA_EVENTS_PER_MONTH,
        ge=0,
        description="Data events a month of each CloudTrail trail that records data events.",
    )
    nat_gib_per_month: GiB = Field(COST_NAT_GIB_PER_MONTH, description="GiB processed by each NAT gateway a month.")
    link_gib_per_month: GiB = Field(
        COST_LINK_GIB_PER_MONTH, description="GiB leaving each end of each link a month, unless listed in links."
    )
    links: list[LinkTrafficSpec] = Field(default_factory=list, description="Traffic of particular links.")
    compute_discount: dict[SiteName, Annotated[float, Field(ge=0, lt=1)]] = Field(
        default_factory=dict,
        description="A savings-plan, reservation or committed-use discount on a cloud site's on-demand compute, "
        "as a fraction (0.3: 30 % off).",
        examples=[{"aws-use1": 0.3}],
    )

    def link_gib(self, a: str, b: str) -> float:
        for link in self.links:
            if set(link.sites) == {a, b}:
                return link.gib_per_month
        return self.link_gib_per_month
