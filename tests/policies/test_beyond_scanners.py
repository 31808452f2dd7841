"""Lattice's own rules no scanner has (issue 11, item 4), on small Pulumi programs under the recording engine:
GPU NIC fabrics on GKE complete to the pod, stateful types protected, no credential in plain text in any input."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest

from lattice.check.evaluate import evaluate
from lattice.components.catalog import gcp_machine_type
from lattice.engine.plan import run_program
from tests.policies.helpers import EVERYTHING_MANDATORY

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x\n-----END RSA PRIVATE KEY-----\n"
CERTIFICATE = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----\n"


def _findings(program, rule: str, rules, preview: bool = False) -> list[tuple[str, str]]:
    plan = run_program(program, stack="beyond", preview=preview).to_dict()
    result = evaluate(plan, EVERYTHING_MANDATORY, {rule: rules[rule]})
    assert result.errors == [] and result.not_checked == [], result.errors or result.not_checked
    return sorted((f.urn.rsplit("::", 1)[-1], f.message) for f in result.findings)


# --- gpu-nic-fabric-complete ------------------------------------------------------------------------------------


def _pool(name: str, machine: str, attachments: list[tuple[str, str]]) -> None:
    gcp.container.NodePool(
        name,
        cluster="projects/p/locations/us-central1/clusters/c",
        location="us-central1",
        node_config=gcp.container.NodePoolNodeConfigArgs(machine_type=machine),
        network_config=gcp.container.NodePoolNetworkConfigArgs(
            additional_node_network_configs=[
                gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(network=vpc, subnetwork=subnet)
                for vpc, subnet in attachments
            ]
        )
        if attachments
        else None,
    )


def _nic_objects(name: str, vpc: str, subnet: str, mode: str, network: bool = True) -> None:
    k8s.apiextensions.CustomResource(
        f"{name}-params",
        api_version="networking.gke.io/v1",
        kind="GKENetworkParamSet",
        metadata={"name": name},
        spec={"vpc": vpc, "vpcSubnet": subnet, "deviceMode": mode},
    )
    if network:
        k8s.apiextensions.CustomResource(
            name,
            api_version="networking.gke.io/v1",
            kind="Network",
            metadata={"name": name},
            spec={
                "type": "Device",
                "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": name},
            },
        )


def _a4_fabric(mode: str = "RDMA", gpu_nics: int = 8, network_for_last: bool = True):
    """An A4 pool as GcpGpuFabric wires it: the second gVNIC on its own VPC, eight RDMA NICs on one RoCE VPC."""

    def program():
        attachments = [("a4-gvnic1", "a4-gvnic1")] + [("a4-roce", f"a4-roce{i}") for i in range(gpu_nics)]
        _pool("a4", "a4-highgpu-8g", attachments)
        _nic_objects("gvnic1", "a4-gvnic1", "a4-gvnic1", "NetDevice")
        for i in range(gpu_nics):
            _nic_objects(f"rdma{i}", "a4-roce", f"a4-roce{i}", mode, network=network_for_last or i < gpu_nics - 1)

    return program


def test_an_rdma_fabric_as_lattice_wires_it_is_complete(rules):
    machine = gcp_machine_type("a4-highgpu-8g")
    assert (machine.gpu_nic_count, machine.gvnic_count) == (8, 2)
    assert _findings(_a4_fabric(), "gpu-nic-fabric-complete", rules) == []


@pytest.mark.parametrize(
    "program, message",
    [
        (
            _a4_fabric(gpu_nics=6),
            "7 of 9 additional node networks attached on a4-highgpu-8g (8 GPU NICs carrying 3,200 Gbps together, "
            "1 more gVNIC): the NICs left out stay dark",
        ),
        (
            _a4_fabric(mode="NetDevice"),
            "0 of 8 GPU NICs' param sets use deviceMode 'RDMA', which GPUDirect-RDMA on a4-highgpu-8g needs",
        ),
        (
            _a4_fabric(network_for_last=False),
            "GKENetworkParamSet rdma7 has no Network of type Device referring to it: pods cannot attach its NIC",
        ),
    ],
    ids=["nics-left-out", "wrong-device-mode", "param-set-without-network"],
)
def test_an_incomplete_rdma_fabric_is_named(program, message, rules):
    assert _findings(program, "gpu-nic-fabric-complete", rules) == [("a4", message)]


def test_nics_without_param_sets_and_repeated_attachments(rules):
    def program():
        nics = [(f"a3-nic{i}", f"a3-nic{i}") for i in range(4)]
        _pool("a3", "a3-highgpu-8g", nics)
        _nic_objects("nic0", "a3-nic0", "a3-nic0", "NetDevice")
        _nic_objects("nic1", "a3-nic1", "a3-nic1", "NetDevice")
        _pool("repeated", "a3-highgpu-8g", [nics[0]] * 4)

    assert _findings(program, "gpu-nic-fabric-complete", rules) == [
        (
            "a3",
            "no GKENetworkParamSet for a3-nic2/a3-nic2, a3-nic3/a3-nic3: pods cannot attach these NICs and NCCL falls "
            "back to the primary gVNIC",
        ),
        (
            "repeated",
            "1 of 4 additional node networks attached on a3-highgpu-8g (4 GPU NICs carrying 800 Gbps together): the "
            "NICs left out stay dark",
        ),
        ("repeated", "several additional node networks repeat one VPC and subnet; each NIC needs its own"),
    ]


def test_pools_without_gpu_nics_are_not_judged(rules):
    def program():
        _pool("system", "e2-standard-4", [])
        _pool("a2", "a2-highgpu-8g", [])  # A2 has no GPU NICs
        _pool("g2", "g2-standard-96", [])  # outside the catalog

    assert _findings(program, "gpu-nic-fabric-complete", rules) == []


def test_fabric_names_unknown_in_preview_are_not_judged(rules):
    def program():
        vpcs = [gcp.compute.Network(f"nic{i}", auto_create_subnetworks=False) for i in range(4)]
        _pool("a3", "a3-highgpu-8g", [(vpc.id, vpc.id) for vpc in vpcs])

    assert _findings(program, "gpu-nic-fabric-complete", rules, preview=True) == []


# --- protect-stateful-resources -----------------------------------------------------------------------------------


def test_every_stateful_type_lattice_creates_is_guarded(rules):
    """The rule guards every type the shipped stacks create that holds data (a test: a new stateful component must
    be added to the rule, not forgotten)."""
    guarded = set(rules["protect-stateful-resources"].resource_types)
    holds_data = {
        "aws:kms/key:Key",
        "aws:cloudwatch/logGroup:LogGroup",
        "aws:s3/bucket:Bucket",
        "aws:s3/bucketVersioning:BucketVersioning",
        "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration",
        "aws:s3/directoryBucket:DirectoryBucket",
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "gcp:kms/keyRing:KeyRing",
        "gcp:kms/cryptoKey:CryptoKey",
        "gcp:storage/bucket:Bucket",
        "gcp:logging/projectBucketConfig:ProjectBucketConfig",
        "gcp:lustre/instance:Instance",
        "gcp:filestore/instance:Instance",
        "kubernetes:core/v1:PersistentVolume",
    }
    assert holds_data <= guarded


def test_stateful_types_are_protected_and_volumes_keep_their_data(rules):
    def program():
        stateful = pulumi.ResourceOptions(protect=True, retain_on_delete=True)
        gcp.logging.ProjectBucketConfig(
            "audit", project="p", location="global", bucket_id="audit", retention_days=365, opts=stateful
        )
        gcp.logging.ProjectBucketConfig("audit-unprotected", project="p", location="global", bucket_id="audit2")

        def volume(name: str, policy: str | None) -> None:
            k8s.core.v1.PersistentVolume(
                name,
                metadata={"name": name},
                spec={
                    "capacity": {"storage": "10Gi"},
                    "accessModes": ["ReadWriteMany"],
                    "nfs": {"server": "10.0.0.2", "path": "/data"},
                    **({"persistentVolumeReclaimPolicy": policy} if policy else {}),
                },
            )

        volume("retained", "Retain")
        volume("default", None)  # a PV a program creates defaults to Retain
        volume("deleted", "Delete")
        volume("recycled", "Recycle")

    assert _findings(program, "protect-stateful-resources", rules) == [
        ("audit-unprotected", "this stateful resource is not protected; a replacing change would destroy its data"),
        (
            "audit-unprotected",
            "this stateful resource is not retained on delete; a destroy, or dropping it from the program, would "
            "delete its data",
        ),
        ("deleted", "reclaim policy 'Delete': releasing the claim erases the storage behind this volume; set Retain"),
        ("recycled", "reclaim policy 'Recycle': releasing the claim erases the storage behind this volume; set Retain"),
    ]


# --- no-plaintext-secrets -----------------------------------------------------------------------------------------


def test_credentials_in_any_input_are_found_and_secrets_are_not(rules):
    def program():
        k8s.core.v1.ConfigMap("plain-key", data={"tls.key": PEM})
        k8s.core.v1.ConfigMap("secret-key", data={"tls.key": pulumi.Output.secret(PEM)})
        k8s.core.v1.ConfigMap("certificate", data={"ca.crt": CERTIFICATE})
        # a Kubernetes Secret's data is always a secret in pulumi-kubernetes' state
        k8s.core.v1.Secret("k8s-secret", string_data={"tls.key": PEM})
        k8s.apps.v1.Deployment(
            "trainer",
            spec={
                "selector": {"matchLabels": {"app": "t"}},
                "template": {
                    "metadata": {"labels": {"app": "t"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "t",
                                "image": "trainer:1",
                                "env": [
                                    {"name": "HF_TOKEN", "value": "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"},
                                    {"name": "WANDB_API_KEY", "valueFrom": {"secretKeyRef": {"name": "w", "key": "k"}}},
                                ],
                            }
                        ]
                    },
                },
            },
        )
        k8s.core.v1.ConfigMap("db-url", data={"url": "postgresql://trainer:hunter2-plain@db.internal:5432/runs"})
        k8s.core.v1.ConfigMap("db-host", data={"url": "postgresql://db.internal:5432/runs"})
        # pulumi-aws keeps an SSM parameter's value secret whatever the program passes
        aws.ssm.Parameter("ssm-url", type="String", value="postgresql://trainer:hunter2-plain@db.internal:5432/runs")

    assert _findings(program, "no-plaintext-secrets", rules) == [
        ("db-url", "input data.url holds a password in a URL in plain text; pass it as a Pulumi secret"),
        ("plain-key", "input data.tls.key holds a private key in plain text; pass it as a Pulumi secret"),
        (
            "trainer",
            "input spec.template.spec.containers[0].env[0].value holds a Hugging Face token in plain text; pass it "
            "as a Pulumi secret",
        ),
    ]


def test_user_data_is_left_to_its_own_rule(rules):
    def program():
        aws.ec2.Instance(
            "node",
            ami="ami-0123456789abcdef0",
            instance_type="m7i.large",
            user_data="#!/bin/bash\nexport AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n",
            tags={"Name": "node"},
        )

    assert _findings(program, "no-plaintext-secrets", rules) == []
    assert _findings(program, "user-data-no-secrets", rules) == [
        ("node", "user data holds an AWS access key ID in plain text")
    ]


def test_values_unknown_in_preview_are_passed_over(rules):
    def program():
        password = aws.ssm.Parameter("generated", type="String", value="x")
        k8s.core.v1.ConfigMap("refers", data={"url": password.arn})

    assert _findings(program, "no-plaintext-secrets", rules, preview=True) == []
