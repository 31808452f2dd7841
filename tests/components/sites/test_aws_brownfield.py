"""Bring your own on AWS: an existing VPC, EKS cluster, KMS key and organisation trail are used, never created."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from lattice.engine.plan import EXISTING_EKS_VERSION
from tests.conftest import AWS_SITE, GRID_SITE, spec_with

VPC_ID = "vpc-0c4a5e6f7a8b9c0d1"
SUBNETS = {
    "us-east-1a": {"id": "subnet-0a1b2c3d4e5f60718", "cidr": "10.20.0.0/19"},
    "us-east-1b": {"id": "subnet-0b2c3d4e5f6071829", "cidr": "10.20.32.0/19"},
}
ROUTE_TABLES = ["rtb-0d1e2f3a4b5c6d7e8", "rtb-0e2f3a4b5c6d7e8f9"]
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
CLUSTER = "platform-eks"

# What an existing network means Lattice must not create (the issue's list, and what comes with it).
NETWORK_TYPES = {
    "aws:ec2/vpc:Vpc",
    "aws:ec2/subnet:Subnet",
    "aws:ec2/natGateway:NatGateway",
    "aws:ec2/routeTable:RouteTable",
    "aws:ec2/routeTableAssociation:RouteTableAssociation",
    "aws:ec2/internetGateway:InternetGateway",
    "aws:ec2/eip:Eip",
    "aws:ec2/flowLog:FlowLog",
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup",
}
TRAIL = "aws:cloudtrail/trail:Trail"


def brownfield_site(**changes: Any) -> dict[str, Any]:
    site = copy.deepcopy(AWS_SITE)
    site["network"] = {
        "cidr": "10.20.0.0/16",
        "availability_zones": ["us-east-1a", "us-east-1b"],
        "existing": {"vpc_id": VPC_ID, "subnets": copy.deepcopy(SUBNETS), "route_table_ids": list(ROUTE_TABLES)},
        "asn": 64600,
    }
    site["gpu_pools"] = [
        {"name": "train", "instance_type": "p5.48xlarge", "availability_zones": ["us-east-1b"], "max_nodes": 4},
        {
            "name": "infer",
            "instance_type": "g6e.12xlarge",
            "efa": False,
            "availability_zones": ["us-east-1a", "us-east-1b"],
            "max_nodes": 2,
        },
    ]
    site["storage"] = {
        "buckets": [{"name": "datasets", "purpose": "datasets"}],
        "lustre": [{"name": "shared", "capacity_gib": 2400, "throughput_mbps_per_tib": 250, "zone": "us-east-1b"}],
    }
    site["audit"] = {"cloudtrail": "organization"}
    for key, value in changes.items():
        site[key] = {**site.get(key, {}), **value} if isinstance(value, dict) else value
    return site


GRID = {**GRID_SITE, "network": {"cidr": "10.50.0.0/16", "asn": 64900, "vpn_gateway": {"public_ips": ["192.0.2.10"]}}}
LINKS = [{"sites": ["aws-use1", "grid-hpc"], "bandwidth_gbps": 1}]


def walk(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every (key path, value) of a resource's inputs, nested ones included."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from walk(inner, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from walk(inner, f"{path}[{index}]")
    else:
        yield path, value


def leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1].split("[", 1)[0]


@pytest.fixture(scope="module")
def brownfield_plan(tmp_path_factory):
    from lattice.engine.plan import run_plan
    from tests.conftest import write_stack

    spec = spec_with(brownfield_site(), GRID, links=LINKS)
    return run_plan(write_stack(tmp_path_factory.mktemp("brownfield"), spec))


def test_an_existing_network_creates_no_vpc_subnet_nat_route_table_flow_log_or_trail(brownfield_plan):
    created = {r["type"] for r in brownfield_plan.resources}
    assert created & (NETWORK_TYPES | {TRAIL}) == set()
    # Nor the bucket a trail of Lattice's own would deliver to.
    assert not [r for r in brownfield_plan.by_type("aws:s3/bucket:Bucket") if "audit-trail" in r["name"]]


def test_every_resource_needing_a_vpc_or_subnet_uses_the_given_ids(brownfield_plan):
    subnet_ids = {subnet["id"] for subnet in SUBNETS.values()}
    users: dict[str, set[str]] = {}
    for resource in brownfield_plan.resources:
        for path, value in walk(resource.get("inputs", {})):
            if leaf(path) == "vpcId":
                assert value == VPC_ID, (resource["name"], path, value)
                users.setdefault(resource["type"], set()).add(path)
            elif leaf(path) in ("subnetId", "subnetIds"):
                assert value in subnet_ids, (resource["name"], path, value)
                users.setdefault(resource["type"], set()).add(path)
    # The walk reached what the issue lists: EKS, pools, FSx, the transit attachment, security groups.
    assert {
        "aws:eks/cluster:Cluster",
        "aws:eks/nodeGroup:NodeGroup",
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "aws:ec2transitgateway/vpcAttachment:VpcAttachment",
        "aws:ec2/securityGroup:SecurityGroup",
    } <= set(users)
    cluster = brownfield_plan.one("aws:eks/cluster:Cluster", "aws-use1-eks-cluster")
    assert cluster["inputs"]["vpcConfig"]["subnetIds"] == [SUBNETS[z]["id"] for z in ("us-east-1a", "us-east-1b")]
    # The EFA pool sits in its one zone's subnet; the other pool spreads over both.
    train = brownfield_plan.one("aws:eks/nodeGroup:NodeGroup", "aws-use1-train-nodes")
    assert train["inputs"]["subnetIds"] == [SUBNETS["us-east-1b"]["id"]]
    infer = brownfield_plan.one("aws:eks/nodeGroup:NodeGroup", "aws-use1-infer-nodes")
    assert infer["inputs"]["subnetIds"] == [SUBNETS["us-east-1a"]["id"], SUBNETS["us-east-1b"]["id"]]
    lustre = brownfield_plan.one("aws:fsx/lustreFileSystem:LustreFileSystem", "aws-use1-storage-shared-fs")
    assert lustre["inputs"]["subnetIds"] == SUBNETS["us-east-1b"]["id"]


def test_links_route_through_the_given_route_tables(brownfield_plan):
    gateway = brownfield_plan.one("aws:ec2transitgateway/transitGateway:TransitGateway", "aws-use1-net-tgw")
    routes = {r["name"]: r["inputs"] for r in brownfield_plan.by_type("aws:ec2/route:Route")}
    assert routes == {
        f"aws-use1-net-{table}-10-50-0-0-16": {
            "routeTableId": table,
            "destinationCidrBlock": "10.50.0.0/16",
            "transitGatewayId": brownfield_plan.state(gateway)["id"],
        }
        for table in ROUTE_TABLES
    }
    attachment = brownfield_plan.one("aws:ec2transitgateway/vpcAttachment:VpcAttachment", "aws-use1-net-tgw-vpc")
    for route in brownfield_plan.by_type("aws:ec2/route:Route"):
        assert attachment["urn"] in route["dependencies"]


def test_without_nat_the_endpoints_go_into_the_given_subnets_and_route_tables(plan_spec):
    site = brownfield_site(network={"nat": False})
    site["gpu_pools"] = []  # GPU add-ons need egress (private_nodes_can_reach_their_images)
    plan = plan_spec(spec_with(site))
    s3 = plan.one("aws:ec2/vpcEndpoint:VpcEndpoint", "aws-use1-net-s3")
    assert s3["inputs"]["routeTableIds"] == ROUTE_TABLES
    assert s3["inputs"]["vpcId"] == VPC_ID
    ecr = plan.one("aws:ec2/vpcEndpoint:VpcEndpoint", "aws-use1-net-ecr-api")
    assert ecr["inputs"]["subnetIds"] == [SUBNETS["us-east-1a"]["id"], SUBNETS["us-east-1b"]["id"]]
    assert plan.one("aws:ec2/securityGroup:SecurityGroup", "aws-use1-net-endpoints")["inputs"]["vpcId"] == VPC_ID


def test_an_existing_cluster_gets_node_groups_access_add_ons_and_teams_but_no_control_plane(plan_spec):
    site = brownfield_site(
        kubernetes={"existing_cluster": CLUSTER, "admin_role_arns": ["arn:aws:iam::123456789012:role/rc-admin"]}
    )
    team = {"name": "vision", "gpu_quota": 8, "sites": ["aws-use1"]}
    plan = plan_spec(spec_with(site, teams=[team]))
    assert plan.by_type("aws:eks/cluster:Cluster") == []
    assert not [r for r in plan.by_type("aws:cloudwatch/logGroup:LogGroup") if "/aws/eks/" in r["inputs"]["name"]]
    addons = sorted(r["inputs"]["addonName"] for r in plan.by_type("aws:eks/addon:Addon"))
    assert addons == ["eks-node-monitoring-agent", "eks-pod-identity-agent"]
    groups = {r["name"]: r["inputs"] for r in plan.by_type("aws:eks/nodeGroup:NodeGroup")}
    assert set(groups) == {"aws-use1-eks-system", "aws-use1-train-nodes", "aws-use1-infer-nodes"}
    for inputs in groups.values():
        assert inputs["clusterName"] == CLUSTER
        # The spec says 1.33; the nodes follow what the cluster runs (aws.eks.get_cluster).
        assert inputs["version"] == EXISTING_EKS_VERSION != site["kubernetes"].get("version", "1.33")
    entry = plan.one("aws:eks/accessEntry:AccessEntry", "aws-use1-eks-admin-rc-admin")
    assert entry["inputs"]["clusterName"] == CLUSTER
    rule = plan.one("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "aws-use1-eks-runner-10-20-0-0-16")
    assert rule["inputs"]["securityGroupId"].startswith("sg-")
    assert plan.by_type("kubernetes:kueue.x-k8s.io/v1beta1:ClusterQueue") or plan.by_type(
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
    )
    assert plan.one("kubernetes:core/v1:Namespace", "aws-use1-vision-namespace")


ADMIN = "arn:aws:iam::123456789012:role/rc-admin"
TEAM_ROLE = "arn:aws:iam::123456789012:role/vision-lab"
ADDON = "aws:eks/addon:Addon"
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"


def adopted_cluster_spec(present: dict[str, Any] | None, autoscaled: bool = True) -> dict[str, Any]:
    """An existing cluster with an admin role, a team with its own role and (by default) an autoscaled pool."""
    kubernetes = {"existing_cluster": CLUSTER, "admin_role_arns": [ADMIN]}
    site = brownfield_site(kubernetes={**kubernetes, **({"present": present} if present is not None else {})})
    site["gpu_pools"][1]["autoscale"] = autoscaled
    team = {"name": "vision", "gpu_quota": 8, "sites": ["aws-use1"], "aws_role_arns": [TEAM_ROLE]}
    return spec_with(site, teams=[team])


def test_what_an_adopted_cluster_already_has_is_not_created_so_up_cannot_collide_and_destroy_cannot_delete_it(
    plan_spec,
):
    present = {"addons": ["eks-pod-identity-agent", "eks-node-monitoring-agent"], "access_entries": [ADMIN, TEAM_ROLE]}
    plan = plan_spec(adopted_cluster_spec(present))
    # Nothing of the owner's in the plan, so nothing of it in Pulumi's state for a destroy to delete.
    assert plan.by_type(ADDON) == []
    assert plan.by_type(ENTRY) == [] and plan.by_type(ASSOCIATION) == []
    # What uses them is still planned: the autoscaler's and the team's Pod Identity associations ...
    associations = {r["name"] for r in plan.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")}
    assert {"aws-use1-autoscaler-identity", "aws-use1-team-vision-workload"} <= associations
    # ... and the team's RoleBinding names the group the cluster's own entry must carry (preflight checks it does).
    binding = plan.one("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "aws-use1-vision-role-binding")
    group = {"kind": "Group", "name": "lattice:team:vision", "apiGroup": "rbac.authorization.k8s.io"}
    assert group in binding["inputs"]["subjects"]


def test_an_old_stack_file_with_an_existing_cluster_plans_as_before(plan_spec):
    """No kubernetes.present: every entry and add-on is Lattice's, created as on a cluster of its own."""
    plan = plan_spec(adopted_cluster_spec(None))
    assert sorted(r["inputs"]["addonName"] for r in plan.by_type(ADDON)) == [
        "eks-node-monitoring-agent",
        "eks-pod-identity-agent",
    ]
    assert {r["inputs"]["principalArn"] for r in plan.by_type(ENTRY)} == {ADMIN, TEAM_ROLE}
    assert [r["inputs"]["principalArn"] for r in plan.by_type(ASSOCIATION)] == [ADMIN]


