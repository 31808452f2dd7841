"""Lattice's public components served by Pulumi's component provider host, called over gRPC as the engine calls it.

One provider process for the module (started as the engine starts a plugin: tests/components/package/served.py).
Construct of each public component, against a stand-in resource monitor that answers as ``lattice plan``'s mock
engine does, must register exactly the child resources the offline plan of a shipped stack registers for the same
spec: same types, names, providers, options, inputs (in Pulumi's wire form) and dependencies. The inputs given to
Construct are the stack's own values: the pool / file system / link as the stack file writes it, and the ids the
site's resources have in the offline plan, with the URNs they come from as the engine's input dependencies.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

import grpc
import pytest
import yaml
from google.protobuf import json_format
from jsonschema import Draft202012Validator, FormatChecker, _keywords, validators
from pulumi import InputPropertiesError
from pulumi.runtime import rpc
from pulumi.runtime.proto import errors_pb2, status_pb2

from lattice.components.network.link_plan import link_plans, ranges_behind
from lattice.components.platform.kueue_api import kueue_type
from lattice.components.spec import load_stack_file
from lattice.engine.plan import Plan
from tests.components.package.served import output_value as out
from tests.components.package.served import serve
from tests.conftest import ROOT

DEV = ROOT / "stacks" / "Pulumi.dev.yaml"
PROD = ROOT / "stacks" / "Pulumi.prod.yaml"


@pytest.fixture(scope="module")
def served():
    served, process, server = serve()
    try:
        yield served
    finally:
        process.terminate()
        process.wait(timeout=30)
        server.stop(None)


# --- what the offline plan and the Construct registered ------------------------------------------------------


def _local(urn: str, inside: str) -> str:
    """A URN as a comparable key: a child of the component by its type and name, anything else as it is."""
    if urn.startswith(inside.split("::", maxsplit=1)[0]) and "::" in urn:
        qualified, name = urn.split("::")[-2], urn.rsplit("::", maxsplit=1)[-1]
        if qualified.split("$")[:-1] and qualified.split("$")[-2] == inside.split("::")[-2].rsplit("$", maxsplit=1)[-1]:
            return f"{qualified.split('$')[-1]}::{name}"
    return urn


def registered(records: list[dict[str, Any]], component_urn: str) -> dict[str, dict[str, Any]]:
    """The component's children (and theirs) keyed by type::name, each with what the engine would act on."""
    inside, grown = {component_urn}, True
    while grown:  # a nested component's URN sorts after its children's ($ before :): close over parents first
        before = len(inside)
        inside |= {r["urn"] for r in records if r["parent"] in inside}
        grown = len(inside) > before
    out = {}
    for record in sorted(records, key=lambda r: r["urn"]):
        if record["parent"] not in inside:
            continue
        key = f"{record['type']}::{record['name']}"
        out[key] = {
            "custom": record["custom"],
            "provider": record["provider"],
            "protect": record["protect"],
            "retainOnDelete": record["retainOnDelete"],
            "parent": "component" if record["parent"] == component_urn else _key(record["parent"]),
            "dependencies": sorted(
                _key(u) if u in inside or _is_child(u, component_urn) else u for u in record["dependencies"]
            ),
            "inputs": record["inputs"],
        }
    return out


def _key(urn: str) -> str:
    return f"{urn.split('::')[-2].rsplit('$', maxsplit=1)[-1]}::{urn.rsplit('::', maxsplit=1)[-1]}"


def _is_child(urn: str, component_urn: str) -> bool:
    component_type = component_urn.split("::")[-2]
    return urn.split("::")[-2].startswith(f"{component_type}$")


def offline(plan: Plan, component_type: str, name: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    component = plan.one(component_type, name)
    return component, registered(plan.resources, component["urn"])


def state(plan: Plan, type_token: str, name: str) -> tuple[dict[str, Any], str]:
    resource = plan.one(type_token, name)
    return plan.state(resource), resource["urn"]


def tagging(stack_file, site_name: str) -> dict[str, Any]:
    spec = stack_file.spec
    site = next(s for s in spec.sites if s.name == site_name)
    return {
        "stack": stack_file.stack,
        "site": site_name,
        "environment": spec.environment,
        "owner": spec.owner,
        "cost_centre": spec.cost_centre,
        "data_classification": spec.data_classification,
        "extra_tags": {**spec.tags, **site.tags},
    }


def stack_entry(stack_file, site_name: str, key: str, name: str) -> dict[str, Any]:
    """An entry of the stack file as written (sites[].gpu_pools[] / sites[].storage.lustre[]), defaults left out."""
    site = next(s for s in stack_file.spec.sites if s.name == site_name)
    entries = getattr(site, key) if key == "gpu_pools" else getattr(site.storage, key)
    entry = next(e for e in entries if e.name == name)
    return entry.model_dump(mode="json", exclude_unset=True)


def constructed(served, response) -> dict[str, dict[str, Any]]:
    return registered(served.monitor.recording.records, response.urn)


# --- the schema -----------------------------------------------------------------------------------------------

METASCHEMA = ROOT / "tests" / "fixtures" / "pulumi-v3.259.0" / "pulumi.json"
PUBLIC = {
    "lattice:index:AwsGpuNodePool": (
        {"pool", "clusterName", "kubernetesVersion", "clusterSecurityGroupId", "vpcId", "subnetIds", "kmsKeyArn",
         "tagging", "lustreClient", "lustreEfa"},
        {"nodeGroupName", "nodeGroupArn", "launchTemplateId", "nodeRoleArn", "fabricSecurityGroupId",
         "efaInterfaceCount", "efaBandwidthGbps"},
    ),
    "lattice:index:GcpGpuNodePool": (
        {"pool", "project", "zone", "clusterId", "serviceAccount", "tagging", "gpuNicNetworks", "networkProject"},
        {"nodePoolName", "nodePoolId", "gpuNicCount", "tpuChips", "localSsdGib", "podAnnotations",
         "gpudirectSidecarImage", "gpuNicNetworks"},
    ),
    "lattice:index:FsxLustre": (
        {"fileSystem", "subnetId", "vpcId", "kmsKeyArn", "tagging", "workload", "clientSecurityGroupIds",
         "bucketNames", "adminCidrs", "alarmActions", "logRetentionDays", "protect"},
        {"fileSystemId", "dnsName", "mountName", "securityGroupId", "capacityGib", "throughputMbpsPerTib",
         "writeMbps"},
    ),
    "lattice:index:VpnLink": (
        {"cloud", "gcp", "peer", "link", "tagging"},
        {"tunnelCount", "capacityGbps", "insideBlock", "connectionIds", "tunnelIds", "swanctlConf",
         "swanctlRedactedConf", "frrConf", "xfrmInterfacesSh"},
    ),
    "lattice:index:AwsCloudTrail": (
        {"region", "tagging", "audit", "bucket", "kmsKeyArn", "encryption", "accessLogBucket", "dataEventBuckets",
         "alarmActions", "protect"},
        {"trailArn", "trailName", "bucketName", "bucketArn", "accessLogBucketName", "logGroupName", "logGroupArn",
         "kmsKeyArn", "kmsKeyId", "silenceAlarmArn"},
    ),
    "lattice:index:GcpAuditLogs": (
        {"project", "region", "tagging", "audit", "kmsKeyId", "encryption", "locked", "exemptStorageReaders",
         "archiveBucket", "notificationChannels"},
        {"logBucketId", "logBucketName", "sinkName", "sinkWriterIdentity", "kmsKeyId", "silenceAlertPolicy"},
    ),
    "lattice:index:TeamNamespace": (
        {"team", "tagging", "network", "users", "claimsGib", "queue"},
        {"namespaceName", "localQueueName", "clusterQueueName", "roleName"},
    ),
    "lattice:index:KueueScheduler": (
        {"flavors", "teams", "tagging"},
        {"cohortName", "clusterQueueNames", "localQueueName"},
    ),
    "lattice:index:HybridStack": ({"spec", "secrets"}, {"environment", "siteOutputs", "linkSummary"}),
    "lattice:index:ManagedLustre": (
        {"instance", "project", "zone", "networkId", "tagging", "workload", "adminCidrs", "protect"},
        {"instanceId", "mountPoint", "capacityGib", "throughputTier", "writeMbps"},
    ),
}  # fmt: skip


def metaschema_validator() -> Draft202012Validator:
    """Pulumi's package metaschema as Pulumi reads it. Its patterns are ECMA-262 regular expressions (the Go
    validator, santhosh-tekuri/jsonschema, takes named groups as (?<name>...)); Python's re spells those (?P<name>...),
    the one difference among the patterns it uses."""

    def pattern(validator, regex, instance, schema):
        yield from _keywords.pattern(validator, re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", regex), instance, schema)

    ecma = validators.extend(Draft202012Validator, {"pattern": pattern})
    return ecma(json.loads(METASCHEMA.read_text()), format_checker=FormatChecker())


def test_the_served_schema_is_a_pulumi_package_schema_naming_every_public_component_input_and_output(served):
    schema = served.schema()
    validator = metaschema_validator()
    assert [error.message for error in validator.iter_errors(schema)] == []
    assert (schema["name"], schema["version"]) == (
        "lattice",
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"],
    )
    assert set(schema["resources"]) == set(PUBLIC)
    for token, (inputs, outputs) in PUBLIC.items():
        resource = schema["resources"][token]
        assert resource["isComponent"] is True
        assert set(resource["inputProperties"]) == inputs, token
        assert set(resource["properties"]) == outputs, token
        assert all(prop.get("description") for prop in [*resource["inputProperties"].values(), resource])
    # The served schema is the committed contract (schema/package.schema.json, make schema).
    assert schema == json.loads((ROOT / "schema" / "package.schema.json").read_text())


def test_the_metaschema_refuses_what_is_not_a_package_schema(served):
    validator = metaschema_validator()
    schema = served.schema()
    schema["resources"]["lattice:index:AwsGpuNodePool"]["inputProperties"]["vpcId"] = {"type": "uuid"}
    schema["resources"]["lattice:index:2Bad"] = {}
    assert len(list(validator.iter_errors(schema))) == 2


# --- bad input ------------------------------------------------------------------------------------------------


def test_bad_inputs_are_refused_with_every_property_path_before_anything_is_registered(served, dev_plan):
    stack_file = load_stack_file(DEV)
    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "AwsGpuNodePool",
            "pool",
            {
                "pool": {"name": "train", "instanceType": "p5.48xlarge", "maxNodes": 0,
                         "capacity": {"type": "spot-ish"}, "rootVolumeGib": 20},
                "clusterName": "c", "kubernetesVersion": "1.33", "clusterSecurityGroupId": "sg-1", "vpcId": "vpc-1",
                "subnetIds": ["subnet-1"], "kmsKeyArn": "arn:aws:kms:us-east-1:1:key/k",
                "tagging": _camel_keys(tagging(stack_file, "aws-use1")),
            },
            stack="dev",
        )  # fmt: skip
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert property_errors(refused.value) == {
        "pool.maxNodes": "Input should be greater than or equal to 1 (got 0.0)",
        "pool.capacity.type": "Input should be 'on-demand', 'spot', 'capacity-block' or 'reservation' (got 'spot-ish')",
        "pool.rootVolumeGib": "Input should be greater than or equal to 50 (got 20.0)",
    }
    assert "Traceback" not in refused.value.details()
    assert served.monitor.recording.records == []  # refused before the component registered itself

    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "FsxLustre",
            "fs",
            {
                "fileSystem": {"name": "shared", "capacityGib": 3000, "throughputMbpsPerTib": 250},
                "subnetId": "subnet-1", "vpcId": "vpc-1", "kmsKeyArn": "k",
                "tagging": _camel_keys(tagging(stack_file, "aws-use1")), "logRetentionDays": 30,
            },
            stack="dev",
        )  # fmt: skip
    assert property_errors(refused.value) == {
        "fileSystem.capacityGib": "3,000 GiB is not a PERSISTENT_2/SSD size (1,200, then multiples of 2,400 GiB); "
        "nearest valid: 2,400 or 4,800 GiB",
        "logRetentionDays": "keep logs at least 365 days",
    }
    assert served.monitor.recording.records == []


