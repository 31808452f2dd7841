"""What the API server and Kueue do with a pod in a team namespace, so a walk can take a pod template through the
planned LimitRanges and ResourceQuotas and onto a pool's nodes.

The order and the rules, with their sources (kubernetes/kubernetes and kubernetes-sigs/kueue v0.19.2, commit
8eab68778fc1b52affe165fdf5af29d1e9b4f3cb):

1. API defaulting (``pkg/apis/core/v1/defaults.go``, ``SetDefaults_Pod``): a container that sets a limit but no
   request for a resource gets the limit as its request.
2. LimitRanger admission (``plugin/pkg/admission/limitranger/admission.go``, ``mergeContainerResources``; the
   "Limit Ranges" concept page): for each ``type: Container`` item, ``default`` fills each limit the container
   does not set and ``defaultRequest`` each request it does not set. "LimitRange does not check the consistency of
   the default values it applies": a defaulted limit may fall below the container's own request.
3. LimitRanger validation (same file, ``limitRequestRatioConstraint`` / ``minConstraint`` / ``maxConstraint``):
   every request and limit at least ``min``, at most ``max``; limit / request at most ``maxLimitRequestRatio``.
4. Pod validation (``pkg/apis/core/validation``, ``ValidateResourceRequirements``): a request above its limit is
   "must be less than or equal to <resource> limit"; an extended resource (``nvidia.com/gpu``, any name with a
   domain outside ``kubernetes.io``) cannot be overcommitted: it needs a limit, and request must equal limit.
5. ResourceQuota admission (``pkg/quota/v1/evaluator/core/pods.go``): a pod uses, per resource, the sum of its
   containers' requests (limits) or the largest of its init containers', whichever is more; ``requests.<r>`` (and
   the bare ``<r>`` for cpu / memory) count requests, ``limits.<r>`` limits, extended resources only as
   ``requests.<r>``. A quota that tracks ``requests.cpu`` (``limits.cpu``, and so on) refuses a pod with a
   container that sets no cpu request (limit): "must specify requests.cpu".
6. Kueue (``pkg/workload/resources.go``): ``handlePodLimitRange`` merges the namespace's LimitRange ``default`` into
   limits and ``defaultRequest`` into requests, ``handleLimitsToRequests`` copies limits to missing requests, then
   ``ValidateResources`` refuses a podset whose "requests must not exceed its limits" and ``ValidateLimitRange`` one
   outside min / max / ratio; the workload's usage is its pods' requests (``pkg/workload/workload.go``
   ``totalRequestsFromPodSets``: k8s.io/component-helpers ``resource.PodRequests``, where a native sidecar — an
   init container that restarts always — adds to the regular containers and to every init container after it),
   less the resources whose names start with a configured ``excludeResourcePrefixes`` (``dropExcludedResources``).
7. Scheduling, as far as labels and taints decide it (the scheduler's NodeAffinity and TaintToleration filter
   plugins; k8s.io/api core/v1 ``toleration.go``, ``ToleratesTaint``), of the pod Kueue starts once admitted to a
   flavor: the flavor's nodeLabels merged into its nodeSelector and its tolerations appended
   (``pkg/podset/podset.go``, ``Merge``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .quantities import CPU, MEMORY, amount, extended, parse

LIMIT_RANGE = "kubernetes:core/v1:LimitRange"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")  # PreferNoSchedule only lowers a node's score


def quantity(value: str | int | float) -> float:
    """A Kubernetes resource quantity as a number (cores, bytes, devices)."""
    return float(parse(value))


@dataclass
class Container:
    name: str
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)


@dataclass
class Admission:
    """A pod's containers after defaulting and LimitRanger, and every reason it would be refused."""

    containers: list[Container]
    errors: list[str]

    @property
    def admitted(self) -> bool:
        return not self.errors

    def usage(self, kind: str = "requests") -> dict[str, float]:
        total: dict[str, float] = {}
        for container in self.containers:
            for resource, value in getattr(container, kind).items():
                total[resource] = total.get(resource, 0.0) + quantity(value)
        return total


def container_items(limit_ranges: list[dict]) -> list[dict]:
    """The ``type: Container`` items of the namespace's LimitRanges (planned inputs)."""
    return [item for lr in limit_ranges for item in lr["spec"]["limits"] if item["type"] == "Container"]


def containers_of(pod_spec: dict) -> list[Container]:
    """A pod spec's regular containers as ``Container``s (their names, requests and limits)."""
    return [
        Container(
            c["name"],
            {k: str(v) for k, v in (c.get("resources") or {}).get("requests", {}).items()},
            {k: str(v) for k, v in (c.get("resources") or {}).get("limits", {}).items()},
        )
        for c in pod_spec.get("containers", [])
    ]


