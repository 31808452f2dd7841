"""GPU health on grid and edge clusters: a node condition when a GPU fails, and a taint that keeps new pods off it.

Lattice cannot replace an institution's hardware, so on grid and edge sites a sick GPU node must leave the pool by
itself until an operator drains and repairs it. Two pinned upstream pieces do that:

- **Node Problem Detector** (kubernetes/node-problem-detector v1.35.1, through the deliveryhero chart 2.4.1, the
  chart its README points to) reads the kernel log (``/dev/kmsg``) on every GPU node. Lattice's monitor
  ``gpu-xid-monitor.json`` turns the NVIDIA driver's fatal Xid lines (``NVRM: Xid (PCI:…): 79, …``) into the node
  condition ``GpuUnhealthy=True``, with the Xid as its reason and the kernel line as its message: 48 (double-bit ECC),
  64 (row remapping failed), 79 (fallen off the bus), 95 (uncontained ECC) — the four Xids on which EKS's node
  monitoring agent has Lattice replace an EKS node (``aws_gpu_node_pool.REPLACE_REASONS``), and the ones
  NVIDIA's Xid catalogue resolves with a GPU reset or node reboot (docs.nvidia.com/deploy/xid-errors).
- **Node Readiness Controller** (kubernetes-sigs/node-readiness-controller v0.5.0, its kustomization at the tag as its
  installation guide shows) keeps the taint ``readiness.k8s.io/lattice-gpu-unhealthy:NoSchedule`` on every GPU node
  (``nvidia.com/gpu.present=true``, the label the GPU operator puts on nodes with an NVIDIA GPU) whose
  ``GpuUnhealthy`` condition is not ``False``: a ``NodeReadinessRule`` in ``continuous`` mode with
  ``defaultStatus: "False"`` (the project's "problem gate": a node without the condition is healthy), and removes
  it when the condition clears. The CRD only accepts taint keys under ``readiness.k8s.io/``.

Running pods are left alone: the taint is NoSchedule (not NoExecute), and neither tool cordons, evicts or drains.
What runs on the node keeps running or fails on its own (a fatal Xid usually kills the CUDA processes); new pods —
Kueue-admitted training pods included, whose flavor tolerates only the ``nvidia.com/gpu`` taint — go elsewhere.

Why not the alternatives: NVIDIA's NVSentinel does detection, quarantine and drain in one product but needs a
MongoDB / PostgreSQL datastore and the GPU operator's standalone DCGM, and its remediation drains and reboots nodes,
which an on-premises site's operators do by hand; the GPU operator v25.3.4 itself only marks a GPU unhealthy in the
device plugin (allocatable drops, no node condition or taint); DCGM exporter's health counters are metrics, which
alert (``GpuXidCritical``) but do not keep pods off. NPD alone sets conditions and never taints; Kubernetes taints by
condition only its own (``TaintNodesByCondition``), so a controller that maps a custom condition to a taint is needed:
the Node Readiness Controller is SIG Node's (kubernetes.io/blog/2026/02/03/introducing-node-readiness-controller).

The condition is permanent until NPD stops seeing the Xid: the monitor reads the kernel's ring buffer back to boot
(``lookback`` longer than any uptime), so a restarted NPD finds the Xid again; a reboot clears the buffer, the
condition turns False and the taint goes (the GPU is reset; if it is still broken, the next Xid brings both back).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from .. import standards
from ..scheduling.slurm_config import NO_SCHEDULE_TOLERATION, WORKER_TOLERATION
from . import deploy_directory

NPD_CHART = "node-problem-detector"
NPD_CHART_REPO = "https://charts.deliveryhero.io/"
NPD_CHART_VERSION = "2.4.1"  # node-problem-detector v1.35.1 (the chart's appVersion and image.tag)
NPD_NAMESPACE = "node-problem-detector"
NRC_VERSION = "v0.5.0"
NRC_IMAGE = "registry.k8s.io/node-readiness-controller/node-readiness-controller"
# The kustomization (config/crd and config/default at NRC_VERSION, the image set to the release's), applied by
# pulumi-kubernetes' kustomize.v2.Directory from the project directory, as the Training Operator is.
NRC_KUSTOMIZATION = deploy_directory("node-readiness-controller")
NRC_NAMESPACE = "nrr-system"  # config/default: namespace nrr-system, namePrefix nrr-
NRC_API = "readiness.node.x-k8s.io/v1alpha1"
RULE_NAME = "lattice-gpu-unhealthy"

# The node condition NPD sets and the taint the controller keeps while it holds.
CONDITION = standards.GPU_UNHEALTHY_CONDITION
HEALTHY_REASON = "NoFatalGpuXid"
TAINT = standards.GPU_UNHEALTHY_TAINT
# The GPU operator labels every node with an NVIDIA GPU (controllers/state_manager.go, commonGPULabelKey).
GPU_NODES = {"nvidia.com/gpu.present": "true"}
MONITOR_FILE = "gpu-xid-monitor.json"
# NPD reads /dev/kmsg from max(boot, now - lookback) (pkg/util/helpers.go GetStartTime at v1.35.1): ten years is
# "since boot", so a restarted NPD re-finds an Xid the ring buffer still holds.
LOOKBACK = "87600h"


def xid_pattern(xid: int) -> str:
    """The kernel line the NVIDIA driver writes for an Xid, as NPD matches it (Go RE2, anchored at the end of the
    buffer: pkg/systemlogmonitor/log_buffer.go appends ``\\z``): ``NVRM: Xid (PCI:0000:3b:00): 79, pid=…, …``."""
    return rf"NVRM: Xid \(PCI:[0-9a-fA-F:.]+\): {xid},.*"


def xid_monitor() -> dict:
    """NPD's system log monitor for fatal GPU Xids: the condition, and a permanent rule per Xid."""
    return {
        "plugin": "kmsg",
        "logPath": "/dev/kmsg",
        "lookback": LOOKBACK,
        "bufferSize": 10,
        "source": "gpu-xid-monitor",
        "metricsReporting": True,
        "conditions": [
            {"type": CONDITION, "reason": HEALTHY_REASON, "message": "no fatal GPU Xid in the kernel log since boot"}
        ],
        "rules": [
            {"type": "permanent", "condition": CONDITION, "reason": f"GpuXid{xid}", "pattern": xid_pattern(xid)}
            for xid in standards.GPU_TAINT_XIDS
        ],
    }