def test_a_managed_lustre_size_off_its_tiers_steps_is_refused(served):
    stack_file = load_stack_file(PROD)
    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "ManagedLustre",
            "ml",
            {
                "instance": {"name": "shared", "tier": "1000", "capacityGib": 10_000},
                "project": "p", "zone": "us-central1-a", "networkId": "n",
                "tagging": _camel_keys(tagging(stack_file, "gcp-usc1")),
            },
            stack="prod",
        )  # fmt: skip
    (reason,) = property_errors(refused.value).values()
    assert set(property_errors(refused.value)) == {"instance.capacityGib"}
    assert reason.startswith("10,000 GiB is not a Managed Lustre size at tier 1000")
    assert served.monitor.recording.records == []


def property_errors(error: grpc.RpcError) -> dict[str, str]:
    """The engine's view of an input error: the property paths and reasons in the status details."""
    details = dict(error.trailing_metadata())["grpc-status-details-bin"]
    status = status_pb2.Status.FromString(details)
    found = errors_pb2.InputPropertiesError()
    (detail,) = status.details
    detail.Unpack(found)
    return {e.property_path: e.reason for e in found.errors}


# --- Construct: the same children as the offline plan ----------------------------------------------------------


def _construct_dev_p5_pool(served, dev_plan, name: str, depends_on: list[str] | None = None):
    """dev's aws-use1 train-p5 pool through the package, given what its site hands it: the response, and the offline
    plan's children of the stack-file pool."""
    stack_file = load_stack_file(DEV)
    cluster, cluster_urn = state(dev_plan, "aws:eks/cluster:Cluster", "aws-use1-eks-cluster")
    vpc, vpc_urn = state(dev_plan, "aws:ec2/vpc:Vpc", "aws-use1-net-vpc")
    subnet, subnet_urn = state(dev_plan, "aws:ec2/subnet:Subnet", "aws-use1-net-private-us-east-1a")
    key, key_urn = state(dev_plan, "aws:kms/key:Key", "aws-use1-key-key")
    _, expected = offline(dev_plan, "lattice:compute:AwsGpuNodePool", "aws-use1-train-p5")
    pool = stack_entry(stack_file, "aws-use1", "gpu_pools", "train-p5")
    pool.pop("availability_zones"), pool.pop("workload")  # the site's choice of subnet and its sizing check

    response = served.construct(
        "AwsGpuNodePool",
        name,
        {
            "pool": {_camel(k): v for k, v in pool.items()},
            "clusterName": out(cluster["name"], cluster_urn),
            "kubernetesVersion": out(cluster["version"], cluster_urn),
            "clusterSecurityGroupId": out(cluster["vpcConfig"]["clusterSecurityGroupId"], cluster_urn),
            "vpcId": out(vpc["id"], vpc_urn),
            "subnetIds": [out(subnet["id"], subnet_urn)],
            "kmsKeyArn": out(key["arn"], key_urn),
            "tagging": {_camel(k): v for k, v in tagging(stack_file, "aws-use1").items()},
            "lustreClient": True,
        },
        stack="dev",
        providers={"aws": _provider_of(expected)},
        known=_providers_state(dev_plan, expected),
        depends_on=depends_on,
    )
    return response, expected


def test_construct_of_the_gpu_pool_registers_what_the_offline_plan_registers(served, dev_plan):
    response, expected = _construct_dev_p5_pool(served, dev_plan, "aws-use1-train-p5")

    assert response.urn == "urn:pulumi:dev::lattice::lattice:index:AwsGpuNodePool::aws-use1-train-p5"
    got = constructed(served, response)
    assert sorted(got) == sorted(expected)
    assert len(got) == 12  # role + 4 policies, fabric group + 2 rules, placement, template, node group, ASG tag
    for key_ in expected:
        assert got[key_] == expected[key_], key_
    state_ = json_format.MessageToDict(response.state)
    assert state_["efaInterfaceCount"] == 32 and state_["efaBandwidthGbps"] == 3200
    node_group = dev_plan.one("aws:eks/nodeGroup:NodeGroup", "aws-use1-train-p5-nodes")
    assert state_["nodeGroupName"] == dev_plan.state(node_group)["nodeGroupName"]


