"""Slurm on prod's grid through Slinky (issue 37): the operator and its charts at the pinned versions with values the
charts know, the Slurm cluster as custom resources the pinned CRDs accept (CEL rules included), one owner per pool,
one team quota across Kueue and Slurm, one fabric in topology.yaml, and secrets that stay secrets."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from lattice.components.scheduling import slurm_config
from lattice.components.scheduling.slurm_accounts import SlurmAccount, accounts_script
from lattice.components.scheduling.slurm_cluster import (
    CERT_MANAGER_VERSION,
    SLINKY_VERSION,
    SLURMRESTD_PORT,
    SSH_PORT,
    cert_manager_values,
    operator_values,
)
from lattice.components.spec import load_stack_file
from lattice.components.spec.teams import team_on_site
from tests import slurm_grammar
from tests.conftest import read_yaml, spec_with, value_paths
from tests.kueue import CLUSTER_QUEUE, quotas
from tests.slinky import KINDS, crd_errors, pod_errors, slinky_type

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PROD = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.prod.yaml"
RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
QUOTA = "kubernetes:core/v1:ResourceQuota"
NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"


def slurm_files(plan, site: str = "grid-hpc") -> dict[str, str]:
    return plan.one(CONFIG_MAP, f"{site}-slurm-config-files")["inputs"]["data"]


def slinky(plan, kind: str) -> list[dict]:
    return plan.by_type(slinky_type(kind))


# --- the charts ------------------------------------------------------------------------------------------------


def test_the_operator_charts_are_pinned_in_lock_step_after_cert_manager(prod_plan):
    crds = prod_plan.one(RELEASE, "grid-hpc-slurm-crds")
    operator = prod_plan.one(RELEASE, "grid-hpc-slurm-operator")
    cert_manager = prod_plan.one(RELEASE, "grid-hpc-slurm-cert-manager")
    assert crds["inputs"]["chart"] == "oci://ghcr.io/slinkyproject/charts/slurm-operator-crds"
    assert operator["inputs"]["chart"] == "oci://ghcr.io/slinkyproject/charts/slurm-operator"
    assert crds["inputs"]["version"] == operator["inputs"]["version"] == SLINKY_VERSION == "1.2.1"
    assert "values" not in crds["inputs"]  # the crds chart has no values (helm/slurm-operator-crds/values.yaml)
    assert cert_manager["inputs"]["version"] == CERT_MANAGER_VERSION
    assert cert_manager["inputs"]["chart"] == "oci://quay.io/jetstack/charts/cert-manager"
    assert {crds["urn"], cert_manager["urn"]} <= set(operator["dependencies"])
    assert operator["inputs"]["values"] == operator_values()


def test_operator_values_exist_in_the_pinned_chart():
    chart = json.loads((FIXTURES / f"slinky-v{SLINKY_VERSION}" / "slurm-operator-values.json").read_text())
    assert value_paths(operator_values()) <= value_paths(chart)
    assert chart["crds"]["enabled"] is False and chart["certManager"]["enabled"] is True  # what Lattice says again


def test_cert_manager_values_pass_the_charts_schema():
    schema = json.loads((FIXTURES / f"cert-manager-{CERT_MANAGER_VERSION}" / "values.schema.json").read_text())
    chart = json.loads((FIXTURES / f"cert-manager-{CERT_MANAGER_VERSION}" / "values.json").read_text())
    jsonschema.validate(cert_manager_values(), schema)
    assert value_paths(cert_manager_values()) <= value_paths(chart)
    with pytest.raises(jsonschema.ValidationError):  # the schema refuses what the chart does not know
        jsonschema.validate({"crds": {"enable": True}}, schema)


# --- the custom resources against the CRDs ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_every_slinky_object_passes_its_crd_and_cel_rules(prod_plan, kind):
    objects = slinky(prod_plan, kind)
    assert objects, kind
    for resource in objects:
        assert resource["inputs"]["apiVersion"] == "slinky.slurm.net/v1beta1"
        assert resource["inputs"]["metadata"]["namespace"] == "slurm"
        assert crd_errors(kind, resource["inputs"]["spec"]) == [], resource["name"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_operator_can_make_every_pod_and_claim_of_the_slurm_cluster(prod_plan, kind):
    # The CRDs accept an object whose helper containers have no image and whose state-save claim has no access
    # mode; the operator then builds a StatefulSet and pods the API server refuses, so slurmctld, slurmd and the
    # login pods never start while pulumi up reports success.
    for resource in slinky(prod_plan, kind):
        assert pod_errors(kind, resource["inputs"]["spec"]) == [], resource["name"]


def test_the_pod_check_refuses_what_the_api_server_would():
    controller = {"slurmctld": {"image": "slurmctld"}, "persistence": {"resources": {"requests": {"storage": "4Gi"}}}}
    assert pod_errors("Controller", controller) == [
        "logfile: image: Required value",
        "statesave claim: spec.accessModes: Required value: at least 1 access mode is required",
    ]
    assert pod_errors("Controller", {**controller, "persistence": {"enabled": False}, "logfile": {"image": "a"}}) == []
    assert pod_errors("Controller", {**controller, "logfile": {"image": "a"}, "inplaceReconfigure": True})[0] == (
        "reconfigure: image: Required value"
    )
    assert pod_errors("LoginSet", {"login": {"image": "login"}}) == ["initconf: image: Required value"]
    assert pod_errors("NodeSet", {"slurmd": {"image": "slurmd"}}) == ["logfile: image: Required value"]


def test_the_crd_check_refuses_what_the_api_server_would():
    controller = {"clusterName": "grid-hpc", "jwtKeyRef": {"name": "slurm-auth-jwt", "key": "jwt.key"}}
    assert crd_errors("Controller", controller) == ["spec: slurmKeyRef must be set when external is false"]
    assert crd_errors("NodeSet", {"scalingMode": "Daemonset"})  # enum: DaemonSet
    assert crd_errors("NodeSet", {"gres": "gpu:h100:8"})  # no such field: pruned by the API server
    assert crd_errors("NodeSet", {"partition": {"enabled": True, "config": "State=UP\nMaxTime=1"}})  # one line
    schedule = {
        "controllerRef": {"name": "slurm"},
        "updateStrategy": {"type": "ScheduledUpdate", "scheduledUpdate": {}},
    }
    assert crd_errors("NodeSet", schedule) == [
        "spec.updateStrategy: scheduledUpdate.startTime and scheduledUpdate.duration are required when type is "
        "ScheduledUpdate"
    ]


def test_the_objects_refer_to_each_other_and_the_secrets_and_config_they_need(prod_plan):
    (controller,) = slinky(prod_plan, "Controller")
    spec = controller["inputs"]["spec"]
    assert spec["clusterName"] == "grid-hpc"
    assert spec["accountingRef"] == {"name": "slurm"}
    assert spec["slurmKeyRef"] == {"name": "slurm-auth-slurm", "key": "slurm.key"}
    assert spec["jwtKeyRef"] == {"name": "slurm-auth-jwt", "key": "jwt.key"}
    assert spec["configFileRefs"] == [{"name": "slurm-config-files"}]
    # The webhook reads the ConfigMap when the Controller is created (internal/webhook/controller_webhook.go) and
    # refuses slurm.conf / slurmdbd.conf in it; what Lattice puts there is what it knows.
    files = prod_plan.one(CONFIG_MAP, "grid-hpc-slurm-config-files")
    assert files["urn"] in controller["dependencies"]
    assert set(files["inputs"]["data"]) == {"gres.conf", "cgroup.conf", "topology.yaml", "plugstack.conf"}
    assert files["inputs"]["data"]["plugstack.conf"] == "include /usr/share/pyxis/*\n"
    (accounting,) = slinky(prod_plan, "Accounting")
    storage = accounting["inputs"]["spec"]["storageConfig"]
    assert storage == {
        "host": "mariadb.grid.example.edu",
        "port": 3306,
        "database": "slurm_acct_db",
        "username": "slurm",
        "passwordKeyRef": {"name": "slurm-database", "key": "password"},
    }
    (login,) = slinky(prod_plan, "LoginSet")
    assert login["inputs"]["spec"]["sssdConfRef"] == {"name": "slurm-sssd-conf", "key": "sssd.conf"}
    for kind in ("LoginSet", "RestApi", "NodeSet"):
        for resource in slinky(prod_plan, kind):
            assert resource["inputs"]["spec"]["controllerRef"] == {"name": "slurm"}
            assert controller["urn"] in resource["dependencies"]


def prod_stack() -> tuple[dict, dict]:
    """prod's spec and the rest of its config, to plan an edited copy."""
    config = read_yaml(PROD)["config"]
    return config.pop("lattice:spec"), config