def admit(containers: list[Container], limit_ranges: list[dict]) -> Admission:
    """Steps 1-4 (and Kueue's step 6, which applies the same defaults and checks) for a pod's containers."""
    items = container_items(limit_ranges)
    out, errors = [], []
    for original in containers:
        limits = dict(original.limits)
        requests = {**limits, **original.requests}  # 1: limits stand in for missing requests
        for item in items:  # 2: LimitRanger fills what is still missing
            for resource, value in item.get("default", {}).items():
                limits.setdefault(resource, value)
            for resource, value in item.get("defaultRequest", {}).items():
                requests.setdefault(resource, value)
        where = f"container {original.name}"
        errors += limit_range_violations(where, requests, limits, items)  # 3
        for resource, value in requests.items():  # 4
            if resource in limits and quantity(value) > quantity(limits[resource]):
                errors.append(
                    f"{where}: requests.{resource}: Invalid value: {value!r}: must be less than or equal to "
                    f"{resource} limit of {limits[resource]} (Kueue: requests must not exceed its limits)"
                )
            if extended(resource) and resource not in limits:
                errors.append(f"{where}: Limit must be set for non overcommitable resources ({resource})")
            elif extended(resource) and quantity(value) != quantity(limits[resource]):
                errors.append(f"{where}: {resource} request must be equal to its limit")
        out.append(Container(original.name, requests, limits))
    return Admission(out, errors)


def limit_range_violations(where: str, requests: dict, limits: dict, items: list[dict]) -> list[str]:
    """Step 3 (and Kueue's ``ValidateLimitRange``): a container's requests and limits against the items' min, max
    and maxLimitRequestRatio."""
    errors = []
    for item in items:
        for resource, low in item.get("min", {}).items():
            for kind, values in (("request", requests), ("limit", limits)):
                if resource in values and quantity(values[resource]) < quantity(low):
                    errors.append(f"{where}: minimum {resource} usage is {low}, {kind} is {values[resource]}")
        for resource, high in item.get("max", {}).items():
            for kind, values in (("request", requests), ("limit", limits)):
                if resource in values and quantity(values[resource]) > quantity(high):
                    errors.append(f"{where}: maximum {resource} usage is {high}, {kind} is {values[resource]}")
        for resource, ratio in item.get("maxLimitRequestRatio", {}).items():
            known = resource in limits and resource in requests and quantity(requests[resource]) > 0
            if known and quantity(limits[resource]) / quantity(requests[resource]) > quantity(ratio):
                errors.append(f"{where}: {resource} max limit to request ratio is {ratio}")
    return errors


def quota_errors(admission: Admission, quotas: list[dict], pods: int = 1) -> list[str]:
    """Step 5: what the namespace's ResourceQuotas refuse of ``pods`` such pods (nothing else running)."""
    errors = []
    requests, limits = admission.usage("requests"), admission.usage("limits")
    for quota in quotas:
        name = quota["metadata"]["name"]
        for key, hard in quota["spec"]["hard"].items():
            kind, _, resource = key.partition(".") if key.startswith(("requests.", "limits.")) else ("", "", key)
            if resource not in (CPU, MEMORY) and not extended(resource):
                continue  # object counts and claim storage: not a pod's compute usage
            kind = kind or "requests"
            used = requests if kind == "requests" else limits
            missing = [c.name for c in admission.containers if resource not in getattr(c, kind)]
            if missing and not extended(resource):
                errors.append(f"failed quota: {name}: must specify {kind}.{resource} for: {','.join(missing)}")
                continue
            if used.get(resource, 0.0) * pods > quantity(hard) * (1 + 1e-9):
                errors.append(
                    f"exceeded quota: {name}, requested: {key}={used.get(resource, 0.0) * pods:g}, limited: "
                    f"{key}={hard}"
                )
    return errors


# --- Kueue's view of a pod (step 6) --------------------------------------------------------------------------------


def _merge_keep_first(first: dict | None, second: dict | None) -> dict:
    return {**(second or {}), **(first or {})}


def kueue_pod_spec(pod_spec: dict, limit_ranges: list[dict]) -> dict:
    """The pod spec as Kueue reads it for a workload: LimitRange defaults merged into every init and regular
    container (``handlePodLimitRange``: ``default`` into limits, ``defaultRequest`` into requests, what the container
    sets first), then limits copied to missing requests (``UseLimitsAsMissingRequestsInPod``)."""
    items = container_items(limit_ranges)
    defaults: dict = {}
    default_requests: dict = {}
    for item in items:  # limitrange.Summarize: the first LimitRange's value of a resource wins
        defaults = _merge_keep_first(defaults, item.get("default"))
        default_requests = _merge_keep_first(default_requests, item.get("defaultRequest"))

    def adjusted(container: dict) -> dict:
        resources = dict(container.get("resources") or {})
        limits = _merge_keep_first(resources.get("limits"), defaults)
        requests = _merge_keep_first(resources.get("requests"), default_requests)
        requests = _merge_keep_first(requests, limits)
        return {**container, "resources": {"limits": limits, "requests": requests}}

    return {
        **pod_spec,
        "initContainers": [adjusted(c) for c in pod_spec.get("initContainers", [])],
        "containers": [adjusted(c) for c in pod_spec.get("containers", [])],
    }


