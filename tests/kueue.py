"""What a site's Kueue objects add up to: the site cohort's shared pool plus every team queue's nominal quota."""

from __future__ import annotations

COHORT = "kubernetes:kueue.x-k8s.io/v1beta1:Cohort"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta1:ClusterQueue"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta1:LocalQueue"


def amount(resource: str, quantity: int | str) -> float:
    """A Kueue quantity as a number: CPUs, GiB of memory, accelerators."""
    if resource == "memory":
        text = str(quantity)
        return float(text.removesuffix("Ti")) * 1024 if text.endswith("Ti") else float(text.removesuffix("Gi"))
    return float(quantity)


def quotas(queue: dict) -> dict[str, dict[str, dict[str, float]]]:
    """flavor -> resource -> {"nominal", "borrowing"} of one Cohort or ClusterQueue."""
    (group,) = queue["inputs"]["spec"]["resourceGroups"]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for flavor in group["flavors"]:
        assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]  # the CRD's rule
        out[flavor["name"]] = {
            r["name"]: {
                "nominal": amount(r["name"], r["nominalQuota"]),
                **({"borrowing": amount(r["name"], r["borrowingLimit"])} if "borrowingLimit" in r else {}),
            }
            for r in flavor["resources"]
        }
    return out


def site_capacity(plan, site: str) -> dict[str, dict[str, float]]:
    """flavor -> resource -> what the site's cohort admits at most: its pool plus the team queues' nominal quotas."""
    total: dict[str, dict[str, float]] = {}
    queues = [plan.one(COHORT, f"{site}-kueue-cohort")] + [
        q for q in plan.by_type(CLUSTER_QUEUE) if q["inputs"]["spec"].get("cohort") == site
    ]
    for queue in queues:
        for flavor, resources in quotas(queue).items():
            for resource, quota in resources.items():
                total.setdefault(flavor, {}).setdefault(resource, 0.0)
                total[flavor][resource] += quota["nominal"]
    return total