def test_secrets_stay_secrets_end_to_end(plan_spec):
    spec, config = prod_stack()
    secrets = {"lattice:slurmDbPassword": "db-pass-7f3a91", "lattice:ldapBindPassword": "bind-pass-2c8e44"}
    plan = plan_spec(spec, secrets=secrets, **config)
    text = plan.to_json()
    assert "db-pass-7f3a91" not in text and "bind-pass-2c8e44" not in text
    for name in (
        "grid-hpc-slurm-database",
        "grid-hpc-slurm-sssd",
        "grid-hpc-slurm-auth-slurm",
        "grid-hpc-slurm-auth-jwt",
    ):
        assert plan.one("kubernetes:core/v1:Secret", name)["inputs"]["stringData"]["value"] == "[secret]"
    # and the values reach the Secrets: the in-memory state holds them
    state = json.dumps(plan.state(plan.one("kubernetes:core/v1:Secret", "grid-hpc-slurm-sssd")))
    assert "bind-pass-2c8e44" in state and "ldaps://ldap.grid.example.edu" in state
    assert "db-pass-7f3a91" in json.dumps(plan.state(plan.one("kubernetes:core/v1:Secret", "grid-hpc-slurm-database")))
    for release in plan.by_type(RELEASE):
        assert "pass" not in json.dumps(release["inputs"].get("values", {})).lower() or "slurm" not in release["name"]


# --- one pool, one owner ------------------------------------------------------------------------------------------