def npd_values(slurm: bool = False) -> dict:
    """The node-problem-detector chart's values (checked against the pinned chart's values.yaml): the kernel monitor
    NPD ships plus Lattice's Xid monitor, on GPU nodes only. The chart's own tolerations (every NoSchedule taint)
    keep it on a node Lattice tainted, so it goes on reporting there; where Slurm owns pools (``slurm``), Slinky's
    NoExecute worker taint is tolerated too, or NPD would be evicted from Slurm's nodes and their Xids go unseen."""
    values: dict = {
        "settings": {
            "custom_monitor_definitions": {MONITOR_FILE: json.dumps(xid_monitor(), indent=2)},
            "log_monitors": ["/config/kernel-monitor.json", f"/custom-config/{MONITOR_FILE}"],
        },
        "nodeSelector": dict(GPU_NODES),
    }
    if slurm:
        values["tolerations"] = [dict(NO_SCHEDULE_TOLERATION), dict(WORKER_TOLERATION)]
    return values


def readiness_rule_spec() -> dict:
    """The NodeReadinessRule: taint a GPU node while its ``GpuUnhealthy`` condition is not False (absent: False)."""
    return {
        "conditions": [{"type": CONDITION, "requiredStatus": "False", "defaultStatus": "False"}],
        "taint": dict(TAINT),
        "enforcementMode": "continuous",
        "nodeSelector": {"matchLabels": dict(GPU_NODES)},
    }


@dataclass
class GpuHealthArgs:
    labels: dict[str, str] = field(default_factory=dict)
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    slurm: bool = False  # the site has pools Slurm owns (Slinky's worker taint on their nodes)


class GpuHealth(pulumi.ComponentResource):
    namespace: k8s.core.v1.Namespace
    detector: k8s.helm.v3.Release
    controller: k8s.kustomize.v2.Directory
    rule: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: GpuHealthArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:platform:GpuHealth", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        # NPD runs privileged (the chart's securityContext) to read /dev/kmsg.
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=NPD_NAMESPACE,
                labels={**args.labels, standards.POD_SECURITY_LABEL.format(mode="enforce"): "privileged"},
            ),
            opts=child,
        )
        self.detector = k8s.helm.v3.Release(
            f"{name}-node-problem-detector",
            name="node-problem-detector",
            chart=NPD_CHART,
            version=NPD_CHART_VERSION,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=NPD_CHART_REPO),
            namespace=NPD_NAMESPACE,
            values=npd_values(args.slurm),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.namespace]),
        )
        self.controller = k8s.kustomize.v2.Directory(
            f"{name}-node-readiness-controller", directory=NRC_KUSTOMIZATION, opts=child
        )
        self.rule = k8s.apiextensions.CustomResource(
            f"{name}-rule",
            api_version=NRC_API,
            kind="NodeReadinessRule",
            metadata={"name": RULE_NAME, "labels": args.labels},
            spec=readiness_rule_spec(),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.controller]),
        )
        self.register_outputs({"detector": self.detector.status, "taint": TAINT["key"]})
