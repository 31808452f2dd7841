"""What the API server and Kueue do with a pod in a team namespace, written down so a test can walk a pod template
through the planned LimitRanges and ResourceQuotas (``tests/kueue.py`` holds the ClusterQueue side).

The order and the rules, with their sources (kubernetes/kubernetes and kubernetes-sigs/kueue):

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
6. Kueue (v0.19.2, ``pkg/workload/resources.go``): ``handlePodLimitRange`` merges the namespace's LimitRange
   ``default`` into limits and ``defaultRequest`` into requests, ``handleLimitsToRequests`` copies limits to missing
   requests, then ``ValidateResources`` refuses a podset whose "requests must not exceed its limits" and
   ``ValidateLimitRange`` one outside min / max / ratio; the workload's usage is its pods' requests.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

LIMIT_RANGE = "kubernetes:core/v1:LimitRange"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
NATIVE = ("cpu", "memory", "ephemeral-storage", "storage")
SUFFIX = {
    "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50,
}  # fmt: skip


def quantity(value: str | int | float) -> float:
    """A Kubernetes resource quantity as a number (cores, bytes, devices)."""
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", str(value))
    if match is None or (match.group(2) and match.group(2) not in SUFFIX):
        raise ValueError(f"{value!r} is not a Kubernetes quantity")
    return float(match.group(1)) * SUFFIX.get(match.group(2), 1)


def extended(resource: str) -> bool:
    """Extended resources (a domain-qualified name outside kubernetes.io) cannot be overcommitted."""
    return "/" in resource and not resource.split("/", 1)[0].endswith("kubernetes.io")


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
        for item in items:  # 3
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


def quota_errors(admission: Admission, quotas: list[dict], pods: int = 1) -> list[str]:
    """Step 5: what the namespace's ResourceQuotas refuse of ``pods`` such pods (nothing else running)."""
    errors = []
    requests, limits = admission.usage("requests"), admission.usage("limits")
    for quota in quotas:
        name = quota["metadata"]["name"]
        for key, hard in quota["spec"]["hard"].items():
            kind, _, resource = key.partition(".") if key.startswith(("requests.", "limits.")) else ("", "", key)
            if resource not in ("cpu", "memory") and not extended(resource):
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
    from components.standards import TEAM_CPU_PER_ACCELERATOR, TEAM_MEMORY_GIB_PER_ACCELERATOR

    cpus = cpus if cpus is not None else TEAM_CPU_PER_ACCELERATOR * accelerators
    memory_gib = memory_gib if memory_gib is not None else TEAM_MEMORY_GIB_PER_ACCELERATOR * accelerators
    return math.floor(cpus * 90 / 192), math.floor(memory_gib * 1000 / 2048)