def test_the_slurm_pool_is_a_nodeset_and_no_kueue_flavor(prod_plan):
    flavors = {f["inputs"]["metadata"]["name"] for f in prod_plan.by_type(FLAVOR) if "grid-hpc" in f["name"]}
    assert flavors == {"ib-h100"}
    (nodeset,) = slinky(prod_plan, "NodeSet")
    spec = nodeset["inputs"]["spec"]
    assert nodeset["inputs"]["metadata"]["name"] == "ib-h100-slurm"
    assert spec["scalingMode"] == "DaemonSet"
    assert spec["template"]["spec"]["nodeSelector"] == {"lattice.dev/pool": "ib-h100-slurm"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec["template"]["spec"][
        "tolerations"
    ]
    # slurmd holds the node's GPUs in Kubernetes' books too: no pod is given them beside it.
    assert spec["slurmd"]["resources"] == {"limits": {"nvidia.com/gpu": 8}}
    assert spec["extraConf"] == "Gres=gpu:h100:8"
    # the site's file systems, where users' jobs read and write: Lustre and scratch by host path, home by NFS
    assert spec["slurmd"]["volumeMounts"] == [
        {"name": "site-lustre", "mountPath": "/lustre"},
        {"name": "site-home", "mountPath": "/home"},
        {"name": "site-scratch", "mountPath": "/scratch"},
        # and the GPU health check (tests/components/scheduling/test_slurm_health.py)
        {"name": "lattice-gpu-health", "mountPath": "/etc/lattice/gpu-health", "readOnly": True},
    ]
    assert {v["name"]: {k: x for k, x in v.items() if k != "name"} for v in spec["template"]["spec"]["volumes"]} == {
        "site-lustre": {"hostPath": {"path": "/lustre", "type": "Directory"}},
        "site-home": {"nfs": {"server": "nfs.grid.example.edu", "path": "/export/home", "readOnly": False}},
        "site-scratch": {"hostPath": {"path": "/scratch"}},
        "lattice-gpu-health": {"configMap": {"name": "slurm-gpu-health", "defaultMode": 0o755}},
    }
    (login,) = slinky(prod_plan, "LoginSet")
    assert login["inputs"]["spec"]["login"]["volumeMounts"] == spec["slurmd"]["volumeMounts"][:3]
    assert spec["partition"] == {
        "enabled": True,
        "config": "State=UP MaxTime=UNLIMITED DefMemPerGPU=235929 DefCpuPerGPU=28 Topology=ib-h100-slurm",
    }
    # The cohort's capacity is Kueue's pool alone: 32 nodes x 8.
    cohort = prod_plan.one("kubernetes:kueue.x-k8s.io/v1beta2:Cohort", "grid-hpc-kueue-cohort")
    assert set(quotas(cohort)) == {"ib-h100"}


def test_the_gpu_operator_stays_on_slurms_nodes(prod_plan):
    release = prod_plan.one(RELEASE, "grid-hpc-addons-gpu-operator")["inputs"]["values"]
    assert release["daemonsets"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "nodeset.slinky.slurm.net/worker", "operator": "Equal", "effect": "NoExecute"},
    ]
    chart = read_yaml(FIXTURES / "gpu-operator-v25.3.4" / "values.yaml")
    assert chart["daemonsets"]["tolerations"] == release["daemonsets"]["tolerations"][:1]  # the chart's, kept
    aws = prod_plan.one(RELEASE, "aws-use1-addons-gpu-operator")["inputs"]["values"]
    assert "daemonsets" not in aws


def test_the_outputs_tell_the_operator_how_to_taint_and_annotate_the_nodes(prod_plan):
    slurm = prod_plan.outputs["sites"]["grid-hpc"]["slurm"]
    pool = slurm["pools"]["ib-h100-slurm"]
    assert pool["taint"] == (
        "kubectl taint nodes -l lattice.dev/pool=ib-h100-slurm nodeset.slinky.slurm.net/worker=:NoExecute"
    )
    assert pool["topology_annotation"] == (
        "topology.slinky.slurm.net/spec=ib-h100-slurm:ib-h100-slurm:<fabric.topograph.run/tier-1>:"
        "<fabric.topograph.run/tier-0>"
    )
    assert prod_plan.outputs["sites"]["grid-hpc"]["gpus"] == 256 + 64


def test_the_outputs_say_an_unannotated_node_runs_no_job_of_its_tree_partition(prod_plan):
    # The partition names the pool's tree; Slurm's tree plugin places jobs only on nodes under a switch of it, so a
    # node the operator did not annotate registers and sits idle (the how-to once said it still served).
    (nodeset,) = slinky(prod_plan, "NodeSet")
    assert "Topology=ib-h100-slurm" in nodeset["inputs"]["spec"]["partition"]["config"]
    pool = prod_plan.outputs["sites"]["grid-hpc"]["slurm"]["pools"]["ib-h100-slurm"]
    assert pool["without_annotation"] == (
        "a node without topology.slinky.slurm.net/spec registers but runs no job of partition ib-h100-slurm: "
        "annotate every node of the pool"
    )


# --- one team quota -------------------------------------------------------------------------------------------------


def slurm_grp_tres(plan, site: str) -> dict[str, int]:
    """team -> the GrpTRES=gres/gpu=N its account is set to by the accounts Job's script."""
    script = plan.one(CONFIG_MAP, f"{site}-slurm-accounts-script")["inputs"]["data"]["accounts.sh"]
    found = re.findall(r"modify account where name=(\S+) cluster=\"\$CLUSTER\" set GrpTRES=gres/gpu=(\d+) ", script)
    return {team: int(gpus) for team, gpus in found}


def kueue_ceiling(plan, site: str, namespace: str, queue: str) -> float:
    """The most GPUs Kueue lets the team hold on the site: its queue's nominal plus borrowing on every flavor, capped by
    its namespace's GPU quota."""
    cq = next(q for q in plan.by_type(CLUSTER_QUEUE) if q["inputs"]["metadata"]["name"] == queue)
    total = sum(r["nvidia.com/gpu"]["nominal"] + r["nvidia.com/gpu"]["borrowing"] for r in quotas(cq).values())
    quota = next(
        q for q in plan.by_type(QUOTA)
        if q["name"].startswith(f"{site}-") and q["inputs"]["metadata"]["namespace"] == namespace
        and q["inputs"]["metadata"]["name"] == "gpu"
    )  # fmt: skip
    return min(total, float(quota["inputs"]["spec"]["hard"]["requests.nvidia.com/gpu"]))