def test_only_what_is_listed_present_is_left_out(plan_spec):
    plan = plan_spec(adopted_cluster_spec({"addons": ["eks-pod-identity-agent"], "access_entries": [TEAM_ROLE]}))
    assert [r["inputs"]["addonName"] for r in plan.by_type(ADDON)] == ["eks-node-monitoring-agent"]
    assert [r["inputs"]["principalArn"] for r in plan.by_type(ENTRY)] == [ADMIN]
    # The Kubernetes provider waits for the admin entry Lattice creates, as on a cluster of its own.
    provider = plan.one("pulumi:providers:kubernetes", "aws-use1-k8s")
    assert plan.one(ENTRY, "aws-use1-eks-admin-rc-admin")["urn"] in provider["dependencies"]


@pytest.mark.parametrize(
    ("spec", "addons"),
    [
        (adopted_cluster_spec(None), ["eks-pod-identity-agent", "eks-node-monitoring-agent"]),
        # the team's jobs alone need Pod Identity
        (adopted_cluster_spec(None, autoscaled=False), ["eks-pod-identity-agent", "eks-node-monitoring-agent"]),
        # the managed metrics store's writers take their role through Pod Identity too; no pool, no node monitoring
        (
            spec_with(
                brownfield_site(kubernetes={"existing_cluster": CLUSTER}, gpu_pools=[]),
                observability={"central": {"managed": "amp", "site": "aws-use1"}},
            ),
            ["eks-pod-identity-agent"],
        ),
        (spec_with(brownfield_site(kubernetes={"existing_cluster": CLUSTER}, gpu_pools=[])), []),
    ],
    ids=["autoscaled-and-team", "team", "managed-store", "nothing"],
)
def test_the_addons_and_entries_lattice_says_it_needs_are_the_ones_it_plans(plan_spec, spec, addons):
    """What preflight reads and the validators accept under kubernetes.present is what the program creates."""
    from lattice.components.compute.eks_adoption import lattice_access_entries, lattice_addons
    from lattice.components.spec import StackSpec

    plan = plan_spec(spec)
    model = StackSpec.model_validate(spec)
    site = model.sites[0]
    assert lattice_addons(model, site) == addons
    assert sorted(addons) == sorted(r["inputs"]["addonName"] for r in plan.by_type(ADDON))
    assert set(lattice_access_entries(model, site)) == {r["inputs"]["principalArn"] for r in plan.by_type(ENTRY)}