def test_everything_a_constructed_gpu_pool_creates_waits_for_the_consumers_depends_on(served, dev_plan):
    """A consumer's ``dependsOn`` on the pool (here: the NAT gateway its nodes reach the EKS API through) holds back
    every resource the pool creates, not only the component: the SDK resolves a resource's own ``depends_on`` alone,
    so without ``children_wait`` the node group would register, and be destroyed, regardless of it."""
    nat = dev_plan.by_type("aws:ec2/natGateway:NatGateway")[0]
    response, expected = _construct_dev_p5_pool(served, dev_plan, "waits-p5", depends_on=[nat["urn"]])

    got = constructed(served, response)
    assert len(got) == len(expected) == 12
    assert {key_: nat["urn"] in child["dependencies"] for key_, child in got.items()} == dict.fromkeys(got, True)
    # Nothing else changes: the same dependencies among the pool's own children as without it.
    renamed = {k.replace("waits-p5", "aws-use1-train-p5"): v for k, v in got.items()}
    for key_, child in expected.items():
        mine = sorted(
            d.replace("waits-p5", "aws-use1-train-p5") for d in renamed[key_]["dependencies"] if d != nat["urn"]
        )
        assert mine == sorted(child["dependencies"]), key_


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _providers_state(plan: Plan, children: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    urns = {c["provider"].rsplit("::", 1)[0] for c in children.values() if c["provider"]}
    return {urn: plan.states[urn] for urn in urns}


def _provider_of(children: dict[str, dict[str, Any]]) -> str:
    (provider,) = {c["provider"] for c in children.values() if c["custom"] and c["provider"]}
    return provider


def test_construct_of_the_lustre_tier_sized_from_a_workload_registers_what_the_offline_plan_registers(served, dev_plan):
    from lattice.components.spec.storage_validators import admin_client_ranges

    stack_file = load_stack_file(DEV)
    site = next(s for s in stack_file.spec.sites if s.name == "aws-use1")
    cluster, cluster_urn = state(dev_plan, "aws:eks/cluster:Cluster", "aws-use1-eks-cluster")
    vpc, vpc_urn = state(dev_plan, "aws:ec2/vpc:Vpc", "aws-use1-net-vpc")
    subnet, subnet_urn = state(dev_plan, "aws:ec2/subnet:Subnet", "aws-use1-net-private-us-east-1a")
    key, key_urn = state(dev_plan, "aws:kms/key:Key", "aws-use1-key-key")
    topic, topic_urn = state(dev_plan, "aws:sns/topic:Topic", "aws-use1-alarms-topic")
    bucket, bucket_urn = state(dev_plan, "aws:s3/bucket:Bucket", "aws-use1-storage-datasets-bucket")
    _, expected = offline(dev_plan, "lattice:storage:FsxLustre", "aws-use1-storage-shared")
    file_system = stack_entry(stack_file, "aws-use1", "lustre", "shared")
    workload_name = file_system.pop("workload")
    workload = next(w for w in stack_file.spec.workloads if w.name == workload_name)
    assert "capacity_gib" not in file_system and "throughput_mbps_per_tib" not in file_system  # sized by Lattice

    response = served.construct(
        "FsxLustre",
        "aws-use1-storage-shared",
        {
            "fileSystem": _camel_keys(file_system),
            "workload": _camel_keys(workload.model_dump(mode="json", exclude_unset=True)),
            "subnetId": out(subnet["id"], subnet_urn),
            "vpcId": out(vpc["id"], vpc_urn),
            "kmsKeyArn": out(key["arn"], key_urn),
            "tagging": _camel_keys(tagging(stack_file, "aws-use1")),
            "clientSecurityGroupIds": {"cluster": out(cluster["vpcConfig"]["clusterSecurityGroupId"], cluster_urn)},
            "bucketNames": {"datasets": out(bucket["bucket"], bucket_urn)},
            "adminCidrs": admin_client_ranges(site, site.storage.lustre[0]),
            "alarmActions": [out(topic["arn"], topic_urn)],
            "logRetentionDays": site.audit.log_retention_days,
        },
        stack="dev",
        providers={"aws": _provider_of(expected)},
        known=_providers_state(dev_plan, expected),
    )

    got = constructed(served, response)
    assert sorted(got) == sorted(expected)
    for key_ in expected:
        assert got[key_] == expected[key_], key_
    file_system_inputs = got["aws:fsx/lustreFileSystem:LustreFileSystem::aws-use1-storage-shared-fs"]["inputs"]
    state_ = json_format.MessageToDict(response.state)
    assert (state_["capacityGib"], state_["throughputMbpsPerTib"]) == (
        file_system_inputs["storageCapacity"],
        file_system_inputs["perUnitStorageThroughput"],
    )


def _camel_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_camel(k): _camel_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


def test_construct_of_the_link_registers_what_the_offline_plan_registers_and_renders_the_gateway_files(
    served, prod_plan
):
    from lattice.components.spec.link_validators import routed_networks

    stack_file = load_stack_file(PROD)
    spec = stack_file.spec
    aws_site, grid = (next(s for s in spec.sites if s.name == name) for name in ("aws-use1", "grid-hpc"))
    (plan,) = [p for p in link_plans(spec) if p.key == "aws-use1--grid-hpc"]
    hub = spec.links[plan.link_index]
    (spoke,) = [s for s in hub.spokes if getattr(s, "site", s) == "grid-hpc"]
    _, expected = offline(prod_plan, "lattice:network:VpnLink", "aws-use1--grid-hpc")

    response = served.construct(
        "VpnLink",
        "aws-use1--grid-hpc",
        {
            "cloud": _aws_hub_end(prod_plan, aws_site, list(ranges_behind(spec, plan))),
            "peer": {
                "site": "grid-hpc",
                "asn": grid.network.asn,
                "publicIps": list(grid.network.vpn_gateway.public_ips),
                "ranges": [str(net) for net in routed_networks(grid)],
            },
            "link": {
                "bandwidthGbps": spoke.bandwidth_gbps,
                "tunnelSize": spoke.tunnel_size,
                "admit": [_camel_keys(rule.model_dump(mode="json", exclude_unset=True)) for rule in hub.admit],
            },
            "tagging": _camel_keys(tagging(stack_file, "aws-use1")),
        },
        stack="prod",
        providers={"aws": _provider_of(expected)},
        known=_providers_state(prod_plan, expected),
    )

    got = constructed(served, response)
    assert sorted(got) == sorted(expected)
    for key_ in expected:
        assert got[key_] == expected[key_], key_
    # The gateway hosts' files: what `lattice links render` writes from the stack's outputs, the keys a secret.
    outputs = json_format.MessageToDict(response.state)
    exported = prod_plan.revealed_outputs["sites"]["grid-hpc"]["vpn"]
    assert set(exported) == {"192.0.2.10", "192.0.2.11"}
    for ip, files in exported.items():
        assert outputs["frrConf"][ip] == files["frr.conf"]
        assert outputs["xfrmInterfacesSh"][ip] == files["xfrm-interfaces.sh"]
        assert outputs["swanctlRedactedConf"][ip] == files["swanctl.redacted.conf"]
    secret = outputs["swanctlConf"]
    assert secret[rpc._special_sig_key] == rpc._special_secret_sig  # reaches the engine as a secret
    for ip, files in exported.items():
        assert "withheld" not in secret["value"][ip]
        assert secret["value"][ip] == files["swanctl.conf"]


def test_construct_of_the_whole_stack_from_its_spec_document_registers_the_offline_plan(served, dev_plan):
    """The stack file's own path, through the package: dev's spec document in, every resource of dev's offline plan
    registered, URN for URN (HybridStack's type token is lattice:index:HybridStack on both paths)."""
    spec = yaml.safe_load(DEV.read_text())["config"]["lattice:spec"]
    response = served.construct("HybridStack", "lattice", {"spec": json.dumps(spec)}, stack="dev")

    assert response.urn == "urn:pulumi:dev::lattice::lattice:index:HybridStack::lattice"
    recording = served.monitor.recording
    got = {r["urn"]: {**r, "options": recording.options[r["urn"]]} for r in recording.records}
    expected = {
        r["urn"]: {**r, "options": dev_plan.options[r["urn"]]}
        for r in dev_plan.resources
        if r["type"] != "pulumi:pulumi:Stack"
    }
    component = response.urn
    got[component]["parent"] = expected[component]["parent"]  # the consumer's stack, not the provider's concern
    assert sorted(got) == sorted(expected)
    for urn, record in expected.items():
        assert got[urn] == record, urn
    outputs = json_format.MessageToDict(response.state)
    assert outputs["environment"] == "dev"
    assert outputs["siteOutputs"] == dev_plan.revealed_outputs["sites"]
    assert outputs["linkSummary"] == {}


def test_a_spec_document_with_mistakes_is_refused_with_every_key_path(served):
    spec = yaml.safe_load(DEV.read_text())["config"]["lattice:spec"]
    spec["sites"][0]["gpu_pools"][0]["max_nodes"] = 0
    spec["environment"] = "qa"
    with pytest.raises(grpc.RpcError) as refused:
        served.construct("HybridStack", "lattice", {"spec": yaml.safe_dump(spec)}, stack="dev")
    errors = property_errors(refused.value)
    assert set(errors) == {"spec.environment", "spec.sites[0].gpu_pools[0].max_nodes"}
    assert served.monitor.recording.records == []


def test_construct_of_managed_lustre_sized_from_a_workload_registers_what_the_offline_plan_registers(served, prod_plan):
    from lattice.components.spec.storage_validators import admin_client_ranges

    stack_file = load_stack_file(PROD)
    site = next(s for s in stack_file.spec.sites if s.name == "gcp-usc1")
    network, network_urn = state(prod_plan, "gcp:compute/network:Network", "gcp-usc1-net-network")
    connection = prod_plan.one(
        "gcp:servicenetworking/connection:Connection", "gcp-usc1-storage-private-services-peering"
    )
    _, expected = offline(prod_plan, "lattice:storage:ManagedLustre", "gcp-usc1-storage-shared")
    instance = stack_entry(stack_file, "gcp-usc1", "lustre", "shared")
    workload_name, zone = instance.pop("workload"), instance.pop("zone")
    workload = next(w for w in stack_file.spec.workloads if w.name == workload_name)
    assert "tier" not in instance and "capacity_gib" not in instance  # sized by Lattice

    response = served.construct(
        "ManagedLustre",
        "gcp-usc1-storage-shared",
        {
            "instance": _camel_keys(instance),
            "workload": _camel_keys(workload.model_dump(mode="json", exclude_unset=True)),
            "project": site.project,
            "zone": zone,
            "networkId": out(network["id"], network_urn),
            "tagging": _camel_keys(tagging(stack_file, "gcp-usc1")),
            "adminCidrs": admin_client_ranges(site, site.storage.lustre[0]),
            "protect": stack_file.spec.protects_stateful,
        },
        stack="prod",
        providers={"gcp": _provider_of(expected)},
        known=_providers_state(prod_plan, expected),
        depends_on=[connection["urn"]],
    )

    got = constructed(served, response)
    assert sorted(got) == ["gcp:lustre/instance:Instance::gcp-usc1-storage-shared-instance"]
    for key_ in expected:
        assert got[key_] == expected[key_], key_
    state_ = json_format.MessageToDict(response.state)
    inputs = got["gcp:lustre/instance:Instance::gcp-usc1-storage-shared-instance"]["inputs"]
    assert (str(int(state_["capacityGib"])), state_["throughputTier"]) == (
        inputs["capacityGib"],
        inputs["perUnitStorageThroughput"],
    )


# --- the audit trail --------------------------------------------------------------------------------------------


def _renamed(children: dict[str, dict[str, Any]], old: str, new: str) -> dict[str, dict[str, Any]]:
    """A subtree's keys and in-subtree references with its name prefix ``old`` read as ``new``."""

    def name(key: str) -> str:
        kind, _, rest = key.partition("::")
        return f"{kind}::{new}{rest.removeprefix(old)}" if rest and rest.startswith(old) else key

    def dependency(urn_or_key: str) -> str:
        return name(_key(urn_or_key) if urn_or_key.startswith("urn:") else urn_or_key)

    return {
        name(key): {
            **child,
            "parent": name(child["parent"]),
            "dependencies": sorted(map(dependency, child["dependencies"])),
        }
        for key, child in children.items()
    }


def test_construct_of_the_aws_audit_trail_registers_what_the_offline_plan_registers(served, prod_plan):
    """prod's aws-use1 trail, given the site's key and access-log bucket: the trail, its log group and role as the
    offline plan's AwsCloudTrail has them, and its Object Lock bucket as site storage builds prod's audit bucket
    (COMPLIANCE, 731 days), every child with the same inputs, options and dependencies."""
    stack_file = load_stack_file(PROD)
    site = next(s for s in stack_file.spec.sites if s.name == "aws-use1")
    key, key_urn = state(prod_plan, "aws:kms/key:Key", "aws-use1-key-key")
    logs, logs_urn = state(prod_plan, "aws:s3/bucket:Bucket", "aws-use1-storage-access-logs-bucket")
    topic, topic_urn = state(prod_plan, "aws:sns/topic:Topic", "aws-use1-alarms-topic")
    _, trail_children = offline(prod_plan, "lattice:security:AwsCloudTrail", "aws-use1-trail")
    _, bucket_children = offline(prod_plan, "lattice:storage:S3Bucket", "aws-use1-storage-audit")
    bucket = stack_entry(stack_file, "aws-use1", "buckets", "audit")
    assert bucket.pop("purpose") == "audit"
    audited = [
        prod_plan.state(prod_plan.one("aws:s3/bucket:Bucket", f"aws-use1-storage-{b.name}-bucket"))["bucket"]
        for b in site.storage.buckets
        if b.purpose in ("datasets", "checkpoints")
    ]

    response = served.construct(
        "AwsCloudTrail",
        "aws-use1-trail",
        {
            "region": site.region,
            "tagging": _camel_keys(tagging(stack_file, "aws-use1")),
            "audit": {"logRetentionDays": site.audit.log_retention_days},
            "bucket": _camel_keys(bucket),
            "kmsKeyArn": out(key["arn"], key_urn),
            "accessLogBucket": out(logs["bucket"], logs_urn),
            "dataEventBuckets": audited,
            "alarmActions": [out(topic["arn"], topic_urn)],
        },
        stack="prod",
        providers={"aws": _provider_of(trail_children)},
        known=_providers_state(prod_plan, trail_children),
    )

    got = constructed(served, response)
    (bucket_urn,) = [r["urn"] for r in served.monitor.recording.records if r["type"] == "lattice:storage:S3Bucket"]
    assert response.urn == "urn:pulumi:prod::lattice::lattice:index:AwsCloudTrail::aws-use1-trail"
    # The Object Lock bucket: site storage's audit bucket, child for child (its names prefixed by the trail's).
    got_bucket = _renamed(
        registered(served.monitor.recording.records, bucket_urn), "aws-use1-trail-audit", "aws-use1-storage-audit"
    )
    expected_bucket = _renamed(bucket_children, "", "")  # every dependency by type and name, as got_bucket's
    assert sorted(got_bucket) == sorted(expected_bucket)
    for key_ in expected_bucket:
        assert got_bucket[key_] == expected_bucket[key_], key_
    # The trail, its log group and role: the offline plan's AwsCloudTrail's children. The trail waits for its
    # bucket's policy, which is the component's own child here and site storage's in the plan.
    own_bucket = {
        *registered(served.monitor.recording.records, bucket_urn),
        "lattice:storage:S3Bucket::aws-use1-trail-audit",
    }
    alarm = "aws:cloudwatch/metricAlarm:MetricAlarm::aws-use1-trail-audit-silent"
    assert sorted(set(got) - own_bucket - {alarm}) == sorted(trail_children)
    # The audit-silent alarm, which the site raises beside the trail in the plan: the same alarm, its actions.
    planned_alarm = prod_plan.one("aws:cloudwatch/metricAlarm:MetricAlarm", "aws-use1-trail-audit-silent")
    assert got[alarm]["inputs"] == planned_alarm["inputs"] and got[alarm]["provider"] == planned_alarm["provider"]
    assert sorted(got[alarm]["dependencies"]) == sorted(
        _key(d) if "AwsCloudTrail" in d else d for d in planned_alarm["dependencies"]
    )
    plan_urns = {_key(r["urn"]): r["urn"] for r in prod_plan.resources}
    for key_ in trail_children:
        dependencies = [
            plan_urns[d.replace("aws-use1-trail-audit", "aws-use1-storage-audit")] if d in own_bucket else d
            for d in got[key_]["dependencies"]
        ]
        assert {**got[key_], "dependencies": sorted(dependencies)} == trail_children[key_], key_
    trail = got["aws:cloudtrail/trail:Trail::aws-use1-trail-trail"]["inputs"]
    assert trail["isMultiRegionTrail"] and trail["enableLogFileValidation"] and trail["kmsKeyId"] == key["arn"]
    lock = got_bucket[
        "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration::aws-use1-storage-audit-object-lock"
    ]
    assert lock["inputs"]["rule"]["defaultRetention"] == {"mode": "COMPLIANCE", "days": 731}
    outputs = json_format.MessageToDict(response.state)
    assert outputs["trailName"] == "lattice-prod-aws-use1"
    assert (
        outputs["bucketName"]
        == prod_plan.state(prod_plan.one("aws:s3/bucket:Bucket", "aws-use1-storage-audit-bucket"))["bucket"]
    )
    assert outputs["kmsKeyArn"] == key["arn"] and outputs["accessLogBucketName"] == logs["bucket"]
    assert "kmsKeyId" not in outputs  # the program's own key


def _pack_findings(served, environment: str) -> list[tuple[str, str, str]]:
    """Lattice's policy pack, with ``environment``'s config, over what the last Construct registered."""
    from lattice.check.evaluate import config_path_for, evaluate, load_policy_config
    from lattice.policies.registry import all_rules

    rules = all_rules()
    plan = {"project": "lattice", "stack": environment, "resources": served.monitor.recording.records, "outputs": {}}
    result = evaluate(plan, load_policy_config(config_path_for(environment), rules), rules)
    return [(f.policy, f.urn.rsplit("::", 1)[-1], f.message) for f in result.findings]


AUDIT_RULES = (
    "cloudtrail-bucket-object-lock",
    "cloudtrail-cloudwatch-logs",
    "cloudtrail-kms",
    "cloudtrail-logging-enabled",
    "cloudtrail-management-events",
    "cloudtrail-multi-region",
    "cloudtrail-log-validation",
    "log-group-kms",
    "log-group-retention",
    "kms-key-rotation",
)


@pytest.mark.parametrize("environment", ["prod", "dev"])
def test_the_policy_pack_passes_the_aws_audit_trail_built_from_its_defaults(served, environment):
    """Region and tags only: the component builds its key, its Object Lock bucket (COMPLIANCE in prod, the
    environment's default elsewhere) and its access-log bucket, and every rule of the pack passes what it built."""
    from lattice.check.evaluate import config_path_for, load_policy_config
    from lattice.policies.registry import all_rules

    config = load_policy_config(config_path_for(environment), all_rules())
    assert [rule for rule in AUDIT_RULES if config.level(rule) == "disabled"] == []
    tags = {**_camel_keys(tagging(load_stack_file(PROD), "aws-use1")), "environment": environment}
    response = served.construct("AwsCloudTrail", "audit", {"region": "us-east-1", "tagging": tags}, stack=environment)

    assert _pack_findings(served, environment) == []
    got = constructed(served, response)
    assert {k.split("::")[0] for k in got} >= {
        "lattice:security:AwsKmsKey", "aws:kms/key:Key", "lattice:storage:S3Bucket", "aws:cloudtrail/trail:Trail",
        "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration", "aws:cloudwatch/logGroup:LogGroup",
    }  # fmt: skip
    lock = got["aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration::audit-audit-trail-object-lock"]
    mode = "COMPLIANCE" if environment == "prod" else "GOVERNANCE"
    assert lock["inputs"]["rule"]["defaultRetention"] == {"mode": mode, "days": 365}
    key_policy = json.loads(got["aws:kms/key:Key::audit-key-key"]["inputs"]["policy"])
    assert {s["Sid"] for s in key_policy["Statement"]} == {
        "AccountAdministersThroughIam",
        "CloudWatchLogsEncryptsThisAccountsLogGroups",
        "CloudTrailEncryptsThisSitesTrail",
        "CloudTrailDescribesTheKey",
    }  # fmt: skip  (no Auto Scaling role: no node volume uses this key)
    outputs = json_format.MessageToDict(response.state)
    assert outputs["kmsKeyId"] and outputs["accessLogBucketName"].startswith(
        "prod-aws-use1-access-logs-"
    )  # tagging.stack


def test_the_policy_pack_fails_an_audit_trail_whose_lock_is_shorter_than_the_minimum(served):
    """The other side of the test above: the same pack, the same component, a 30-day GOVERNANCE lock in prod."""
    tags = _camel_keys(tagging(load_stack_file(PROD), "aws-use1"))
    served.construct(
        "AwsCloudTrail",
        "audit",
        {
            "region": "us-east-1",
            "tagging": tags,
            "audit": {"logRetentionDays": 30},
            "bucket": {"immutable": {"mode": "GOVERNANCE", "days": 30}},
        },
        stack="prod",
    )
    found = {(policy, name) for policy, name, _ in _pack_findings(served, "prod")}
    assert ("cloudtrail-bucket-object-lock", "audit-audit-trail-bucket") in found
    assert ("log-group-retention", "audit-logs") in found


def test_bad_audit_trail_inputs_are_refused_with_every_property_path(served):
    tags = _camel_keys(tagging(load_stack_file(PROD), "aws-use1"))
    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "AwsCloudTrail",
            "audit",
            {
                "region": "us-east-1",
                "tagging": tags,
                "audit": {"logRetentionDays": 500},
                "bucket": {"immutable": {"days": 400, "years": 2}, "lifecycle": {"coldClass": "DEEP_ARCHIVE"}},
            },
            stack="prod",
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    errors = property_errors(refused.value)
    assert set(errors) == {"audit.logRetentionDays", "bucket.immutable", "bucket.lifecycle.coldClass"}
    assert errors["audit.logRetentionDays"].startswith("500 is not a retention CloudWatch Logs accepts")
    assert errors["bucket.immutable"] == "set days or years, not both (S3 default retention takes one of them)"
    assert "Traceback" not in refused.value.details()
    assert served.monitor.recording.records == []

    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "AwsCloudTrail",
            "audit",
            {"region": "us-east-1", "tagging": tags, "audit": {"logRetentionDays": 731}},
            stack="prod",
        )
    assert property_errors(refused.value) == {
        "audit.immutableDays": "the log group keeps the trail's records 731 days (audit.logRetentionDays) and the "
        "Object Lock only 365: for the rest the only copy is one whoever may delete log events can rewrite; lock "
        "them at least 731 days (the policy rule cloudtrail-bucket-object-lock requires it)"
    }
    assert served.monitor.recording.records == []