def test_each_teams_kueue_and_slurm_shares_add_up_to_its_one_quota(prod_plan):
    spec = load_stack_file(PROD).spec
    site = next(s for s in spec.sites if s.name == "grid-hpc")
    grp = slurm_grp_tres(prod_plan, "grid-hpc")
    checked = 0
    for team in spec.teams:
        quota = team.quota_for(site.name)
        if not team.on(site) or not quota:
            continue
        kueue = kueue_ceiling(prod_plan, "grid-hpc", team.namespace_name, f"grid-hpc-{team.name}")
        assert kueue + grp[team.name] == quota, team.name
        checked += 1
    assert checked == 2
    assert grp == {"climate": 16, "materials": 8}
    # The Kueue side is what it was before the Slurm pool came: 64 and 32.
    assert kueue_ceiling(prod_plan, "grid-hpc", "climate", "grid-hpc-climate") == 64


def test_the_guarantee_is_a_qos_up_to_the_teams_slurm_share():
    script = accounts_script("grid-hpc", [SlurmAccount("climate", 16, 16), SlurmAccount("ops", 4, 0)], 64)
    assert "apply modify qos where name=climate set Priority=100 GrpTRES=gres/gpu=16 Preempt=standby" in script
    assert "apply modify qos where name=standby set Priority=0 PreemptMode=requeue GrpTRES=gres/gpu=64" in script
    assert "set GrpTRES=gres/gpu=16 QOS=climate,standby \\\n  DefaultQOS=climate" in script
    # no guarantee: its jobs run preemptible by default
    assert "set GrpTRES=gres/gpu=4 QOS=ops,standby \\\n  DefaultQOS=standby" in script


def test_standby_leaves_no_gpu_of_slurms_pool_idle_forever(prod_plan):
    """prod's Slurm pool holds 64 H100s and the accounts' shares sum to 24 (climate 16, materials 8). Read from the
    planned sacctmgr script with Slurm's limit hierarchy (tests/slurm_limits.py, acct_policy.c at slurm-25-11-7-1),
    the teams' own QOS reach their 24, and the standby QOS every GPU of the pool: its own GrpTRES holds standby jobs,
    not the accounts' shares. On the previous main standby set no GPU limit, so the accounts' GrpTRES capped it and
    at most 48 of the 64 could ever be given out (16 of them only when standby jobs started first)."""
    from tests.slurm_limits import parse, reachable_gpus

    script = prod_plan.one(CONFIG_MAP, "grid-hpc-slurm-accounts-script")["inputs"]["data"]["accounts.sh"]
    limits = parse(script)
    pool = 8 * 8  # ib-h100-slurm: 8 nodes of 8 H100s
    assert reachable_gpus(limits, pool, without=frozenset({"standby"})) == 24
    assert reachable_gpus(limits, pool) == pool
    assert limits.accounts == {"climate": (16, ("climate", "standby")), "materials": (8, ("materials", "standby"))}
    assert limits.qos == {"standby": pool, "climate": 16, "materials": 8}
    # The guarantee preempts standby, which is requeued (sacctmgr(1) Preempt, PreemptMode; slurm.conf PreemptType).
    assert "set Priority=100 GrpTRES=gres/gpu=16 Preempt=standby" in script
    conf = slinky(prod_plan, "Controller")[0]["inputs"]["spec"]["extraConf"]
    assert "PreemptType=preempt/qos\n" in conf and "PreemptMode=REQUEUE\n" in conf and "JobRequeue=1\n" in conf


def test_the_limit_model_follows_slurms_hierarchy():
    """tests/slurm_limits.py against the cases resource_limits.shtml and acct_policy.c decide: a QOS limit replaces
    the association's for its jobs; a QOS without one leaves them to the account's, counted over all its jobs."""
    from tests.slurm_limits import Limits, reachable_gpus

    # no QOS limit: the account's GrpTRES caps everything it runs
    assert reachable_gpus(Limits({"normal": None}, {"a": (16, ("normal",))}), 64) == 16
    # a QOS limit above the account's: the QOS's holds (first defined in the hierarchy)
    assert reachable_gpus(Limits({"big": 40}, {"a": (16, ("big",))}), 64) == 40
    # one QOS with a limit, one without: both can run, the second under the account's cap
    assert reachable_gpus(Limits({"g": 16, "s": None}, {"a": (16, ("g", "s"))}), 64) == 32
    # a QOS's GrpTRES is shared by every account that uses it, and the pool bounds it all
    assert reachable_gpus(Limits({"s": 30}, {"a": (8, ("s",)), "b": (8, ("s",))}), 64) == 30
    assert reachable_gpus(Limits({"s": 100}, {"a": (8, ("s",))}), 64) == 64


def test_an_rdma_job_takes_slurmds_locked_memory_limit_not_the_login_pods(prod_plan):
    """slurm.conf(5) PropagateResourceLimits at slurm-25-11-7-1: without PropagateResourceLimits(Except) every limit of
    the submitting shell (the login pod's) is applied to the job; with MEMLOCK excepted the job keeps slurmd's, as
    Slurm's FAQ (#memlock) advises for RDMA. On the previous main the login pod's MEMLOCK followed every job."""
    conf = dict(
        line.split("=", 1) for line in slinky(prod_plan, "Controller")[0]["inputs"]["spec"]["extraConf"].splitlines()
    )
    assert "PropagateResourceLimits" not in conf  # only one of the two may be set
    propagated = set(slurm_grammar.RESOURCE_LIMITS) - set(conf.get("PropagateResourceLimitsExcept", "").split(","))
    assert "MEMLOCK" not in propagated and "STACK" in propagated