# Scheduling a pod onto a node, as far as labels and taints decide it (kubernetes/kubernetes, the scheduler's
# NodeAffinity and TaintToleration filter plugins: pkg/scheduler/framework/plugins/nodeaffinity and tainttoleration;
# k8s.io/api core/v1 toleration.go, Toleration.ToleratesTaint). Resources are the LimitRange / quota walk above.
SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")  # PreferNoSchedule only lowers a node's score


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
    merged into its nodeSelector and its tolerations appended (v0.19.2 pkg/podset/podset.go, Merge)."""
    return {
        **pod_spec,
        "nodeSelector": {**pod_spec.get("nodeSelector", {}), **flavor.get("nodeLabels", {})},
        "tolerations": [*pod_spec.get("tolerations", []), *flavor.get("tolerations", [])],
    }


# --- Pod Security admission ---------------------------------------------------------------------------------------
# The Pod Security Standards' checks, as kubernetes/pod-security-admission's policy package applies them (policy/
# check_*.go at 8f84a87c, July 2026; the "Pod Security Standards" page lists them), for the Kubernetes versions
# Lattice's clusters run (1.29 to 1.35, components/catalog/eks.py): where a check changed across those versions the
# stricter reading is taken (host probes refused as from 1.34; the sysctls allowed since 1.29; no user-namespace
# relaxation, which is 1.35's). Every check visits init, regular and ephemeral containers (visitContainers), and a
# pod-level value is judged on its own: a container that overrides it does not excuse it. It reads the pod spec only
# (not the deprecated seccomp / AppArmor annotations of the pod's metadata, which the job template never writes).
# baseline: no host namespaces (check_hostNamespaces.go), no privileged container (check_privileged.go), capabilities
# added only from the default set (check_capabilities_baseline.go), no hostPath volume (check_hostPathVolumes.go), no
# hostPort (check_hostPorts.go), no seccomp profile Unconfined on the pod or a container
# (check_seccompProfile_baseline.go), no AppArmor profile but RuntimeDefault / Localhost (check_appArmorProfile.go),
# SELinux type only container_t / container_init_t / container_kvm_t and no user or role (check_seLinuxOptions.go),
# procMount Default (check_procMount_baseline.go), only the safe sysctls (check_sysctls.go), no host in a probe or
# lifecycle handler (check_hostProbesAndhostLifecycle.go);
# restricted adds: allowPrivilegeEscalation false in every container (check_allowPrivilegeEscalation.go),
# runAsNonRoot true on the pod or on every container and false nowhere (check_runAsNonRoot.go), runAsUser 0 nowhere
# (check_runAsUser.go), a RuntimeDefault or Localhost seccomp profile on the pod or on every container and no other
# anywhere (check_seccompProfile_restricted.go), every capability dropped and only NET_BIND_SERVICE added
# (check_capabilities_restricted.go), and only these volume types (check_restrictedVolumes.go).
BASELINE_CAPABILITIES = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
    "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}  # fmt: skip
RESTRICTED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected",
    "secret",
}  # fmt: skip
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t"}
PROFILES = ("RuntimeDefault", "Localhost")  # the seccomp and AppArmor profile types restricted / baseline allow


def _probe_hosts(container: dict) -> list[str]:
    handlers = [container.get(p) for p in ("livenessProbe", "readinessProbe", "startupProbe")]
    # postStart / preStop; a lifecycle's stopSignal (Kubernetes 1.33) is a string, not a handler
    handlers += [h for h in container.get("lifecycle", {}).values() if isinstance(h, dict)]
    return [h[kind]["host"] for h in handlers if h for kind in ("httpGet", "tcpSocket") if h.get(kind, {}).get("host")]


def pod_security_violations(pod_spec: dict, level: str) -> list[str]:
    """What Pod Security admission at ``level`` (privileged, baseline or restricted) refuses in ``pod_spec``."""
    if level == "privileged":
        return []
    containers = [
        *pod_spec.get("initContainers", []), *pod_spec.get("containers", []), *pod_spec.get("ephemeralContainers", [])
    ]  # fmt: skip
    pod_context = pod_spec.get("securityContext", {})
    found: list[str] = []
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod_spec.get(key):
            found.append(f"{key}=true")
    for volume in pod_spec.get("volumes", []):
        kinds = set(volume) - {"name"}
        if "hostPath" in kinds:
            found.append(f"hostPath volume '{volume['name']}'")
        elif level == "restricted" and not kinds <= RESTRICTED_VOLUMES:
            found.append(f"volume '{volume['name']}' of type {sorted(kinds)}")
    # pod-level settings, each judged on its own
    seccomp = pod_context.get("seccompProfile", {}).get("type")
    if seccomp == "Unconfined" or (level == "restricted" and seccomp is not None and seccomp not in PROFILES):
        found.append(f"pod: seccompProfile {seccomp}")
    apparmor = pod_context.get("appArmorProfile", {}).get("type")
    if apparmor is not None and apparmor not in PROFILES:
        found.append(f"pod: appArmorProfile {apparmor}")
    for sysctl in pod_context.get("sysctls", []):
        if sysctl["name"] not in SAFE_SYSCTLS:
            found.append(f"pod: sysctl {sysctl['name']}")
    contexts = [("pod", pod_context)]
    if level == "restricted":
        if pod_context.get("runAsNonRoot") is False:
            found.append("pod: runAsNonRoot=false")
        if pod_context.get("runAsUser") == 0:
            found.append("pod: runAsUser=0")
    for c in containers:
        context = c.get("securityContext", {})
        name = c["name"]
        contexts.append((name, context))
        added = set(context.get("capabilities", {}).get("add", []))
        if context.get("privileged"):
            found.append(f"{name}: privileged")
        if added - BASELINE_CAPABILITIES:
            found.append(f"{name}: adds {sorted(added - BASELINE_CAPABILITIES)}")
        if any(port.get("hostPort") for port in c.get("ports", [])):
            found.append(f"{name}: hostPort")
        if context.get("seccompProfile", {}).get("type") == "Unconfined":
            found.append(f"{name}: seccompProfile Unconfined")
        if context.get("appArmorProfile", {}).get("type") not in (None, *PROFILES):
            found.append(f"{name}: appArmorProfile {context['appArmorProfile']['type']}")
        if context.get("procMount", "Default") != "Default":
            found.append(f"{name}: procMount {context['procMount']}")
        if _probe_hosts(c):
            found.append(f"{name}: probe or lifecycle host {_probe_hosts(c)}")
        if level != "restricted":
            continue
        if context.get("allowPrivilegeEscalation") is not False:
            found.append(f"{name}: allowPrivilegeEscalation != false")
        if context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is not True:
            found.append(f"{name}: runAsNonRoot != true")
        if context.get("runAsUser") == 0:
            found.append(f"{name}: runAsUser=0")
        profile = context.get("seccompProfile", pod_context.get("seccompProfile", {})).get("type")
        if profile not in PROFILES and profile != "Unconfined":  # Unconfined is reported above, at every level
            found.append(f"{name}: seccompProfile {profile}")
        if "ALL" not in context.get("capabilities", {}).get("drop", []):
            found.append(f"{name}: capabilities not dropping ALL")
        if added - {"NET_BIND_SERVICE"}:
            found.append(f"{name}: adds {sorted(added - {'NET_BIND_SERVICE'})} under restricted")
    for who, context in contexts:
        options = context.get("seLinuxOptions", {})
        if options.get("type", "") not in SELINUX_TYPES or options.get("user") or options.get("role"):
            found.append(f"{who}: seLinuxOptions {options}")
    return found