def test_an_audit_key_an_aws_trail_does_not_read_is_refused_not_ignored():
    """The stack file's audit model has GCP keys too; the AWS trail's public inputs take only its own (a
    consumer's SDK sends only the schema's keys, a Python program may pass any)."""
    from pulumi import InputPropertiesError

    from lattice.components.security.aws_cloudtrail import public_trail

    with pytest.raises(InputPropertiesError) as refused:
        public_trail({"region": "us-east-1", "tagging": {}, "audit": {"data_access_services": ["allServices"]}})
    assert refused.value.errors == [
        {
            "property_path": "audit.dataAccessServices",
            "reason": "unknown input; allowed here: logRetentionDays, immutableDays",
        }
    ]


# --- the team namespace -----------------------------------------------------------------------------------------

CAMPUS = ROOT / "stacks" / "Pulumi.campus.yaml"


def _flavors_of(plan: Plan, site: str) -> list[dict[str, Any]]:
    """The site's Kueue flavors as public inputs, read back from the offline plan's objects: each ResourceFlavor's
    labels, its Topology's levels, its ProvisioningRequest check, and its capacity (the cohort's pool plus every team
    queue's nominal quota; hosts Lattice does not know are covered without a limit, so give no cpus or memory)."""
    from lattice.components.platform.kueue_scheduler import UNLIMITED_CPU
    from tests.kueue import CLUSTER_QUEUE, COHORT, quotas

    flavors = [r for r in plan.by_type(kueue_type("ResourceFlavor")) if r["name"].startswith(f"{site}-kueue-")]
    cohort = quotas(plan.one(COHORT, f"{site}-kueue-cohort"))
    queues = [q for q in plan.by_type(CLUSTER_QUEUE) if q["inputs"]["spec"].get("cohortName") == site]
    team_quotas = [quotas(queue) for queue in queues]
    checks = {
        check["name"]: check["onFlavors"]
        for queue in queues
        for check in queue["inputs"]["spec"].get("admissionChecksStrategy", {}).get("admissionChecks", [])
    }
    out = []
    for flavor in flavors:
        meta, spec = flavor["inputs"]["metadata"], flavor["inputs"]["spec"]
        name, labels = meta["name"], meta["labels"]
        (resource,) = [t["key"] for t in spec["tolerations"]]

        def total(r: str, name: str = name) -> float:
            return cohort[name][r]["nominal"] + sum(team[name][r]["nominal"] for team in team_quotas)

        entry = {
            "name": name,
            "resource": resource,
            "quantity": int(total(resource)),
            "nodeLabels": spec["nodeLabels"],
            "platform": labels["lattice.dev/platform"],
        }
        if cohort[name]["cpu"]["nominal"] != float(UNLIMITED_CPU):
            entry |= {"cpus": int(total("cpu")), "memoryGib": total("memory")}
        if "lattice.dev/machine-type" in labels:
            entry["machineType"] = labels["lattice.dev/machine-type"]
        provisioning = [check for check, on in checks.items() if name in on]
        if provisioning:
            (entry["provisioning"],) = provisioning
        if "topologyName" in spec:
            suffix = spec["topologyName"].removeprefix(f"{site}-")
            topology = plan.one(kueue_type("Topology"), f"{site}-kueue-topology-{suffix}")
            entry["topology"] = {
                "name": suffix,
                "levels": [level["nodeLabel"] for level in topology["inputs"]["spec"]["levels"]],
            }
        out.append(entry)
    return out


