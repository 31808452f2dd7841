"""GPU health on grid and edge clusters (components/platform/gpu_health.py): Node Problem Detector turns a fatal Xid
in the kernel log into the node condition GpuUnhealthy, the Node Readiness Controller keeps a NoSchedule taint on the
node while it holds, and the pods Lattice's job templates produce then schedule anywhere but there.

The walk: the driver's kernel line -> NPD's rule (its pattern, as NPD anchors it) -> the condition -> the planned
NodeReadinessRule (as the controller evaluates it: docs/book/src/user-guide/concepts.md and
examples/problem-gate-readiness.md at v0.5.0) -> the taint -> the scheduler's taint and selector filters
(lattice/route/pod_admission.py) over the pod `lattice job-template` writes, as Kueue admits it to the planned
flavor."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from lattice.cli import main
from lattice.components import standards
from lattice.components.platform import gpu_health
from lattice.route.pod_admission import kueue_admitted, tolerates, unschedulable_reasons
from tests.conftest import ROOT, read_yaml, value_paths
from tests.kueue import _structural, cel_errors

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gpu-health"
CHART_VALUES = FIXTURES / f"node-problem-detector-{gpu_health.NPD_CHART_VERSION}-values.yaml"
RULE_CRD = FIXTURES / f"nodereadinessrules-{gpu_health.NRC_VERSION}.yaml"
RELEASE = "kubernetes:helm.sh/v3:Release"
DIRECTORY = "kubernetes:kustomize/v2:Directory"
RULE = "kubernetes:readiness.node.x-k8s.io/v1alpha1:NodeReadinessRule"
NAMESPACE = "kubernetes:core/v1:Namespace"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
# What the NVIDIA driver writes (NVIDIA's Xid catalogue, docs.nvidia.com/deploy/xid-errors; the R535+ driver adds
# pid and name): one line per taint Xid, and lines that must not taint.
KERNEL_LINES = {
    48: "NVRM: Xid (PCI:0000:06:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) "
    "has been detected on GPU in the framebuffer at partition 4, subpartition 1.",
    64: "NVRM: Xid (PCI:0000:3b:00): 64, pid=2211, name=python, Row remapper error: failed to remap a row.",
    79: "NVRM: Xid (PCI:0000:b7:00): 79, pid=0, GPU has fallen off the bus.",
    95: "NVRM: Xid (PCI:0000:1a:00.0): 95, pid=4133, name=torchrun, Uncontained: FBHUB. RST: Yes, D-RST: No",
}
HARMLESS_LINES = (
    # an application's illegal memory access, on a GPU whose bus number is 48 and 79: not the GPU's fault
    "NVRM: Xid (PCI:0000:48:00): 13, pid=991, name=python, Graphics SM Warp Exception on (GPC 0, TPC 1)",
    "NVRM: Xid (PCI:0000:79:00): 31, pid=992, name=python, Ch 0000000a, intr 00000000. MMU Fault",
    "NVRM: GPU 0000:b7:00.0: GPU has fallen off the bus.",  # the driver's follow-up line, without an Xid
)


def npd_conditions(lines: list[str]) -> dict:
    """The GpuUnhealthy condition NPD reports after reading ``lines`` from /dev/kmsg: its monitor's default, then
    the last permanent rule that matched (pattern + ``\\z`` over the buffer's end, pkg/systemlogmonitor)."""
    monitor = gpu_health.xid_monitor()
    (default,) = monitor["conditions"]
    condition = {"type": default["type"], "status": "False", "reason": default["reason"]}
    for line in lines:
        for rule in monitor["rules"]:
            if re.search(rule["pattern"] + r"\Z", line):
                assert rule["type"] == "permanent" and rule["condition"] == default["type"]
                condition = {"type": rule["condition"], "status": "True", "reason": rule["reason"]}
    return condition


def readiness_taints(rule: dict, node: dict) -> list[dict]:
    """The taint a NodeReadinessRule keeps on ``node``: when the node matches its nodeSelector and a condition's
    status (its defaultStatus when the node lacks it) is not the requiredStatus."""
    if any(node["labels"].get(k) != v for k, v in rule["nodeSelector"]["matchLabels"].items()):
        return []
    statuses = {c["type"]: c["status"] for c in node.get("conditions", [])}
    unmet = [
        c
        for c in rule["conditions"]
        if statuses.get(c["type"], c.get("defaultStatus", "Unknown")) != c["requiredStatus"]
    ]
    return [dict(rule["taint"])] if unmet else []


def _plan_rule(plan, site: str) -> dict:
    return plan.one(RULE, f"{site}-addons-gpu-health-rule")


def test_values_exist_in_the_pinned_chart():
    chart = read_yaml(CHART_VALUES)
    values = gpu_health.npd_values()
    # custom_monitor_definitions and nodeSelector are free maps in the chart (empty there)
    assert chart["settings"]["custom_monitor_definitions"] == {} and chart["nodeSelector"] == {}
    free = {("settings", "custom_monitor_definitions"), ("nodeSelector",)}
    assert {p for p in value_paths(values) if p[:2] not in free and p[:1] not in free} <= value_paths(chart)
    # The chart mounts custom_monitor_definitions at /custom-config (templates/daemonset.yaml) and reads /dev/kmsg as
    # a privileged container; its tolerations keep it on a node Lattice tainted.
    assert chart["securityContext"] == {"privileged": True}
    assert any(tolerates(t, standards.GPU_UNHEALTHY_TAINT) for t in chart["tolerations"])
    kernel = "/config/kernel-monitor.json"  # NPD's own kernel monitor stays on
    assert chart["settings"]["log_monitors"][0] == values["settings"]["log_monitors"][0] == kernel
    assert chart["image"]["tag"] == "v1.35.1"


@pytest.mark.parametrize("xid", standards.GPU_TAINT_XIDS)
def test_a_fatal_xid_in_the_kernel_log_sets_the_condition(xid):
    line = KERNEL_LINES[xid]
    assert npd_conditions([line]) == {"type": "GpuUnhealthy", "status": "True", "reason": f"GpuXid{xid}"}
    # after other kernel chatter, and after NPD re-reads the ring buffer from boot (lookback past any uptime)
    assert npd_conditions(["eth0: link up", line])["status"] == "True"
    assert gpu_health.xid_monitor()["lookback"] == "87600h"


@pytest.mark.parametrize("line", HARMLESS_LINES)
def test_xids_outside_the_fatal_set_leave_the_node_healthy(line):
    assert npd_conditions([line]) == {"type": "GpuUnhealthy", "status": "False", "reason": "NoFatalGpuXid"}


def test_the_taint_xids_are_the_critical_ones_eks_replaces_a_node_for():
    from lattice.components.compute.aws_gpu_node_pool import REPLACE_REASONS

    assert set(standards.GPU_TAINT_XIDS) <= set(standards.GPU_CRITICAL_XIDS)
    assert {f"NvidiaXID{x}Error" for x in standards.GPU_TAINT_XIDS} <= set(REPLACE_REASONS["gpu"])
    assert sorted(KERNEL_LINES) == sorted(standards.GPU_TAINT_XIDS)


def test_the_rule_fits_the_pinned_crd_and_its_taint_rules():
    crd = read_yaml(RULE_CRD)
    assert f"{crd['spec']['group']}/{crd['spec']['versions'][0]['name']}" == gpu_health.NRC_API
    assert crd["spec"]["names"]["kind"] == "NodeReadinessRule" and crd["spec"]["scope"] == "Cluster"
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec = gpu_health.readiness_rule_spec()

    def errors(value: dict) -> list[str]:
        import jsonschema

        structural = sorted(e.message for e in jsonschema.Draft7Validator(_structural(schema)).iter_errors(value))
        return structural or cel_errors(schema, value)

    assert errors(spec) == []
    # the CRD's own rules bite: a taint outside readiness.k8s.io/ and a misspelt mode are refused
    assert errors({**spec, "taint": {**spec["taint"], "key": "lattice.dev/gpu-unhealthy"}}) == [
        "spec.taint: taint key must start with 'readiness.k8s.io/'"
    ]
    assert errors({**spec, "enforcementMode": "always"})


def test_the_controller_kustomization_pins_the_release():
    kustomization = read_yaml(ROOT / gpu_health.NRC_KUSTOMIZATION / "kustomization.yaml")
    assert kustomization["resources"] == [
        f"github.com/kubernetes-sigs/node-readiness-controller.git/config/{part}?ref={gpu_health.NRC_VERSION}"
        for part in ("crd", "default")
    ]
    assert kustomization["images"] == [
        {"name": "controller", "newName": gpu_health.NRC_IMAGE, "newTag": gpu_health.NRC_VERSION}
    ]


@pytest.mark.parametrize("site", ["grid-hpc", "edge-beamline"])
def test_every_grid_and_edge_site_with_gpu_pools_installs_it(prod_plan, site):
    prefix = f"{site}-addons-gpu-health"
    release = prod_plan.one(RELEASE, f"{prefix}-node-problem-detector")["inputs"]
    assert (release["chart"], release["version"], release["repositoryOpts"]["repo"], release["namespace"]) == (
        "node-problem-detector",
        "2.4.1",
        "https://charts.deliveryhero.io/",
        "node-problem-detector",
    )
    # grid-hpc has a pool Slurm owns: NPD tolerates Slinky's worker taint there (test_slurm_cluster.py)
    assert release["values"] == gpu_health.npd_values(slurm=site == "grid-hpc")
    monitor = json.loads(release["values"]["settings"]["custom_monitor_definitions"]["gpu-xid-monitor.json"])
    assert [r["reason"] for r in monitor["rules"]] == ["GpuXid48", "GpuXid64", "GpuXid79", "GpuXid95"]
    assert "/custom-config/gpu-xid-monitor.json" in release["values"]["settings"]["log_monitors"]
    namespace = prod_plan.one(NAMESPACE, f"{prefix}-namespace")
    assert namespace["inputs"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    directory = prod_plan.one(DIRECTORY, f"{prefix}-node-readiness-controller")
    assert directory["inputs"]["directory"] == gpu_health.NRC_KUSTOMIZATION
    rule = _plan_rule(prod_plan, site)
    assert rule["inputs"]["metadata"]["name"] == "lattice-gpu-unhealthy"
    assert rule["inputs"]["spec"] == {
        "conditions": [{"type": "GpuUnhealthy", "requiredStatus": "False", "defaultStatus": "False"}],
        "taint": {"key": "readiness.k8s.io/lattice-gpu-unhealthy", "value": "true", "effect": "NoSchedule"},
        "enforcementMode": "continuous",
        "nodeSelector": {"matchLabels": {"nvidia.com/gpu.present": "true"}},
    }
    assert directory["urn"] in rule["dependencies"]
    # after the GPU operator, whose labels (nvidia.com/gpu.present) select the nodes NPD runs on
    operator = prod_plan.one(RELEASE, f"{site}-addons-gpu-operator")
    assert operator["urn"] in prod_plan.one(RELEASE, f"{prefix}-node-problem-detector")["dependencies"]


def test_cloud_sites_repair_instead_of_tainting(prod_plan):
    """EKS replaces the node (node repair) and GKE repairs it itself: no NPD or readiness rule there."""
    names = {r["name"] for r in prod_plan.by_type(RULE)}
    assert names == {"grid-hpc-addons-gpu-health-rule", "edge-beamline-addons-gpu-health-rule"}
    releases = {r["name"] for r in prod_plan.by_type(RELEASE) if r["inputs"]["chart"] == "node-problem-detector"}
    assert releases == {f"{s}-addons-gpu-health-node-problem-detector" for s in ("grid-hpc", "edge-beamline")}


def _job_template_pod(capsys) -> dict:
    args = ["--stack", "prod", "--site", "grid-hpc", "--pool", "ib-h100", "--team", "climate"]
    assert main(["job-template", *args]) == 0
    jobset = yaml.safe_load(capsys.readouterr().out)
    (job,) = jobset["spec"]["replicatedJobs"]
    # what the docs' repair table says of a lost pod: it fails the job, no restart (resubmit, resume from checkpoint)
    assert jobset["spec"]["failurePolicy"] == {"maxRestarts": 0} and job["template"]["spec"]["backoffLimit"] == 0
    return job["template"]["spec"]["template"]["spec"]


def _gpu_node(flavor: dict, conditions: list[dict]) -> dict:
    """A node of the flavor's pool as the GPU operator labels it, with the GPU taint the flavor tolerates."""
    return {
        "labels": {**flavor["nodeLabels"], **gpu_health.GPU_NODES},
        "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        "conditions": conditions,
    }


def test_a_job_template_pod_does_not_schedule_on_a_node_with_a_fatal_xid(prod_plan, capsys):
    flavor = prod_plan.one(FLAVOR, "grid-hpc-kueue-ib-h100")["inputs"]["spec"]
    pod = kueue_admitted(_job_template_pod(capsys), flavor)
    rule = _plan_rule(prod_plan, "grid-hpc")["inputs"]["spec"]

    healthy = _gpu_node(flavor, [npd_conditions(["NVRM: loading NVIDIA UNIX x86_64 Kernel Module"])])
    healthy["taints"] += readiness_taints(rule, healthy)
    assert unschedulable_reasons(pod, healthy) == []

    sick = _gpu_node(flavor, [npd_conditions([KERNEL_LINES[79]])])
    sick["taints"] += readiness_taints(rule, sick)
    assert unschedulable_reasons(pod, sick) == ["untolerated taint readiness.k8s.io/lattice-gpu-unhealthy:NoSchedule"]
    # a node NPD has not reported on yet is healthy (defaultStatus), and the reboot that clears the Xid untaints it
    assert readiness_taints(rule, _gpu_node(flavor, [])) == []
    # NoSchedule: the scheduler keeps new pods off; running pods would go only with NoExecute
    assert rule["taint"]["effect"] == "NoSchedule"


def test_an_edge_inference_pod_stays_off_a_sick_node_too(prod_plan):
    flavor = prod_plan.one(FLAVOR, "edge-beamline-kueue-infer-l40s")["inputs"]["spec"]
    pod = kueue_admitted({"containers": [{"name": "serve", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}, flavor)
    rule = _plan_rule(prod_plan, "edge-beamline")["inputs"]["spec"]
    sick = _gpu_node(flavor, [npd_conditions([KERNEL_LINES[48]])])
    sick["taints"] += readiness_taints(rule, sick)
    assert unschedulable_reasons(pod, sick) == ["untolerated taint readiness.k8s.io/lattice-gpu-unhealthy:NoSchedule"]


def test_the_scheduling_walk_follows_kubernetes_toleration_rules():
    taint = {"key": "readiness.k8s.io/lattice-gpu-unhealthy", "value": "true", "effect": "NoSchedule"}
    assert tolerates({"operator": "Exists"}, taint)  # tolerates everything
    assert tolerates({"operator": "Exists", "effect": "NoSchedule"}, taint)  # NPD's, the chart's default
    assert tolerates({"key": taint["key"], "value": "true"}, taint)  # Equal is the default operator
    assert not tolerates({"key": taint["key"], "value": "false"}, taint)
    assert not tolerates({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}, taint)
    assert not tolerates({"operator": "Exists", "effect": "NoExecute"}, taint)
    node = {"labels": {"a": "1"}, "taints": [taint, {"key": "soft", "effect": "PreferNoSchedule"}]}
    assert unschedulable_reasons({"nodeSelector": {"a": "2"}}, node) == [
        "node selector a=2 does not match",
        "untolerated taint readiness.k8s.io/lattice-gpu-unhealthy:NoSchedule",
    ]
    assert unschedulable_reasons({"tolerations": [{"operator": "Exists"}]}, node) == []
