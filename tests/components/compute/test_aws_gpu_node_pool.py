"""AwsGpuNodePool: the full EFA fabric for every EFA type in the catalog, and the pool around it."""

from __future__ import annotations

import base64

import pytest

from lattice.components.catalog import aws_instance_type, aws_instance_types
from lattice.engine.plan import run_program
from tests.conftest import AWS_SITE, spec_with
from tests.kueue import site_capacity

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def _pool_program(instance_type: str):
    import pulumi

    from lattice.components.compute.aws_gpu_node_pool import AwsGpuNodePool, AwsGpuNodePoolArgs
    from lattice.components.spec.model import AwsGpuPoolSpec
    from lattice.components.tagging import TagContext

    tags = TagContext(stack="t", environment="dev", owner="o", cost_centre="c", data_classification="internal",
                      site="aws-use1")  # fmt: skip

    def program():
        AwsGpuNodePool(
            "pool",
            AwsGpuNodePoolArgs(
                pool=AwsGpuPoolSpec(name="train", instance_type=instance_type, max_nodes=2),
                instance=aws_instance_type(instance_type),
                cluster_name="c",
                kubernetes_version="1.33",
                cluster_security_group_id="sg-cluster",
                vpc_id="vpc-1",
                subnet_ids=["subnet-a"],
                kms_key_arn="arn:aws:kms:us-east-1:123456789012:key/site",
                tags=tags,
            ),
            opts=pulumi.ResourceOptions(),
        )

    return program


EFA_TYPES = [t.name for t in aws_instance_types() if t.max_efa_interfaces > 0]


def test_the_catalog_has_efa_types():
    assert len(EFA_TYPES) >= 30 and "p5.48xlarge" in EFA_TYPES


@pytest.mark.parametrize("instance_type", EFA_TYPES)
def test_launch_template_wires_every_efa_card(instance_type):
    spec = aws_instance_type(instance_type)
    plan = run_program(_pool_program(instance_type), stack="t")
    interfaces = plan.one(TEMPLATE, "pool-template")["inputs"]["networkInterfaces"]
    efa = [i for i in interfaces if i["interfaceType"] in ("efa", "efa-only")]
    efa_cards = {card.index: card for card in spec.network_cards if card.supports_efa}
    assert len(efa) == min(spec.max_efa_interfaces, len(efa_cards))
    assert len(efa) == len(spec.efa_cards)
    cards = [i["networkCardIndex"] for i in efa]
    assert len(set(cards)) == len(cards), "one EFA interface per card"
    assert set(cards) <= set(efa_cards), "EFA only on EFA-capable cards"
    primary = [i for i in interfaces if i["deviceIndex"] == 0]
    assert len(primary) == 1 and primary[0]["networkCardIndex"] == 0
    assert primary[0]["interfaceType"] == ("efa" if 0 in cards else "interface")
    assert all(i["deviceIndex"] == 1 and i["interfaceType"] == "efa-only" for i in interfaces if i is not primary[0])
    wired_bandwidth = sum(efa_cards[c].baseline_bandwidth_gbps for c in cards)
    assert wired_bandwidth == spec.efa_bandwidth_gbps
    assert all(set(i["securityGroups"]) == {plan.state(plan.one("aws:ec2/securityGroup:SecurityGroup",
                                                                 "pool-fabric"))["id"], "sg-cluster"}
               for i in interfaces)  # fmt: skip


def test_p5_gets_32_interfaces_and_3200_gbps():
    plan = run_program(_pool_program("p5.48xlarge"), stack="t")
    interfaces = plan.one(TEMPLATE, "pool-template")["inputs"]["networkInterfaces"]
    assert len(interfaces) == 32
    assert aws_instance_type("p5.48xlarge").efa_bandwidth_gbps == 3200