def requests_over_limits(pod_spec: dict) -> list[str]:
    """Kueue's ``ValidateResources``: the containers whose request of a resource is above its limit."""
    problems = []
    for kind in ("initContainers", "containers"):
        for index, container in enumerate(pod_spec.get(kind, [])):
            resources = container.get("resources") or {}
            limits = resources.get("limits") or {}
            above = sorted(
                name for name, value in (resources.get("requests") or {}).items()
                if name in limits and parse(value) > parse(limits[name])
            )  # fmt: skip
            if above:
                problems.append(f"{kind}[{index}]: Invalid value: {above}: requests must not exceed its limits")
    return problems


def pod_requests(pod_spec: dict, excluded_prefixes: tuple[str, ...] = ()) -> dict[str, int]:
    """What one pod of ``pod_spec`` requests, in Kueue's units (k8s.io/component-helpers ``PodRequests``), less the
    excluded resources: the regular containers and native sidecars summed, or the largest init container (with the
    sidecars started before it) where that is more; plus the pod's overhead."""

    def of(container: dict) -> dict[str, int]:
        requests = (container.get("resources") or {}).get("requests") or {}
        return {name: amount(name, value) for name, value in requests.items()}

    def add(into: dict[str, int], more: dict[str, int]) -> None:
        for name, value in more.items():
            into[name] = into.get(name, 0) + value

    total: dict[str, int] = {}
    for container in pod_spec.get("containers", []):
        add(total, of(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in pod_spec.get("initContainers", []):
        requests = of(container)
        if container.get("restartPolicy") == "Always":
            add(total, requests)
            add(sidecars, requests)
            running = dict(sidecars)
        else:
            running = dict(requests)
            add(running, sidecars)
        for name, value in running.items():
            init_peak[name] = max(init_peak.get(name, 0), value)
    for name, value in init_peak.items():
        total[name] = max(total.get(name, 0), value)
    add(total, {name: amount(name, value) for name, value in (pod_spec.get("overhead") or {}).items()})
    return {
        name: value for name, value in total.items()
        if not any(name.startswith(prefix) for prefix in excluded_prefixes)
    }  # fmt: skip


# --- scheduling (step 7) -------------------------------------------------------------------------------------------


def tolerates(toleration: dict, taint: dict) -> bool:
    """ToleratesTaint: an empty effect matches every effect, an empty key with ``Exists`` every key; ``Exists``
    ignores the value, ``Equal`` (the default operator) compares it."""
    if toleration.get("effect") and toleration["effect"] != taint["effect"]:
        return False
    if toleration.get("key") and toleration["key"] != taint["key"]:
        return False
    operator = toleration.get("operator", "Equal")
    if operator == "Exists":
        return True
    return operator == "Equal" and toleration.get("value", "") == taint.get("value", "")


def unschedulable_reasons(pod_spec: dict, node: dict) -> list[str]:
    """Why the scheduler would not place ``pod_spec`` on ``node`` ({"labels", "taints"}); empty: it would.
    nodeSelector must be a subset of the node's labels; every NoSchedule / NoExecute taint needs a toleration."""
    reasons = [
        f"node selector {key}={value} does not match"
        for key, value in pod_spec.get("nodeSelector", {}).items()
        if node["labels"].get(key) != value
    ]
    reasons += [
        f"untolerated taint {taint['key']}:{taint['effect']}"
        for taint in node.get("taints", [])
        if taint["effect"] in SCHEDULING_EFFECTS
        and not any(tolerates(t, taint) for t in pod_spec.get("tolerations", []))
    ]
    return reasons


def kueue_admitted(pod_spec: dict, flavor: dict) -> dict:
    """The pod as Kueue starts it once admitted to ``flavor`` (a ResourceFlavor's spec): the flavor's nodeLabels
    merged into its nodeSelector and its tolerations appended."""
    return {
        **pod_spec,
        "nodeSelector": {**pod_spec.get("nodeSelector", {}), **flavor.get("nodeLabels", {})},
        "tolerations": [*pod_spec.get("tolerations", []), *flavor.get("tolerations", [])],
    }