def test_construct_of_a_team_namespace_with_its_queue_registers_what_the_offline_plan_registers(served):
    """campus's vision team on aws-use2 (an EKS cluster whose Kueue pools it has to itself): the namespace, its
    quotas, LimitRange, Role, RoleBinding and NetworkPolicies as the offline plan's TeamNamespace has them, and
    Kueue's Topology, ResourceFlavor, cohort, provisioning check, ClusterQueue and LocalQueue as the site's
    KueueScheduler has them, built with the consumer's Kubernetes provider."""
    from lattice.components.network.links import transit_routes
    from lattice.components.network.ports import HTTPS
    from lattice.components.spec.teams import team_on_site
    from tests.conftest import cached_plan
    from tests.kueue import crd_errors

    plan = cached_plan(CAMPUS)
    stack_file = load_stack_file(CAMPUS)
    spec = stack_file.spec
    site = next(s for s in spec.sites if s.name == "aws-use2")
    team_spec = next(t for t in spec.teams if t.name == "vision")
    team = team_on_site(team_spec, site)
    _, namespace_children = offline(plan, "lattice:platform:TeamNamespace", "aws-use2-vision")
    _, kueue_children = offline(plan, "lattice:platform:KueueScheduler", "aws-use2-kueue")
    kueue_children = _renamed(kueue_children, "", "")
    claims = [
        int(r["inputs"]["spec"]["resources"]["requests"]["storage"].removesuffix("Gi"))
        for r in plan.by_type("kubernetes:core/v1:PersistentVolumeClaim")
        if r["name"].startswith("aws-use2-") and r["inputs"]["metadata"]["namespace"] == team.namespace
    ]
    kueue_release = plan.one("kubernetes:helm.sh/v3:Release", "aws-use2-addons-kueue")["urn"]
    children = [*namespace_children.values(), *kueue_children.values()]
    waits = sorted({d for c in children for d in c["dependencies"] if d.startswith("urn:")} | {kueue_release})
    provider = _provider_of(namespace_children)

    response = served.construct(
        "TeamNamespace",
        "aws-use2-vision",
        {
            "team": {
                "name": team.team,
                "gpuQuota": team.accelerators,
                "podSecurity": team.pod_security,
                "podSecurityReason": team.pod_security_reason,
                "groups": list(team.groups),  # vision-lab and lattice:team:vision, its IAM roles' group on EKS
            },
            "tagging": _camel_keys(tagging(stack_file, "aws-use2")),
            "network": {
                "kind": "eks",
                "siteRanges": [site.network.cidr],
                "linkedRanges": list(transit_routes(spec, site)),
                "api": [{"cidr": site.network.cidr, "ports": [HTTPS]}],
            },
            "claimsGib": claims,
            "queue": {"flavors": _flavors_of(plan, "aws-use2")},
        },
        stack="campus",
        providers={"kubernetes": provider},
        known=_providers_state(plan, namespace_children),
        depends_on=waits,
    )

    assert response.urn == "urn:pulumi:campus::lattice::lattice:index:TeamNamespace::aws-use2-vision"
    got = constructed(served, response)
    (scheduler_urn,) = [
        r["urn"] for r in served.monitor.recording.records if r["type"] == "lattice:platform:KueueScheduler"
    ]
    got_kueue = _renamed(
        registered(served.monitor.recording.records, scheduler_urn), "aws-use2-vision-kueue", "aws-use2-kueue"
    )
    # Every object waits for what the component waits for (the cluster's access entries and Kueue's release);
    # in the plan each waits for its part of them.
    plan_waits = {_key(u) for u in waits}
    assert sorted(got_kueue) == sorted(kueue_children)
    assert len(kueue_children) == 7  # Topology, ResourceFlavor, Cohort, ProvisioningRequestConfig, AdmissionCheck,
    # ClusterQueue, LocalQueue
    assert len(namespace_children) == 13  # Namespace, 2 quotas, LimitRange, Role, RoleBinding, 7 NetworkPolicies
    for key_, expected in kueue_children.items():
        assert set(expected["dependencies"]) - set(got_kueue[key_]["dependencies"]) == set(), key_
        assert {**got_kueue[key_], "dependencies": None} == {**expected, "dependencies": None}, key_
        assert set(got_kueue[key_]["dependencies"]) - set(expected["dependencies"]) <= plan_waits, key_
        if expected["custom"]:
            kind = expected["inputs"]["kind"]
            assert crd_errors(kind, got_kueue[key_]["inputs"]["spec"]) == [], key_
    own = {k for k in got if k.split("::")[1].startswith("aws-use2-vision-kueue")}
    assert sorted(set(got) - own) == sorted(namespace_children)
    for key_, expected in namespace_children.items():
        assert {**got[key_], "dependencies": sorted(set(got[key_]["dependencies"]))} == {
            **expected,
            "dependencies": sorted(set(expected["dependencies"]) | set(waits)),
        }, key_
    outputs = json_format.MessageToDict(response.state)
    assert outputs == {
        "namespaceName": "vision",
        "localQueueName": "gpus",
        "clusterQueueName": "aws-use2-vision",
        "roleName": "lattice-team",
    }


def test_bad_team_namespace_inputs_are_refused_with_every_property_path(served):
    tags = _camel_keys(tagging(load_stack_file(CAMPUS), "aws-use2"))
    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "TeamNamespace",
            "ns",
            {
                "team": {"name": "Vision Lab", "gpuQuota": -1, "podSecurity": "privileged"},
                "tagging": tags,
                "network": {"kind": "aks", "siteRanges": ["10.40.0.0/16"]},
                "queue": {
                    "flavors": [
                        {"name": "mi300", "resource": "amd.com/gpu", "quantity": 8, "nodeLabels": {"pool": "mi300"}},
                        {"name": "p5", "resource": "nvidia.com/gpu", "quantity": 8, "nodeLabels": {"pool": "p5"},
                         "provisioning": "check-capacity"},
                    ]
                },
            },
            stack="campus",
        )  # fmt: skip
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    errors = property_errors(refused.value)
    assert set(errors) == {
        "team.name",
        "team.gpuQuota",
        "network.kind",
        "queue.flavors[0].resource",
        "queue.flavors[1].provisioning",
    }
    assert errors["network.kind"] == "eks, gke or kubernetes"
    assert "Traceback" not in refused.value.details()
    assert served.monitor.recording.records == []

    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "TeamNamespace",
            "ns",
            {
                "team": {"name": "vision", "gpuQuota": 8, "podSecurity": "privileged"},
                "tagging": tags,
                "network": {"kind": "eks", "siteRanges": ["10.40.0.0/16"]},
            },
            stack="campus",
        )
    assert property_errors(refused.value) == {
        "team.podSecurityReason": "the namespace enforces 'privileged', above restricted: say why (it is written on "
        "the namespace), or lower podSecurity"
    }
    assert served.monitor.recording.records == []


def _within(got: dict[str, Any], expected: dict[str, Any], waits: set[str]) -> bool:
    """``got`` is ``expected``, except that it may also wait for what the component waits for (``waits``): the
    stack-file path gives each child its part of them, the package every child all of them."""
    extra = set(got["dependencies"]) - set(expected["dependencies"])
    return (
        {**got, "dependencies": None} == {**expected, "dependencies": None}
        and set(expected["dependencies"]) <= set(got["dependencies"])
        and extra <= waits
    )


def test_construct_of_the_gcp_audit_trail_registers_what_the_offline_plan_registers(served, prod_plan):
    """prod's gcp-usc1 audit logs, given the site key: Data Access audit configs (the teams' workload account
    exempt from Cloud Storage reads), Cloud Logging's grant on the key, the locked 365-day log bucket and its sink,
    as the offline plan has them."""
    stack_file = load_stack_file(PROD)
    site = next(s for s in stack_file.spec.sites if s.name == "gcp-usc1")
    key, key_urn = state(prod_plan, "gcp:kms/cryptoKey:CryptoKey", "gcp-usc1-key-key")
    _, expected = offline(prod_plan, "lattice:security:GcpAuditLogs", "gcp-usc1-audit")
    waits = sorted({d for c in expected.values() for d in c["dependencies"] if d.startswith("urn:") and d != key_urn})
    account = prod_plan.state(prod_plan.one("gcp:serviceaccount/account:Account", "gcp-usc1-team-fusion-workload"))
    planned_policy = prod_plan.one("gcp:monitoring/alertPolicy:AlertPolicy", "gcp-usc1-audit-silent")
    channels = [
        state(prod_plan, "gcp:monitoring/notificationChannel:NotificationChannel", _key(urn).split("::")[1])
        for urn in planned_policy["dependencies"]
        if "NotificationChannel::" in urn
    ]

    response = served.construct(
        "GcpAuditLogs",
        "gcp-usc1-audit",
        {
            "project": site.project,
            "region": site.region,
            "tagging": _camel_keys(tagging(stack_file, "gcp-usc1")),
            "audit": {"immutableDays": site.audit.immutable_days},
            "kmsKeyId": out(key["id"], key_urn),
            "exemptStorageReaders": [f"serviceAccount:{account['email']}"],
            "notificationChannels": [out(channel["id"], urn) for channel, urn in channels],
        },
        stack="prod",
        providers={"gcp": _provider_of(expected)},
        known=_providers_state(prod_plan, expected),
        depends_on=waits,
    )

    got = constructed(served, response)
    policy = got.pop("gcp:monitoring/alertPolicy:AlertPolicy::gcp-usc1-audit-audit-silent")
    assert sorted(got) == sorted(expected)
    assert len(expected) == 6  # 3 audit configs, the key grant, the bucket, the sink
    # The audit-silent alert policy, which the site makes beside the audit logs in the plan: the same policy,
    # notifying the same channels.
    assert policy["inputs"] == planned_policy["inputs"] and policy["provider"] == planned_policy["provider"]
    for key_ in expected:
        assert _within(got[key_], expected[key_], set(waits)), key_
    bucket = got["gcp:logging/projectBucketConfig:ProjectBucketConfig::gcp-usc1-audit-bucket"]
    assert (bucket["inputs"]["locked"], bucket["inputs"]["retentionDays"], bucket["protect"]) == (True, 365, True)
    outputs = json_format.MessageToDict(response.state)
    assert outputs["logBucketId"] == "lattice-audit" and outputs["sinkName"] == "lattice-audit"
    assert outputs["kmsKeyId"] == key["id"]


GCP_AUDIT_RULES = ("gcp-audit-log-store", "gcp-data-access-audit", "gcp-kms-key-rotation", "gcp-kms-key-enabled")