def test_an_existing_key_is_used_everywhere_and_no_key_or_policy_is_created(plan_spec):
    plan = plan_spec(spec_with(brownfield_site(encryption={"key_arn": KEY_ARN})))
    assert plan.by_type("aws:kms/key:Key") == [] and plan.by_type("aws:kms/alias:Alias") == []
    seen = set()
    for resource in plan.resources:
        for path, value in walk(resource.get("inputs", {})):
            if isinstance(value, str) and value.startswith("arn:aws:kms:"):
                assert value == KEY_ARN, (resource["name"], path)
                seen.add(resource["type"])
    assert {
        "aws:eks/cluster:Cluster",
        "aws:ec2/launchTemplate:LaunchTemplate",
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "aws:cloudwatch/logGroup:LogGroup",
    } <= seen


def test_a_subnet_outside_the_cidr_and_an_efa_zone_without_a_subnet_exit_2_with_file_key_and_fix(tmp_path, capsys):
    from lattice.cli import main
    from tests.conftest import write_stack

    site = brownfield_site()
    site["network"]["availability_zones"].append("us-east-1c")
    site["network"]["existing"]["subnets"]["us-east-1b"]["cidr"] = "10.21.0.0/19"
    site["gpu_pools"][0]["availability_zones"] = ["us-east-1c"]
    path = write_stack(tmp_path, spec_with(site, GRID, links=LINKS))
    assert main(["plan", "--stack-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{path}" in err or path.name in err
    assert "sites[0].network.existing.subnets.us-east-1b.cidr" in err
    assert "set network.cidr to the VPC range that holds every subnet" in err
    assert "sites[0].gpu_pools[0].availability_zones" in err
    assert "'train' is an EFA pool, which sits in exactly one zone's subnet" in err
    assert "add a private subnet of vpc-0c4a5e6f7a8b9c0d1 in us-east-1c there" in err


def _spec_issues(spec: dict[str, Any]) -> list[tuple[str, str]]:
    from lattice.components.spec import SpecError, parse_spec

    with pytest.raises(SpecError) as caught:
        parse_spec(spec, "x")
    return [(issue.path, issue.message) for issue in caught.value.issues]


@pytest.mark.parametrize(
    ("present", "path", "message"),
    [
        (
            {"addons": ["eks-pod-identity-agent", "eks-pod-identity-agent"]},
            "sites[0].kubernetes.present.addons[1]",
            "'eks-pod-identity-agent' is listed twice; list it once",
        ),
        (
            {"access_entries": ["arn:aws:iam::123456789012:role/someone-else"]},
            "sites[0].kubernetes.present.access_entries[0]",
            "Lattice creates no access entry for arn:aws:iam::123456789012:role/someone-else on this site (it is in "
            "neither kubernetes.admin_role_arns nor the aws_role_arns of a team on the site); remove it",
        ),
    ],
    ids=["twice", "not-lattices-entry"],
)
def test_kubernetes_present_names_only_what_lattice_would_create_there(present, path, message):
    assert _spec_issues(adopted_cluster_spec(present)) == [(path, message)]


@pytest.mark.parametrize(
    "present",
    [{"access_entries": [TEAM_ROLE]}, {"addons": ["eks-pod-identity-agent"]}],
    ids=["team-role-entry", "pod-identity-agent-for-the-team"],
)
def test_what_is_present_for_a_team_left_out_for_its_shape_is_not_called_lattices_nothing(present):
    """The team whose role (and whose jobs' Pod Identity) it is has a typo of its own, which leaves it out of the
    cross-field checks: 'Lattice creates no access entry for ... remove it' / 'Lattice installs no
    eks-pod-identity-agent ... remove it' were false, and gone once the typo was fixed."""
    spec = adopted_cluster_spec(present, autoscaled=False)
    spec["sites"][0]["gpu_pools"][0]["autoscale"] = False  # the team is then the agent's only user
    spec["teams"][0]["pod_securty"] = "restricted"
    issues = _spec_issues(spec)
    assert [path for path, _ in issues] == ["teams[0].pod_securty"]
    del spec["teams"][0]["pod_securty"]
    from lattice.components.spec import parse_spec

    parse_spec(spec, "x")  # valid once the one mistake is fixed


def test_an_addon_lattice_does_not_install_cannot_be_present():
    spec = spec_with(
        brownfield_site(
            kubernetes={"existing_cluster": CLUSTER, "present": {"addons": ["eks-node-monitoring-agent"]}}, gpu_pools=[]
        )
    )
    assert _spec_issues(spec) == [
        (
            "sites[0].kubernetes.present.addons[0]",
            "Lattice installs no eks-node-monitoring-agent on this site (it needs none), so there is nothing to use "
            "instead; remove it",
        )
    ]


def test_present_needs_an_existing_cluster():
    site = brownfield_site(kubernetes={"admin_role_arns": [ADMIN], "present": {"access_entries": [ADMIN]}})
    assert _spec_issues(spec_with(site)) == [
        (
            "sites[0].kubernetes.present",
            "present lists what an existing cluster already has; Lattice creates this site's cluster and all of it: "
            "remove present, or set existing_cluster",
        )
    ]