def test_fabric_security_group_has_both_self_rules():
    plan = run_program(_pool_program("p5.48xlarge"), stack="t")
    group_id = plan.state(plan.one("aws:ec2/securityGroup:SecurityGroup", "pool-fabric"))["id"]
    ingress = plan.one("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "pool-fabric-in")["inputs"]
    egress = plan.one("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule", "pool-fabric-out")["inputs"]
    for rule in (ingress, egress):
        assert rule["securityGroupId"] == group_id
        assert rule["referencedSecurityGroupId"] == group_id
        assert rule["ipProtocol"] == "-1"


def test_node_group_is_tainted_labelled_and_uses_the_template():
    plan = run_program(_pool_program("p5.48xlarge"), stack="t")
    template = plan.one(TEMPLATE, "pool-template")
    group = plan.one(NODE_GROUP, "pool-nodes")["inputs"]
    assert group["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert group["amiType"] == "AL2023_x86_64_NVIDIA"
    assert group["capacityType"] == "ON_DEMAND"
    assert group["scalingConfig"] == {"minSize": 0, "desiredSize": 0, "maxSize": 2}
    assert group["launchTemplate"] == {"id": plan.state(template)["id"], "version": "1"}
    assert group["labels"]["lattice.dev/pool"] == "train"
    assert group["subnetIds"] == ["subnet-a"]
    assert "instanceTypes" not in group  # the template names the type


def test_trainium_uses_the_neuron_ami_and_taint():
    plan = run_program(_pool_program("trn1.32xlarge"), stack="t")
    group = plan.one(NODE_GROUP, "pool-nodes")["inputs"]
    assert group["amiType"] == "AL2023_x86_64_NEURON"
    assert group["taints"][0]["key"] == "aws.amazon.com/neuron"


def test_root_volume_is_encrypted_with_the_site_key_and_imdsv2_is_required():
    template = run_program(_pool_program("p5.48xlarge"), stack="t").one(TEMPLATE, "pool-template")["inputs"]
    assert template["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": 200,
                "volumeType": "gp3",
                "encrypted": "true",
                "kmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/site",
                "deleteOnTermination": "true",
            },
        }
    ]
    assert template["metadataOptions"]["httpTokens"] == "required"
    assert template["placement"]["groupName"]


def test_user_data_raids_nvme_at_the_scratch_path_and_sets_efa_environment():
    template = run_program(_pool_program("p5.48xlarge"), stack="t").one(TEMPLATE, "pool-template")["inputs"]
    script = base64.b64decode(template["userData"]).decode()
    assert script.startswith("MIME-Version: 1.0\nContent-Type: multipart/mixed")
    assert "mdadm --create /dev/md/scratch --level=0" in script
    assert 'mount -o noatime "$device" /scratch' in script
    assert "FI_PROVIDER=efa" in script


def test_site_pools_in_the_dev_stack(dev_plan):
    group = dev_plan.one(NODE_GROUP, "aws-use1-train-p5-nodes")["inputs"]
    subnet = dev_plan.one("aws:ec2/subnet:Subnet", "aws-use1-net-private-us-east-1a")
    cluster = dev_plan.one("aws:eks/cluster:Cluster", "aws-use1-eks-cluster")
    assert group["subnetIds"] == [dev_plan.state(subnet)["id"]]
    assert group["clusterName"] == "dev-aws-use1"
    template = dev_plan.one(TEMPLATE, "aws-use1-train-p5-template")["inputs"]
    cluster_sg = dev_plan.state(cluster)["vpcConfig"]["clusterSecurityGroupId"]
    assert cluster_sg in template["networkInterfaces"][0]["securityGroups"]
    key = dev_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    assert template["blockDeviceMappings"][0]["ebs"]["kmsKeyId"] == dev_plan.state(key)["arn"]


def test_spot_pool_without_efa_has_no_fabric(dev_plan):
    group = dev_plan.one(NODE_GROUP, "aws-use1-infer-g5-nodes")["inputs"]
    assert group["capacityType"] == "SPOT"
    assert len(group["subnetIds"]) == 2
    template = dev_plan.one(TEMPLATE, "aws-use1-infer-g5-template")["inputs"]
    assert "networkInterfaces" not in template and "placement" not in template
    assert len(template["vpcSecurityGroupIds"]) == 1
    fabrics = [
        r["name"] for r in dev_plan.by_type("aws:ec2/securityGroup:SecurityGroup") if r["name"].endswith("-fabric")
    ]
    assert fabrics == ["aws-use1-train-p5-fabric"]