@pytest.mark.parametrize("environment", ["prod", "dev"])
def test_the_policy_pack_passes_the_gcp_audit_trail_built_from_its_defaults(served, environment):
    """Project, region and tags only: the component creates its key (rotated, no GKE grant), locks the bucket in
    prod, turns Data Access logs on, and every rule of the pack passes what it built. Outside prod the bucket is
    unlocked, as the stack file leaves it (its retention can then still change), which the pack notes as advice."""
    from lattice.check.evaluate import config_path_for, load_policy_config
    from lattice.policies.registry import all_rules

    config = load_policy_config(config_path_for(environment), all_rules())
    assert [rule for rule in GCP_AUDIT_RULES if config.level(rule) == "disabled"] == []
    tags = {**_camel_keys(tagging(load_stack_file(PROD), "gcp-usc1")), "environment": environment}
    response = served.construct(
        "GcpAuditLogs", "audit", {"project": "lattice-burst", "region": "us-central1", "tagging": tags}, stack="prod"
    )

    if environment == "prod":
        assert _pack_findings(served, environment) == []
    else:
        assert _pack_findings(served, environment) == [
            ("gcp-audit-log-store", "audit-bucket", "the audit log bucket is not locked")
        ]
        assert config.level("gcp-audit-log-store") == "advisory"
    got = constructed(served, response)
    bucket = got["gcp:logging/projectBucketConfig:ProjectBucketConfig::audit-bucket"]["inputs"]
    assert (bucket["locked"], bucket["retentionDays"]) == (environment == "prod", 365)
    assert "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember::audit-key-gke-agent" not in got
    assert {k.split("::")[1] for k in got if k.startswith("gcp:projects/iAMAuditConfig")} == {
        "audit-storage", "audit-container", "audit-cloudkms",
    }  # fmt: skip


def test_the_policy_pack_fails_a_gcp_audit_trail_kept_too_briefly(served):
    tags = _camel_keys(tagging(load_stack_file(PROD), "gcp-usc1"))
    served.construct(
        "GcpAuditLogs",
        "audit",
        {"project": "lattice-burst", "region": "us-central1", "tagging": tags, "audit": {"immutableDays": 30},
         "locked": False},
        stack="prod",
    )  # fmt: skip
    found = {(policy, name) for policy, name, _ in _pack_findings(served, "prod")}
    assert ("gcp-audit-log-store", "audit-bucket") in found


def test_bad_gcp_audit_inputs_are_refused_with_every_property_path(served):
    tags = _camel_keys(tagging(load_stack_file(PROD), "gcp-usc1"))
    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "GcpAuditLogs",
            "audit",
            {"project": "lattice-burst", "region": "us-central1", "tagging": tags,
             "audit": {"immutableDays": 0, "dataAccessServices": []}, "encryption": {"keyRotationDays": 30}},
            stack="prod",
        )  # fmt: skip
    assert set(property_errors(refused.value)) == {
        "audit.immutableDays", "audit.dataAccessServices", "encryption.keyRotationDays",
    }  # fmt: skip
    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "GcpAuditLogs",
            "audit",
            {"project": "lattice-burst", "region": "us-central1", "tagging": tags,
             "audit": {"immutableDays": 731, "keptLogBuckets": [365, 731]}},
            stack="prod",
        )  # fmt: skip
    assert property_errors(refused.value) == {
        "audit.keptLogBuckets[1]": "731 is immutableDays itself (the bucket the sink writes to); list only earlier "
        "retentions"
    }
    assert served.monitor.recording.records == []


# --- the GCP GPU / TPU pool -------------------------------------------------------------------------------------


def _gcp_pool_inputs(stack_file, plan: Plan, pool_name: str) -> dict[str, Any]:
    """prod's gcp-usc1 pool as a program adds it: the pool as the stack file writes it, its zone, the cluster and the
    node service account from the offline plan (output values from their URNs)."""
    site = next(s for s in stack_file.spec.sites if s.name == "gcp-usc1")
    cluster, cluster_urn = state(plan, "gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")
    account, account_urn = state(plan, "gcp:serviceaccount/account:Account", "gcp-usc1-gke-nodes")
    pool = stack_entry(stack_file, "gcp-usc1", "gpu_pools", pool_name)
    pool.pop("workload", None)  # the site's sizing check
    spec = next(p for p in site.gpu_pools if p.name == pool_name)
    return {
        "pool": _camel_keys(pool),
        "project": site.project,
        "zone": spec.zone_in(site),
        "clusterId": out(cluster["id"], cluster_urn),
        "serviceAccount": out(account["email"], account_urn),
        "tagging": _camel_keys(tagging(stack_file, "gcp-usc1")),
    }


def _name_replaced(children: dict[str, dict[str, Any]], old: str, new: str) -> dict[str, dict[str, Any]]:
    """Every occurrence of the name ``old`` (keys, parents, URNs) read as ``new``."""
    return json.loads(json.dumps(children).replace(old, new))


def test_construct_of_the_gcp_gpu_pool_builds_its_gpu_nic_networks_and_the_offline_plans_node_pool(served, prod_plan):
    """prod's A3 Mega flex-start pool: the node pool the offline plan registers, input for input, and the eight GPU
    NIC networks the site builds for it (a GcpGpuFabric of the pool's own here: same physical names, subnets and
    firewalls, waiting for the APIs the component waits for), and what a pod needs to use them."""
    stack_file = load_stack_file(PROD)
    services = sorted(r["urn"] for r in prod_plan.resources if r["type"] == "gcp:projects/service:Service"
                      and r["name"].startswith("gcp-usc1-"))  # fmt: skip
    _, pool_children = offline(prod_plan, "lattice:compute:GcpGpuNodePool", "gcp-usc1-train-a3mega")
    fabric, fabric_children = offline(prod_plan, "lattice:network:GcpGpuFabric", "gcp-usc1-a3-megagpu-8g-a-fabric")
    fabric_key = "lattice:network:GcpGpuFabric::gcp-usc1-train-a3mega-fabric"
    expected = {
        **pool_children,
        fabric_key: {**registered([fabric], fabric["parent"])[f"lattice:network:GcpGpuFabric::{fabric['name']}"]},
        **{key: {**child, "parent": fabric_key if child["parent"] == "component" else child["parent"]}
           for key, child in fabric_children.items()},
    }  # fmt: skip
    # The pool's own fabric: named after the pool, its children's URNs under the pool's.
    expected = _name_replaced(expected, "gcp-usc1-a3-megagpu-8g-a-fabric", "gcp-usc1-train-a3mega-fabric")
    inside = re.compile(r"urn:pulumi:prod::lattice::[^\"]*\$lattice:network:GcpGpuFabric\$([^\"]+)")
    expected = json.loads(inside.sub(lambda m: m.group(1), json.dumps(expected)))
    for child in expected.values():
        child["dependencies"].sort()

    response = served.construct(
        "GcpGpuNodePool",
        "gcp-usc1-train-a3mega",
        _gcp_pool_inputs(stack_file, prod_plan, "train-a3mega"),
        stack="prod",
        providers={"gcp": _provider_of(pool_children)},
        known=_providers_state(prod_plan, pool_children),
        depends_on=services,
    )

    assert response.urn == "urn:pulumi:prod::lattice::lattice:index:GcpGpuNodePool::gcp-usc1-train-a3mega"
    got = constructed(served, response)
    assert sorted(got) == sorted(expected)
    assert len(got) == 1 + 1 + 8 * 3  # the node pool; the fabric: a network, subnet and firewall per GPU NIC
    for key_ in expected:
        assert got[key_] == expected[key_], key_
    node_pool = got["gcp:container/nodePool:NodePool::gcp-usc1-train-a3mega-pool"]["inputs"]
    assert len(node_pool["networkConfig"]["additionalNodeNetworkConfigs"]) == 8
    assert node_pool["queuedProvisioning"] == {"enabled": True} and node_pool["nodeConfig"]["flexStart"] is True
    outputs = json_format.MessageToDict(response.state)
    site_out = prod_plan.revealed_outputs["sites"]["gcp-usc1"]["gpu_pools"]["train-a3mega"]
    assert outputs["podAnnotations"] == site_out["pod_annotations"]
    assert outputs["gpudirectSidecarImage"] == site_out["gpudirect_sidecar_image"]
    assert outputs["gpuNicCount"] == 8 and outputs["tpuChips"] == 0
    assert outputs["nodePoolName"] == "train-a3mega"
    assert outputs["gpuNicNetworks"] == {
        "gpuNics": [{"network": f"prod-gcp-usc1-a3mega-a-nic{i}", "subnetwork": f"prod-gcp-usc1-a3mega-a-nic{i}"}
                     for i in range(8)],
        "gvnics": [],
    }  # fmt: skip


def test_construct_of_a_tpu_slice_registers_what_the_offline_plan_registers(served, prod_plan):
    stack_file = load_stack_file(PROD)
    _, expected = offline(prod_plan, "lattice:compute:GcpGpuNodePool", "gcp-usc1-tpu-v5p")
    response = served.construct(
        "GcpGpuNodePool",
        "gcp-usc1-tpu-v5p",
        _gcp_pool_inputs(stack_file, prod_plan, "tpu-v5p"),
        stack="prod",
        providers={"gcp": _provider_of(expected)},
        known=_providers_state(prod_plan, expected),
    )
    got = constructed(served, response)
    assert sorted(got) == ["gcp:container/nodePool:NodePool::gcp-usc1-tpu-v5p-pool"]
    assert got == expected
    assert got["gcp:container/nodePool:NodePool::gcp-usc1-tpu-v5p-pool"]["inputs"]["placementPolicy"] == {
        "type": "COMPACT",
        "tpuTopology": "2x2x2",
    }
    outputs = json_format.MessageToDict(response.state)
    assert (outputs["tpuChips"], outputs["gpuNicCount"], outputs["podAnnotations"]) == (8, 0, {})