# --- what a job that names no memory is given ----------------------------------------------------------------------

# An 8 x H100 node of prod's Slurm pool (host: 224 CPUs, 2 TiB): slurmd reports the kernel's MemTotal as RealMemory,
# a little under what is installed; 95% is a floor (an HGX H100 with 2 TiB reports about 98%).
NODE_CPUS, NODE_GPUS, NODE_MEMORY_MB = 224, 8, int(2048 * 1024 * 0.95)


def test_one_gpu_jobs_without_mem_share_a_slurm_node(prod_plan):
    """CR_Core_Memory makes memory consumable; with no DefMem* a job that names no --mem takes all of a node's
    (tests/slurm_limits.py, job_mgr.c at slurm-25-11-7-1), so two 1-GPU jobs never shared a node on the previous
    main. Each partition now sets DefMemPerGPU and DefCpuPerGPU from the pool's declared host."""
    from tests.slurm_limits import default_job, jobs_per_node

    nodeset = next(n for n in slinky(prod_plan, "NodeSet") if n["inputs"]["metadata"]["name"] == "ib-h100-slurm")
    partition = nodeset["inputs"]["spec"]["partition"]["config"]
    cluster = slinky(prod_plan, "Controller")[0]["inputs"]["spec"]["extraConf"]
    assert (
        jobs_per_node(partition, cluster, 1, node_gpus=NODE_GPUS, node_cpus=NODE_CPUS, node_memory_mb=NODE_MEMORY_MB)
        == 8
    )
    assert "DefMemPerGPU=235929" in partition.split() and "DefCpuPerGPU=28" in partition.split()
    # and a whole-node job that names no memory still fits the node (a default above it would refuse the job)
    memory, cpus = default_job(partition, cluster, NODE_GPUS, NODE_MEMORY_MB)
    assert memory <= NODE_MEMORY_MB and cpus == NODE_CPUS


def test_a_slurm_pool_without_a_host_plans_with_a_small_default_and_a_warning(plan_spec, tmp_path):
    spec, config = prod_stack()
    i = next(i for i, site in enumerate(spec["sites"]) if site["name"] == "grid-hpc")
    pool = next(p for p in spec["sites"][i]["gpu_pools"] if p["name"] == "ib-h100-slurm")
    del pool["host"]
    stack = tmp_path / "Pulumi.prod.yaml"
    stack.write_text(yaml.safe_dump({"config": {**config, "lattice:spec": spec}}))
    found = [w for w in load_stack_file(stack).warnings if w.path.endswith(".host")]
    assert [w.path for w in found] == [f"sites[{i}].gpu_pools[1].host"]
    assert "16 GiB per GPU (DefMemPerGPU)" in found[0].message and "add host: {cpus:" in found[0].message
    plan = plan_spec(spec, **config)
    nodeset = next(n for n in slinky(plan, "NodeSet") if n["inputs"]["metadata"]["name"] == "ib-h100-slurm")
    partition = nodeset["inputs"]["spec"]["partition"]["config"]
    assert "DefMemPerGPU=16384" in partition.split() and "DefCpuPerGPU" not in partition


def test_a_host_with_fewer_cpus_than_gpus_is_refused():
    from lattice.components.spec import SpecError, parse_spec

    spec, _ = prod_stack()
    i = next(i for i, site in enumerate(spec["sites"]) if site["name"] == "grid-hpc")
    pool = next(p for p in spec["sites"][i]["gpu_pools"] if p["name"] == "ib-h100-slurm")
    pool["host"] = {"cpus": 4, "memory_gib": 2048}
    with pytest.raises(SpecError, match=rf"sites\[{i}\]\.gpu_pools\[1\]\.host\.cpus"):
        parse_spec(spec, "Pulumi.prod.yaml")


@pytest.mark.parametrize(
    ("quota", "kueue", "slurm", "expected"),
    [(80, 256, 64, (64, 16)), (40, 256, 64, (32, 8)), (0, 256, 64, (0, 0)), (64, 0, 64, (0, 64)),
     (64, 256, 0, (64, 0)), (300, 256, 64, (240, 60)), (70, 8, 64, (8, 62)), (1, 256, 64, (1, 0))],
)  # fmt: skip
def test_the_split_follows_the_pools_and_always_adds_up(quota, kueue, slurm, expected):
    from lattice.components.scheduling.quota import split_quota

    split = split_quota(quota, kueue, slurm)
    assert (split.kueue, split.slurm) == expected
    assert split.total == quota


def test_the_accounts_job_reruns_when_the_quotas_change(prod_plan, plan_spec):
    spec, config = prod_stack()
    spec["teams"][0]["gpu_quota"]["grid-hpc"] = 100
    changed = plan_spec(spec, **config)
    digest = "lattice.dev/accounts-sha256"
    before = prod_plan.one("kubernetes:batch/v1:Job", "grid-hpc-slurm-accounts")["inputs"]["spec"]["template"]
    after = changed.one("kubernetes:batch/v1:Job", "grid-hpc-slurm-accounts")["inputs"]["spec"]["template"]
    assert before["metadata"]["annotations"][digest] != after["metadata"]["annotations"][digest]
    assert slurm_grp_tres(changed, "grid-hpc")["climate"] == 20  # 100 x 64 / 320


# --- the accounts script ----------------------------------------------------------------------------------------------