BLOCK = {
    "type": "capacity-block",
    "reservation_id": "cr-0123456789abcdef0",
    "starts_at": "2026-12-01T11:30:00Z",
    "ends_at": "2026-12-03T11:30:00+00:00",
}


def _block_site(**capacity):
    pool = {"name": "block", "instance_type": "p5.48xlarge", "max_nodes": 2, "capacity": {**BLOCK, **capacity}}
    return {**AWS_SITE, "gpu_pools": [pool]}


def test_capacity_block_pool(plan_spec):
    plan = plan_spec(spec_with(_block_site()))
    template = plan.one(TEMPLATE, "aws-use1-block-template")["inputs"]
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}
    }
    assert "placement" not in template
    assert plan.by_type("aws:ec2/placementGroup:PlacementGroup") == []
    assert plan.one(NODE_GROUP, "aws-use1-block-nodes")["inputs"]["capacityType"] == "CAPACITY_BLOCK"


def test_a_paid_capacity_block_does_not_sit_at_zero_nodes(plan_spec):
    """Up to the block's size when it starts, to zero 45 minutes before it ends (AWS terminates at 30)."""
    plan = plan_spec(spec_with(_block_site()))
    group = plan.one(NODE_GROUP, "aws-use1-block-nodes")
    asg = plan.state(group)["resources"][0]["autoscalingGroups"][0]["name"]
    schedules = {s["name"]: s["inputs"] for s in plan.by_type("aws:autoscaling/schedule:Schedule")}
    assert schedules == {
        "aws-use1-block-block-start": {
            "autoscalingGroupName": asg,
            "scheduledActionName": "lattice-block-block-start",
            "startTime": "2026-12-01T11:30:00Z",
            "minSize": 2,
            "maxSize": 2,
            "desiredCapacity": 2,
        },
        "aws-use1-block-block-end": {
            "autoscalingGroupName": asg,
            "scheduledActionName": "lattice-block-block-end",
            "startTime": "2026-12-03T10:45:00Z",
            "minSize": 0,
            "maxSize": 0,
            "desiredCapacity": 0,
        },
    }
    # the autoscaler leaves the block alone: its group carries no discovery tag
    assert plan.by_type("aws:autoscaling/tag:Tag") == []


def test_a_tag_change_does_not_roll_running_capacity_block_nodes(plan_spec):
    held = plan_spec(spec_with(_block_site()))
    group = held.one(NODE_GROUP, "aws-use1-block-nodes")
    assert held.option(group, "ignoreChanges") == ["launchTemplate.version", "scalingConfig.desiredSize", "version"]
    rolled = plan_spec(spec_with(_block_site(roll_nodes=True)))
    assert rolled.option(rolled.one(NODE_GROUP, "aws-use1-block-nodes"), "ignoreChanges") == [
        "scalingConfig.desiredSize"
    ]


def test_autoscaled_pools_can_scale_up_from_zero(dev_plan):
    """The autoscaler finds the group by its tag and learns from the node group what an absent node offers."""
    group = dev_plan.one(NODE_GROUP, "aws-use1-train-p5-nodes")
    assert group["inputs"]["tags"]["k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa"] == "32"
    tag = dev_plan.one("aws:autoscaling/tag:Tag", "aws-use1-train-p5-autoscaled")["inputs"]
    assert tag == {
        "autoscalingGroupName": dev_plan.state(group)["resources"][0]["autoscalingGroups"][0]["name"],
        "tag": {"key": "lattice:autoscaled", "value": "true", "propagateAtLaunch": False},
    }
    assert dev_plan.option(group, "ignoreChanges") == ["scalingConfig.desiredSize"]