def test_a_second_pool_of_the_type_attaches_to_the_first_pools_gpu_nic_networks_and_builds_none(served, prod_plan):
    stack_file = load_stack_file(PROD)
    inputs = _gcp_pool_inputs(stack_file, prod_plan, "train-a3mega")
    networks = [{"network": f"prod-gcp-usc1-a3mega-a-nic{i}", "subnetwork": f"prod-gcp-usc1-a3mega-a-nic{i}"}
                for i in range(8)]  # fmt: skip
    inputs["pool"]["name"] = "train-a3mega-spot"
    inputs["pool"]["capacity"] = {"type": "spot"}
    response = served.construct(
        "GcpGpuNodePool",
        "gcp-usc1-train-a3mega-spot",
        {**inputs, "gpuNicNetworks": {"gpuNics": networks}},
        stack="prod",
    )
    got = constructed(served, response)
    assert sorted(got) == ["gcp:container/nodePool:NodePool::gcp-usc1-train-a3mega-spot-pool"]
    node_pool = got["gcp:container/nodePool:NodePool::gcp-usc1-train-a3mega-spot-pool"]["inputs"]
    # In the pool's own project GKE names them as the fabric's node pool does: by name.
    assert node_pool["networkConfig"]["additionalNodeNetworkConfigs"] == networks
    assert node_pool["nodeConfig"]["spot"] is True
    outputs = json_format.MessageToDict(response.state)
    assert (
        outputs["podAnnotations"]
        == prod_plan.revealed_outputs["sites"]["gcp-usc1"]["gpu_pools"]["train-a3mega"]["pod_annotations"]
    )


def test_a_gcp_pool_with_mistakes_is_refused_with_every_property_path(served):
    stack_file = load_stack_file(PROD)
    tags = _camel_keys(tagging(stack_file, "gcp-usc1"))
    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "GcpGpuNodePool",
            "tpu",
            {
                "pool": {"name": "v5p", "tpu": {"type": "v5p", "topology": "3x3x3"},
                         "capacity": {"type": "flex-start"}},
                "project": "lattice-prod-ml", "zone": "us-central1", "clusterId": "c", "serviceAccount": "sa",
                "tagging": tags,
            },
            stack="prod",
        )  # fmt: skip
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert property_errors(refused.value) == {
        "zone": "'us-central1' is not a zone name; write it like us-east-1a (AWS) or us-central1-a (GCP)",
        "pool.tpu.topology": "'3x3x3' is not a v5p topology; use one of 2x2x1, 2x2x2, 2x2x4, 2x4x4, 4x4x4, 4x4x8, "
        "4x8x8, 8x8x8, 8x8x16, 8x16x16, 16x16x16, 16x16x24",
        "pool.capacity.type": "flex-start TPU slices are not supported yet; use on-demand or spot",
    }
    assert served.monitor.recording.records == []

    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "GcpGpuNodePool",
            "a3",
            {
                "pool": {"name": "a3", "machineType": "a3-megagpu-8g", "maxNodes": 2, "minNodes": 3},
                "project": "lattice-prod-ml", "zone": "us-central1-a", "clusterId": "c", "serviceAccount": "sa",
                "tagging": tags,
                "gpuNicNetworks": {"gpuNics": [{"network": f"nic{i}", "subnetwork": f"nic{i}"} for i in range(4)]},
            },
            stack="prod",
        )  # fmt: skip
    assert property_errors(refused.value) == {
        "pool.maxNodes": "need min_nodes ≤ desired_nodes ≤ max_nodes (got 3 ≤ 3 ≤ 2); adjust the three counts",
        "gpuNicNetworks.gpuNics": "a3-megagpu-8g has 8 GPU NICs, and 4 networks are named; name exactly 8, one per "
        "NIC in NIC order",
    }
    assert "Traceback" not in refused.value.details()
    assert served.monitor.recording.records == []


def test_a_pool_key_the_public_inputs_leave_out_is_refused_not_ignored():
    """Python programs hand the class a dict directly (over gRPC the host drops keys its schema lacks): the pool's
    zone is the component's input, given once."""
    from lattice.components.compute.gcp_gpu_node_pool import GcpGpuPool, args_from_inputs
    from lattice.components.package.inputs import camel_case

    pool = {"name": "a3", "machine_type": "a3-megagpu-8g", "zone": "us-central1-b"}
    with pytest.raises(InputPropertiesError) as refused:
        args_from_inputs(
            {"pool": pool, "project": "lattice-prod-ml", "zone": "us-central1-a", "cluster_id": "c",
             "service_account": "sa", "tagging": tagging(load_stack_file(PROD), "gcp-usc1")},
            depends_on=[],
        )  # fmt: skip
    allowed = ", ".join(camel_case(key) for key in GcpGpuPool.__annotations__)
    assert refused.value.errors == [{"property_path": "pool.zone", "reason": f"unknown input; allowed here: {allowed}"}]


def test_construct_of_a_clusters_kueue_plan_for_its_teams_registers_what_the_offline_plan_registers(served, prod_plan):
    """prod's grid-hpc (the MultiKueue manager), four teams sharing its InfiniBand H100 pool: the Topology, the
    ResourceFlavor, the cohort and each team's ClusterQueue and LocalQueue as the offline plan's KueueScheduler has
    them (the teams' guarantees scaled, the cohort's pool what they leave), each passing the pinned CRD schema and
    CEL rules."""
    from lattice.components.scheduling.routes import site_teams
    from lattice.components.spec.teams import team_on_site
    from tests.kueue import crd_errors

    spec = load_stack_file(PROD).spec
    site = next(s for s in spec.sites if s.name == "grid-hpc")
    # Its teams as the site has them: those on it, and fusion, which submits on this MultiKueue manager with no
    # accelerators of its own here.
    teams = [team_on_site(team, site) for team in site_teams(spec, site)]
    _, expected = offline(prod_plan, "lattice:platform:KueueScheduler", "grid-hpc-kueue")
    release = prod_plan.one("kubernetes:helm.sh/v3:Release", "grid-hpc-addons-kueue")["urn"]  # Kueue's CRDs
    namespaces = {
        t.team: state(prod_plan, "kubernetes:core/v1:Namespace", f"grid-hpc-{t.team}-namespace") for t in teams
    }

    response = served.construct(
        "KueueScheduler",
        "grid-hpc-kueue",
        {
            "flavors": _flavors_of(prod_plan, "grid-hpc"),
            "teams": [
                {"name": t.team, "namespace": out(namespaces[t.team][0]["metadata"]["name"], namespaces[t.team][1]),
                 "gpuQuota": t.accelerators, "gpuGuarantee": t.guarantee, "cpu": t.cpu, "memoryGib": t.memory_gib}
                for t in teams
            ],
            "tagging": _camel_keys(tagging(load_stack_file(PROD), "grid-hpc")),
        },
        stack="prod",
        providers={"kubernetes": _provider_of(expected)},
        known=_providers_state(prod_plan, expected),
        depends_on=[release],
    )  # fmt: skip

    got = constructed(served, response)
    assert sorted(got) == sorted(expected)
    assert len(expected) == 3 + 2 * len(teams) == 11  # Topology, ResourceFlavor, Cohort; a queue pair per team
    for key_ in expected:
        assert got[key_] == expected[key_], key_
        assert crd_errors(expected[key_]["inputs"]["kind"], got[key_]["inputs"]["spec"]) == [], key_
    outputs = json_format.MessageToDict(response.state)
    assert outputs == {
        "cohortName": "grid-hpc",
        "clusterQueueNames": {t.team: f"grid-hpc-{t.team}" for t in teams},
        "localQueueName": "gpus",
    }


def test_a_kueue_plan_naming_a_team_twice_or_no_pool_is_refused(served):
    tags = _camel_keys(tagging(load_stack_file(PROD), "grid-hpc"))
    with pytest.raises(grpc.RpcError) as refused:
        served.construct(
            "KueueScheduler",
            "kueue",
            {"flavors": [], "teams": [{"name": "climate", "gpuQuota": 8}, {"name": "climate", "gpuQuota": 4},
                                      {"name": "fusion", "gpuQuota": -8}],
             "tagging": tags},
            stack="prod",
        )  # fmt: skip
    assert property_errors(refused.value) == {
        "flavors": "give at least one pool",
        "teams[1].name": "'climate' is listed twice; one queue per team",
        "teams[2].gpuQuota": "the value: must be at least 0 (got -8.0); give one value for every site the team is on, "
        "or one per site: {site-name: value}",
    }
    assert served.monitor.recording.records == []


# --- the links with a GCP end -------------------------------------------------------------------------------------


def _aws_hub_end(prod_plan: Plan, aws_site, ranges: list[str]) -> dict[str, Any]:
    """prod's aws-use1 end of a link, as its site hands it over: the transit gateway, its route table, the VPN log
    group, the cluster's security group and the alarm topic from the offline plan."""
    cluster, cluster_urn = state(prod_plan, "aws:eks/cluster:Cluster", "aws-use1-eks-cluster")
    tgw, tgw_urn = state(prod_plan, "aws:ec2transitgateway/transitGateway:TransitGateway", "aws-use1-net-tgw")
    table, table_urn = state(prod_plan, "aws:ec2transitgateway/routeTable:RouteTable", "aws-use1-net-tgw-routes")
    logs, logs_urn = state(prod_plan, "aws:cloudwatch/logGroup:LogGroup", "aws-use1-net-vpn-logs")
    topic, topic_urn = state(prod_plan, "aws:sns/topic:Topic", "aws-use1-alarms-topic")
    return {
        "site": "aws-use1",
        "asn": aws_site.network.asn,
        "transitGatewayId": out(tgw["id"], tgw_urn),
        "routeTableId": out(table["id"], table_urn),
        "vpnLogGroupArn": out(logs["arn"], logs_urn),
        "ranges": ranges,
        "region": aws_site.region,
        "clusterSecurityGroupId": out(cluster["vpcConfig"]["clusterSecurityGroupId"], cluster_urn),
        "alarmActions": [out(topic["arn"], topic_urn)],
    }


def _gcp_end(stack_file, plan: Plan, ranges: list[str]) -> dict[str, Any]:
    """gcp-usc1's VPN Cloud Router and HA VPN gateways as the offline plan has them (output values from their URNs)."""
    site = next(s for s in stack_file.spec.sites if s.name == "gcp-usc1")
    router, router_urn = state(plan, "gcp:compute/router:Router", "gcp-usc1-vpn-router")
    network, network_urn = state(plan, "gcp:compute/network:Network", "gcp-usc1-net-network")
    gateways = [
        state(plan, "gcp:compute/haVpnGateway:HaVpnGateway", r["name"])
        for r in sorted(plan.resources, key=lambda r: r["name"])
        if r["type"] == "gcp:compute/haVpnGateway:HaVpnGateway" and r["name"].startswith("gcp-usc1-vpn-gw-")
    ]
    return {
        "site": "gcp-usc1",
        "project": site.project,
        "region": site.region,
        "asn": site.network.asn,
        "routerId": out(router["id"], router_urn),
        "haVpnGateways": [
            {"id": out(gw["id"], urn), "interfaceIps": out([i["ipAddress"] for i in gw["vpnInterfaces"]], urn)}
            for gw, urn in gateways
        ],
        "ranges": ranges,
        "networkId": out(network["id"], network_urn),
    }