def test_the_accounts_script_is_valid_bash(prod_plan, tmp_path):
    script = prod_plan.one(CONFIG_MAP, "grid-hpc-slurm-accounts-script")["inputs"]["data"]["accounts.sh"]
    path = tmp_path / "accounts.sh"
    path.write_text(script)
    assert subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False).returncode == 0
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (make integration installs it and runs this check there)")
    result = subprocess.run(["shellcheck", "--shell=bash", str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


def test_the_accounts_script_converges_against_a_stand_in_sacctmgr(tmp_path):
    """The script run twice against a sacctmgr stand-in that keeps state and answers as sacctmgr does (exit 1 with
    "Nothing modified" when nothing changes: src/sacctmgr/qos_functions.c at slurm-25-11-7-1): the first run adds,
    the second adds nothing and succeeds."""
    state = tmp_path / "state"
    state.mkdir()
    stand_in = tmp_path / "bin" / "sacctmgr"
    stand_in.parent.mkdir()
    stand_in.write_text(SACCTMGR_STAND_IN.replace("@STATE@", str(state)))
    stand_in.chmod(0o755)
    script = tmp_path / "accounts.sh"
    script.write_text(accounts_script("grid-hpc", [SlurmAccount("climate", 16, 16)], 64))
    env = {"PATH": f"{stand_in.parent}:/usr/bin:/bin"}
    first = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, check=False)
    assert first.returncode == 0, first.stderr
    assert sorted(p.name for p in state.iterdir()) == [
        "account-climate",
        "cluster-grid-hpc",
        "qos-climate",
        "qos-standby",
    ]
    assert (state / "account-climate").read_text() == "GrpTRES=gres/gpu=16 QOS=climate,standby DefaultQOS=climate"
    second = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, check=False)
    assert second.returncode == 0, second.stderr
    assert second.stdout.count("unchanged:") == 3  # every modify found nothing to change
    assert "Adding" not in second.stdout  # and nothing was added again
    failing = subprocess.run(
        ["bash", str(script)], capture_output=True, text=True, env={**env, "SACCTMGR_FAIL": "1"}, check=False
    )
    assert failing.returncode == 1 and "Error with request" in failing.stderr


SACCTMGR_STAND_IN = r"""#!/bin/bash
# A stand-in for sacctmgr: entities are files under @STATE@; modify prints "Nothing modified" and exits 1 when the
# values are already those (as sacctmgr does), and SACCTMGR_FAIL makes a modify fail as a refused request does.
state=@STATE@
args=("$@")
while [[ ${args[0]} == --* ]]; do args=("${args[@]:1}"); done
verb=${args[0]}; entity=${args[1]}
name=""
for a in "${args[@]}"; do
  case $a in name=*|account=*) name=${a#*=};; esac
done
case $entity in association) entity=account;; esac
case $verb in
  show)
    [[ -e $state/$entity-$name ]] && echo "$name"; exit 0;;
  add)
    [[ $entity == cluster || $entity == qos || $entity == account ]] || exit 1
    touch "$state/$entity-${args[2]}"; echo " Adding $entity ${args[2]}"; exit 0;;
  modify)
    if [[ -n ${SACCTMGR_FAIL:-} ]]; then echo " Error with request: Access/permission denied" >&2; exit 1; fi
    values=""; after=0
    for a in "${args[@]}"; do
      if [[ $a == set ]]; then after=1; continue; fi
      if (( after )); then
        [[ $a == '\' ]] && continue
        values+="${values:+ }$a"
      fi
    done
    if [[ "$(cat "$state/$entity-$name")" == "$values" ]]; then echo "  Nothing modified"; exit 1; fi
    printf '%s' "$values" > "$state/$entity-$name"; echo " Modified $entity $name"; exit 0;;
esac
exit 1
"""


# --- one fabric: topology.yaml --------------------------------------------------------------------------------------


def test_prods_topology_yaml_is_the_hand_written_file(prod_plan):
    rendered = yaml.safe_load(slurm_files(prod_plan)["topology.yaml"])
    expected = read_yaml(FIXTURES / "slurm-topology" / "prod-topology.yaml")
    assert rendered == expected
    assert list(rendered[1]) == ["topology", "cluster_default", "tree"]  # "topology" first (topology.yaml(5))


def test_a_pool_without_fabric_levels_gets_the_flat_topology(plan_spec):
    spec = spec_with(SLURM_SITE)
    plan = plan_spec(spec, **SLURM_CONFIG)
    files = slurm_files(plan, "grid")
    assert yaml.safe_load(files["topology.yaml"]) == [{"topology": "flat", "cluster_default": True, "flat": True}]
    assert slurm_grammar.topology_yaml_errors(files["topology.yaml"]) == []
    (nodeset,) = slinky(plan, "NodeSet")
    # the cluster default topology; no host declared: the small memory fallback, Slurm's one CPU per task
    assert nodeset["inputs"]["spec"]["partition"]["config"] == "State=UP MaxTime=UNLIMITED DefMemPerGPU=16384"
    assert files["gres.conf"] == "AutoDetect=off\nName=gpu Type=a100_80gb File=/dev/nvidia[0-3] Count=4\n"
    assert plan.outputs["sites"]["grid"]["slurm"]["pools"]["a100"].get("topology_annotation") is None
    # A site of Slurm pools alone still gets the GPU operator (the device plugin slurmd's GPUs come from).
    assert plan.one(RELEASE, "grid-addons-gpu-operator")
    assert not plan.by_type(FLAVOR)


# --- the grammar --------------------------------------------------------------------------------------------------