def test_neuron_pools_tell_the_autoscaler_their_devices_and_cores(plan_spec):
    site = {**AWS_SITE, "gpu_pools": [{"name": "trn", "instance_type": "trn1.32xlarge", "max_nodes": 2}]}
    tags = plan_spec(spec_with(site)).one(NODE_GROUP, "aws-use1-trn-nodes")["inputs"]["tags"]
    prefix = "k8s.io/cluster-autoscaler/node-template/resources/"
    assert {k.removeprefix(prefix): v for k, v in tags.items() if k.startswith(prefix)} == {
        "vpc.amazonaws.com/efa": "8",
        "aws.amazon.com/neuron": "16",
        "aws.amazon.com/neurondevice": "16",
        "aws.amazon.com/neuroncore": "32",
    }


def test_accelerator_label_is_a_valid_kubernetes_label():
    import re

    for instance in aws_instance_types():
        plan = run_program(_pool_program(instance.name), stack="t")
        value = plan.one(NODE_GROUP, "pool-nodes")["inputs"]["labels"]["lattice.dev/accelerator"]
        assert re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?", value), value


@pytest.mark.parametrize(
    ("moment", "actions", "gpus"),
    [
        ("2026-11-30T00:00:00Z", ["aws-use1-block-block-end", "aws-use1-block-block-start"], 16),  # before
        ("2026-12-02T00:00:00Z", ["aws-use1-block-block-end"], 16),  # during: the start has run
        ("2026-12-03T11:00:00Z", [], 0),  # after its scale-in: nothing runs any more
    ],
)
def test_a_past_scheduled_action_never_fails_a_later_up(plan_spec, moment, actions, gpus):
    """AWS rejects a start time in the past and deletes one-time actions once they run."""
    from datetime import datetime

    from lattice.components import clock

    with clock.frozen_at(datetime.fromisoformat(moment)):
        plan = plan_spec(spec_with(_block_site()))
    assert sorted(s["name"] for s in plan.by_type("aws:autoscaling/schedule:Schedule")) == actions
    assert site_capacity(plan, "aws-use1")["block"]["nvidia.com/gpu"] == gpus


@pytest.mark.parametrize("instance_type", ["g6.xlarge", "g5.2xlarge", "g4dn.xlarge", "inf2.xlarge"])
def test_a_type_without_efa_plans_without_efa_or_a_placement_group(instance_type, plan_spec):
    pool = {"name": "small", "instance_type": instance_type, "max_nodes": 2}
    plan = plan_spec(spec_with({**AWS_SITE, "gpu_pools": [pool]}))
    template = plan.one(TEMPLATE, "aws-use1-small-template")["inputs"]
    assert "networkInterfaces" not in template and "placement" not in template
    assert template["instanceType"] == instance_type
    assert plan.by_type("aws:ec2/placementGroup:PlacementGroup") == []
    assert [g for g in plan.by_type("aws:ec2/securityGroup:SecurityGroup") if g["name"].endswith("-fabric")] == []
    node_group = plan.one(NODE_GROUP, "aws-use1-small-nodes")["inputs"]
    assert node_group["labels"]["lattice.dev/efa"] == "false"
    assert plan.outputs["sites"]["aws-use1"]["gpu_pools"]["small"]["efa_bandwidth_gbps"] == 0


def test_a_type_without_efa_gets_a_placement_group_when_asked(plan_spec):
    pool = {"name": "small", "instance_type": "g6.12xlarge", "efa": False, "placement_group": True, "max_nodes": 2}
    plan = plan_spec(spec_with({**AWS_SITE, "gpu_pools": [pool]}))
    template = plan.one(TEMPLATE, "aws-use1-small-template")["inputs"]
    assert "networkInterfaces" not in template and template["placement"]["groupName"]
    assert len(plan.by_type("aws:ec2/placementGroup:PlacementGroup")) == 1


def test_graviton_gpu_types_take_the_arm64_nvidia_ami(plan_spec):
    pool = {"name": "arm", "instance_type": "g5g.xlarge", "max_nodes": 1}
    plan = plan_spec(spec_with({**AWS_SITE, "gpu_pools": [pool]}))
    assert plan.one(NODE_GROUP, "aws-use1-arm-nodes")["inputs"]["amiType"] == "AL2023_ARM_64_NVIDIA"