def _providers(children: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Each cloud's provider the children use, by package (a link between two clouds uses both)."""
    providers = {c["provider"] for c in children.values() if c["custom"] and c["provider"]}
    return {urn.split("::")[2].split("$")[-1].removeprefix("pulumi:providers:"): urn for urn in providers}


def test_construct_of_the_aws_gcp_link_registers_what_the_offline_plan_registers(served, prod_plan):
    """prod's aws-use1 <-> gcp-usc1 (4 Gbps, large AWS tunnels): Google's four-tunnel topology, both clouds' sides,
    the keys, the admit rules on both ends, input for input as the offline plan has them."""
    from lattice.components.spec.link_validators import routed_networks

    stack_file = load_stack_file(PROD)
    spec = stack_file.spec
    aws_site, gcp_site = (next(s for s in spec.sites if s.name == name) for name in ("aws-use1", "gcp-usc1"))
    (link,) = [entry for entry in spec.links if entry.sites == ["aws-use1", "gcp-usc1"]]
    _, expected = offline(prod_plan, "lattice:network:VpnLink", "aws-use1--gcp-usc1")

    response = served.construct(
        "VpnLink",
        "aws-use1--gcp-usc1",
        {
            "cloud": _aws_hub_end(prod_plan, aws_site, [str(net) for net in routed_networks(aws_site)]),
            "gcp": _gcp_end(stack_file, prod_plan, [str(net) for net in routed_networks(gcp_site)]),
            "link": _camel_keys(link.model_dump(mode="json", exclude_unset=True, exclude={"sites"})),
            "tagging": _camel_keys(tagging(stack_file, "aws-use1")),
        },
        stack="prod",
        providers=_providers(expected),
        known=_providers_state(prod_plan, expected),
    )

    got = constructed(served, response)
    assert sorted(got) == sorted(expected)
    # 2 customer gateways, 2 connections (+ association, propagation, alarm each), 1 external gateway, 4 tunnels
    # (+ router interface and BGP peer each), 4 keys, 2 admit rules on AWS and 1 firewall on GCP
    assert len(got) == 2 + 2 * 4 + 1 + 4 * 3 + 4 + 2 + 1
    for key_ in expected:
        assert got[key_] == expected[key_], key_
    outputs = json_format.MessageToDict(response.state)
    summary = prod_plan.revealed_outputs["links"]["aws-use1--gcp-usc1"]
    assert (outputs["tunnelCount"], outputs["capacityGbps"]) == (summary["tunnels"], summary["capacity_gbps"]) == (4, 4)
    tunnels = sorted(r for r in expected if r.startswith("gcp:compute/vPNTunnel:VPNTunnel::"))
    assert sorted(outputs["tunnelIds"]) == sorted(prod_plan.state(prod_plan.one(*t.split("::")))["id"] for t in tunnels)
    assert len(outputs["connectionIds"]) == 2
    assert outputs["frrConf"] == {} and outputs["swanctlConf"]["value"] == {}


@pytest.fixture(scope="module")
def gcp_spoke_plan(tmp_path_factory) -> Plan:
    """prod with a GCP spoke, edge-beamline to gcp-usc1, as tests/integration/test_peer_configs.py plans it (the
    shipped stacks have no GCP <-> on-prem link): the stack file's own path for that kind."""
    from lattice.engine.plan import run_plan

    document = yaml.safe_load(PROD.read_text())
    document["config"]["lattice:spec"]["links"].append({"sites": ["gcp-usc1", "edge-beamline"], "bandwidth_gbps": 1})
    path = tmp_path_factory.mktemp("gcp-spoke") / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return run_plan(path)


def _blocks(conf: str, prefix: str) -> dict[str, str]:
    """The top-level entries of swanctl.conf's connections / secrets whose names start with ``prefix``."""
    found = {}
    for match in re.finditer(rf"^  ({re.escape(prefix)}\S*) \{{\n", conf, flags=re.MULTILINE):
        depth, end = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(conf[end], 0)
            end += 1
        found[match.group(1)] = conf[match.start() : end]
    return found


def test_construct_of_a_gcp_onprem_link_registers_what_the_offline_plan_registers_and_renders_its_tunnels(
    served, gcp_spoke_plan
):
    """edge-beamline to gcp-usc1 (1 Gbps): the external VPN gateway, the HA VPN tunnels with their router interfaces
    and BGP peers, the keys, as the stack file's path registers them; the gateway host's files hold those tunnels
    exactly as the stack's files do (which also hold the host's AWS tunnels: the stack renders a host's links
    together)."""
    from lattice.components.spec.link_validators import routed_networks

    plan = gcp_spoke_plan
    stack_file = load_stack_file(PROD)
    spec = stack_file.spec
    edge, gcp_site = (next(s for s in spec.sites if s.name == name) for name in ("edge-beamline", "gcp-usc1"))
    _, expected = offline(plan, "lattice:network:VpnLink", "gcp-usc1--edge-beamline")

    response = served.construct(
        "VpnLink",
        "gcp-usc1--edge-beamline",
        {
            "gcp": _gcp_end(stack_file, plan, [str(net) for net in routed_networks(gcp_site)]),
            "peer": {
                "site": "edge-beamline",
                "asn": edge.network.asn,
                "publicIps": list(edge.network.vpn_gateway.public_ips),
                "ranges": [str(net) for net in routed_networks(edge)],
            },
            "link": {"bandwidthGbps": 1},
            "tagging": _camel_keys(tagging(stack_file, "gcp-usc1")),
        },
        stack="prod",
        providers=_providers(expected),
        known=_providers_state(plan, expected),
    )

    got = constructed(served, response)
    assert sorted(got) == sorted(expected)
    assert len(got) == 1 + 2 * 3 + 2  # the external gateway; 2 tunnels, each with its interface and peer; 2 keys
    for key_ in expected:
        assert got[key_] == expected[key_], key_
    outputs = json_format.MessageToDict(response.state)
    (ip,) = edge.network.vpn_gateway.public_ips
    stack_files = plan.revealed_outputs["sites"]["edge-beamline"]["vpn"][ip]
    secret = outputs["swanctlConf"]
    assert secret[rpc._special_sig_key] == rpc._special_secret_sig
    for conf, stacks in ((secret["value"][ip], stack_files["swanctl.conf"]),
                         (outputs["swanctlRedactedConf"][ip], stack_files["swanctl.redacted.conf"])):  # fmt: skip
        for prefix in ("gcp-usc1-t", "ike-gcp-usc1-t"):
            ours = _blocks(conf, prefix)
            assert sorted(ours) == sorted(_blocks(stacks, prefix)) and len(ours) == 2
            assert ours == _blocks(stacks, prefix)
        assert _blocks(conf, "aws-use1-t") == {} != _blocks(stacks, "aws-use1-t")
    neighbours = [line for line in outputs["frrConf"][ip].splitlines() if line.startswith(" neighbor ")]
    assert len(neighbours) == 2 * 3 and set(neighbours) <= set(stack_files["frr.conf"].splitlines())
    assert outputs["connectionIds"] == [] and len(outputs["tunnelIds"]) == 2


def test_a_link_with_mistakes_is_refused_with_every_property_path(served):
    stack_file = load_stack_file(PROD)
    tags = _camel_keys(tagging(stack_file, "gcp-usc1"))
    gcp_end = {"site": "gcp-usc1", "project": "lattice-prod-ml", "region": "us-central1", "asn": 64700,
               "routerId": "projects/lattice-prod-ml/regions/us-central1/routers/r",
               "haVpnGateways": [{"id": "g", "interfaceIps": ["203.0.113.1", "203.0.113.2"]}],
               "ranges": ["10.30.0.0/16"]}  # fmt: skip
    peer = {"site": "edge-beamline", "asn": 64900, "publicIps": ["192.0.2.20"], "ranges": ["10.60.0.0/20"]}

    def refused(inputs: dict[str, Any]) -> dict[str, str]:
        with pytest.raises(grpc.RpcError) as error:
            served.construct("VpnLink", "link", {**inputs, "tagging": tags}, stack="prod")
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "Traceback" not in error.value.details()
        assert served.monitor.recording.records == []
        return property_errors(error.value)

    assert refused({"gcp": gcp_end}) == {
        "peer": "a link has two ends: cloud (AWS) and peer (on-prem), gcp and peer, or cloud and gcp; give the other "
        "end"
    }
    three_hosts = {**peer, "publicIps": ["192.0.2.20", "192.0.2.21", "192.0.2.22"], "asn": 0}
    assert refused({"gcp": gcp_end, "peer": three_hosts}) == {
        "peer.asn": "0 is not a BGP ASN (1-4294967294)",
        "peer.publicIps": "List should have at most 2 items after validation, not 3 (got ['192.0.2.20', "
        "'192.0.2.21', '192.0.2.22'])",
    }
    assert refused({"gcp": gcp_end, "peer": peer, "link": {"routing": "static"}}) == {
        "link.routing": "HA VPN on GCP routes only with BGP (Cloud Router); use routing: bgp"
    }
    assert refused({"gcp": gcp_end, "peer": peer, "link": {"bandwidthGbps": 10, "tunnelSize": "large"}}) == {
        "link.tunnelSize": "tunnel_size is an AWS setting (Cloud VPN tunnels have one size); remove it",
        "gcp.haVpnGateways": "10 Gbps takes 5 tunnel pairs (2 Gbps per Cloud VPN tunnel), each on an HA VPN "
        "gateway of its own: give 5 gateways, not 1",
    }


def test_a_hub_key_in_a_link_is_refused_not_ignored():
    """One link is one pair: a Python program's link.hub (the host drops it over gRPC) is refused."""
    from lattice.components.network.vpn import LinkSettings, args_from_inputs
    from lattice.components.package.inputs import camel_case

    gcp_end = {"site": "gcp-usc1", "project": "lattice-prod-ml", "region": "us-central1", "asn": 64700,
               "router_id": "projects/lattice-prod-ml/regions/us-central1/routers/r",
               "ha_vpn_gateways": [{"id": "g", "interface_ips": ["203.0.113.1", "203.0.113.2"]}],
               "ranges": ["10.30.0.0/16"]}  # fmt: skip
    peer = {"site": "edge-beamline", "asn": 64900, "public_ips": ["192.0.2.20"], "ranges": ["10.60.0.0/20"]}
    with pytest.raises(InputPropertiesError) as refused:
        args_from_inputs(
            {"gcp": gcp_end, "peer": peer, "link": {"hub": "gcp-usc1"},
             "tagging": tagging(load_stack_file(PROD), "gcp-usc1")}
        )  # fmt: skip
    allowed = ", ".join(camel_case(key) for key in LinkSettings.__annotations__)
    assert refused.value.errors == [{"property_path": "link.hub", "reason": f"unknown input; allowed here: {allowed}"}]