def test_every_rendered_fragment_passes_the_grammar(prod_plan):
    files = slurm_files(prod_plan)
    (controller,) = slinky(prod_plan, "Controller")
    extra = controller["inputs"]["spec"]["extraConf"]
    assert slurm_grammar.slurm_conf_errors(extra) == []
    gres = slurm_grammar.gres_types(extra)
    assert gres == {"gpu"}
    assert slurm_grammar.gres_conf_errors(files["gres.conf"], gres) == []
    assert slurm_grammar.cgroup_conf_errors(files["cgroup.conf"]) == []
    assert slurm_grammar.topology_yaml_errors(files["topology.yaml"]) == []
    topologies = {entry["topology"] for entry in yaml.safe_load(files["topology.yaml"])}
    for nodeset in slinky(prod_plan, "NodeSet"):
        spec = nodeset["inputs"]["spec"]
        assert slurm_grammar.node_conf_errors(spec["extraConf"], gres) == []
        assert slurm_grammar.partition_conf_errors(spec["partition"]["config"], topologies) == []
    assert "AutoDetect=off" in files["gres.conf"].splitlines()  # explicit, never auto-detected


@pytest.mark.parametrize(
    ("checker", "text", "problem"),
    [
        (slurm_grammar.slurm_conf_errors, "GresType=gpu\n", "GresType is no slurm.conf parameter"),
        (slurm_grammar.slurm_conf_errors, "PreemptType=preempt/qoss\n", "preempttype=preempt/qoss is none of"),
        (slurm_grammar.slurm_conf_errors, "TaskPlugin=task/affinity,task/cgroups\n", "task/cgroups"),
        (
            lambda t: slurm_grammar.gres_conf_errors(t, {"gpu"}),
            "Name=gpu Type=h100 File=/dev/nvidia[0-7] Count=4\n",
            "Count=4 but File names 8 devices",
        ),
        (lambda t: slurm_grammar.gres_conf_errors(t, {"gpu"}), "AutoDetect=nvml Name=gpu\n", "a line of its own"),
        (lambda t: slurm_grammar.node_conf_errors(t, {"gpu"}), "Gres=gpu:8", "is not name:type:count"),
        (lambda t: slurm_grammar.node_conf_errors(t, {"gpu"}), "Gres=mps:h100:8", "not in GresTypes"),
        (lambda t: slurm_grammar.partition_conf_errors(t, {"flat"}), "Topology=ib State=UP", "not in topology.yaml"),
        (
            slurm_grammar.topology_yaml_errors,
            "- topology: t\n  cluster_default: true\n  tree: {switches: []}\n",
            "no switches",
        ),
        (
            slurm_grammar.topology_yaml_errors,
            "- cluster_default: true\n  topology: t\n  flat: true\n",
            "'topology' must be the first attribute",
        ),
        (
            slurm_grammar.topology_yaml_errors,
            "- topology: t\n  cluster_default: true\n  tree:\n    switches:\n"
            "    - {switch: s, children: a, nodes: n1}\n",
            "not both",
        ),
        (slurm_grammar.topology_yaml_errors, "- topology: t\n  flat: true\n", "no topology is the cluster_default"),
        (
            slurm_grammar.topology_yaml_errors,
            "- topology: b\n  cluster_default: true\n  block: {block_sizes: [4, 12], blocks: [{block: b1}]}\n",
            "power-of-two multiple",
        ),
    ],
)
def test_the_grammar_refuses_what_slurm_refuses(checker, text, problem):
    problems = checker(text)
    assert any(problem in p for p in problems), problems


def test_the_grammar_reads_both_releases_parameters():
    releases = slurm_grammar.parameters()
    assert set(releases) == {"slurm-25-11-7-1", "slurm-26-05-3-1"}
    for sections in releases.values():
        assert {"grestypes", "accountingstoragetres", "preempttype"} <= sections["slurm.conf"]
        assert {"gres", "features", "topology"} <= sections["slurm.conf node"]
        assert {"topology", "state", "maxtime"} <= sections["slurm.conf partition"]
        assert {"autodetect", "name", "type", "file", "count"} <= sections["gres.conf"]


def test_slurm_config_pieces():
    pool = slurm_config.SlurmPool("p", "h100", 8, ("rack-group", "rack"))
    assert slurm_config.node_topology_template(pool) == "p:p:<rack-group>:<rack>"
    assert slurm_config.node_conf(pool) == "Gres=gpu:h100:8"
    single = slurm_config.SlurmPool("one", "l4", 1)
    assert slurm_config.gres_conf([single]) == "AutoDetect=off\nName=gpu Type=l4 File=/dev/nvidia0 Count=1\n"


# --- across sites ---------------------------------------------------------------------------------------------------


def test_linked_sites_reach_only_the_login_and_rest_ports_they_are_given(prod_plan):
    site = prod_plan.one(NETPOL, "grid-hpc-slurm-site")["inputs"]["spec"]
    assert site["podSelector"] == {}
    assert site["ingress"] == [
        {
            "from": [
                {"ipBlock": {"cidr": "10.50.0.0/16"}},
                {"ipBlock": {"cidr": "10.51.0.0/16"}},
                {"namespaceSelector": {}},
            ]
        }
    ]
    login = prod_plan.one(NETPOL, "grid-hpc-slurm-login-from-links")["inputs"]["spec"]
    assert login["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "login"}}
    assert login["ingress"] == [
        {"from": [{"ipBlock": {"cidr": "10.60.0.0/20"}}], "ports": [{"protocol": "TCP", "port": SSH_PORT}]}
    ]
    rest = prod_plan.one(NETPOL, "grid-hpc-slurm-rest-from-links")["inputs"]["spec"]
    assert rest["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "slurmrestd"}}
    assert rest["ingress"][0]["ports"] == [{"protocol": "TCP", "port": SLURMRESTD_PORT}]
    # slurmctld (6817), slurmdbd and slurmd are reached from the site only: no policy admits a linked range to them.
    (login_set,) = slinky(prod_plan, "LoginSet")
    assert login_set["inputs"]["spec"]["service"]["spec"] == {
        "type": "LoadBalancer",
        "externalTrafficPolicy": "Local",
        "loadBalancerIP": "10.50.0.42",
    }


SLURM_SITE = {
    "name": "grid",
    "tier": "grid",
    "provider": "kubernetes",
    "network": {"cidr": "10.50.0.0/16"},
    "kubernetes": {"context": "grid-admin", "version": "1.33"},
    "gpu_pools": [
        {"name": "a100", "gpu_model": "A100-80GB", "gpu_memory_gib": 80, "gpus_per_node": 4, "max_nodes": 2,
         "fabric_bandwidth_gbps": 200, "scheduler": "slurm"}
    ],
    "slurm": {
        "accounting": {"host": "db.grid.example.org", "password_secret": "slurmDbPassword"},
        "directory": {"uri": "ldap://ldap.grid.example.org", "search_base": "dc=grid", "bind_dn": "cn=sssd,dc=grid",
                      "bind_password_secret": "ldapBindPassword"},
    },
}  # fmt: skip
SLURM_CONFIG = {f"lattice:{k}": {"secure": "v1:c2FsdA==:c2VjcmV0"} for k in ("slurmDbPassword", "ldapBindPassword")}


def test_team_on_site_carries_both_shares():
    spec = load_stack_file(PROD).spec
    site = next(s for s in spec.sites if s.name == "grid-hpc")
    climate = team_on_site(next(t for t in spec.teams if t.name == "climate"), site)
    assert (climate.accelerators, climate.slurm_gpus, climate.guarantee, climate.slurm_guarantee) == (64, 16, 32, 16)


def test_node_exporter_and_npd_stay_on_slurms_nodes(prod_plan):
    """Slinky's worker taint is NoExecute: a DaemonSet that does not tolerate it is evicted from Slurm's nodes. The
    node exporter (InfiniBand, file systems) and Node Problem Detector (GPU Xids) tolerate it on a Slurm site, with
    their charts' own NoSchedule toleration kept; elsewhere their values are the charts' as before."""
    worker = {"key": "nodeset.slinky.slurm.net/worker", "operator": "Equal", "effect": "NoExecute"}
    own = {"effect": "NoSchedule", "operator": "Exists"}
    metrics = prod_plan.one(RELEASE, "grid-hpc-metrics-kube-prometheus-stack")["inputs"]["values"]
    assert metrics["prometheus-node-exporter"]["tolerations"] == [own, worker]
    npd = prod_plan.one(RELEASE, "grid-hpc-addons-gpu-health-node-problem-detector")["inputs"]["values"]
    assert npd["tolerations"] == [own, worker]
    exporter_chart = yaml.safe_load(
        (FIXTURES / "kube-prometheus-stack-88.5.3" / "prometheus-node-exporter-values.yaml").read_text()
    )
    npd_chart = read_yaml(FIXTURES / "gpu-health" / "node-problem-detector-2.4.1-values.yaml")
    assert exporter_chart["tolerations"] == npd_chart["tolerations"] == [own]  # the charts' own, kept first
    edge = prod_plan.one(RELEASE, "edge-beamline-metrics-kube-prometheus-stack")["inputs"]["values"]
    assert "tolerations" not in edge["prometheus-node-exporter"]
    assert (
        "tolerations"
        not in prod_plan.one(RELEASE, "edge-beamline-addons-gpu-health-node-problem-detector")["inputs"]["values"]
    )


def test_a_stack_without_login_or_rest_addresses_plans_with_a_warning(plan_spec, tmp_path):
    """Stack files written before slurm.login_address / rest_address keep planning: the load balancer picks the
    addresses, the outputs say where to look, and lattice check warns (rest_address only where rest_from needs it)."""
    spec, config = prod_stack()
    i = next(i for i, site in enumerate(spec["sites"]) if site["name"] == "grid-hpc")
    slurm = spec["sites"][i]["slurm"]
    del slurm["login_address"], slurm["rest_address"]
    stack = tmp_path / "Pulumi.prod.yaml"
    stack.write_text(yaml.safe_dump({"config": {**config, "lattice:spec": spec}}))
    found = {w.path: w.message for w in load_stack_file(stack).warnings if ".slurm." in w.path}
    assert sorted(found) == [f"sites[{i}].slurm.login_address", f"sites[{i}].slurm.rest_address"]
    assert "no address for the login pods' ssh on 'grid-hpc'" in found[f"sites[{i}].slurm.login_address"]
    assert "inside 10.50.0.0/16, 10.51.0.0/16" in found[f"sites[{i}].slurm.login_address"]
    plan = plan_spec(spec, **config)
    (login,) = slinky(plan, "LoginSet")
    assert login["inputs"]["spec"]["service"]["spec"] == {"type": "LoadBalancer", "externalTrafficPolicy": "Local"}
    outputs = plan.outputs["sites"]["grid-hpc"]["slurm"]
    assert "set slurm.login_address" in outputs["login"] and "rest" not in outputs
    # without rest_from, slurmrestd stays inside the cluster and needs no address
    slurm["rest_from"] = []
    stack.write_text(yaml.safe_dump({"config": {**config, "lattice:spec": spec}}))
    assert [w.path for w in load_stack_file(stack).warnings if ".slurm." in w.path] == [
        f"sites[{i}].slurm.login_address"
    ]
