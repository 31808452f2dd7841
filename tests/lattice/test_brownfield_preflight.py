"""`lattice preflight` proves a brownfield AWS site usable, on moto: the VPC, subnets, egress, free addresses, the
existing cluster, the key's policy and the organisation trail.

moto 5 stores no ``accessConfig`` for an EKS cluster (every cluster then reads as CONFIG_MAP, as clusters made
before access entries do): the passing cluster case sets it on moto's answer with botocore's ``after-call`` hook.
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.validate import validate_parameters
from moto import mock_aws

from lattice.components.spec import StackSpec
from lattice.preflight.aws_brownfield import (
    missing_statements,
    node_addresses,
    required_statements,
    run_brownfield_checks,
)
from tests.conftest import AWS_SITE, GRID_SITE, spec_with

REGION = "us-east-1"
ACCOUNT = "123456789012"


@pytest.fixture
def aws(offline_aws_credentials):
    with mock_aws():
        yield boto3.Session(region_name=REGION)


def vpc_with(session: boto3.Session, *, free: dict[str, int] | None = None, nat: bool = True) -> dict[str, Any]:
    """A VPC with a /24 private subnet in us-east-1a and 1b (251 free each), routed to a NAT gateway when ``nat``;
    ``free`` takes a zone's free addresses down to the number given, with network interfaces."""
    ec2 = session.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]
    subnets = {}
    for index, zone in enumerate(("us-east-1a", "us-east-1b")):
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.20.{index}.0/24", AvailabilityZone=zone)["Subnet"]
        subnets[zone] = {"id": subnet["SubnetId"], "cidr": subnet["CidrBlock"]}
        for _ in range(subnet["AvailableIpAddressCount"] - (free or {}).get(zone, subnet["AvailableIpAddressCount"])):
            ec2.create_network_interface(SubnetId=subnet["SubnetId"])
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    if nat:
        public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.20.200.0/24", AvailabilityZone="us-east-1a")["Subnet"]
        allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
        gateway = ec2.create_nat_gateway(SubnetId=public["SubnetId"], AllocationId=allocation)["NatGateway"]
        ec2.create_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=gateway["NatGatewayId"])
    for subnet in subnets.values():
        ec2.associate_route_table(RouteTableId=table, SubnetId=subnet["id"])
    return {"vpc_id": vpc, "subnets": subnets, "route_table_ids": [table]}


def site_with(existing: dict[str, Any], *pools: dict[str, Any], **changes: Any) -> StackSpec:
    site = copy.deepcopy(AWS_SITE)
    site["network"] = {**site["network"], "existing": existing}
    site["gpu_pools"] = list(pools)
    for key, value in changes.items():
        site[key] = {**site.get(key, {}), **value}
    return StackSpec.model_validate(spec_with(site))


def rows(results, check: str) -> dict[str, tuple[str, str]]:
    return {r.pool: (r.status, r.detail) for r in results if r.check == check}


def test_a_subnet_with_16_free_addresses_cannot_hold_a_pool_of_32_nodes(aws):
    existing = vpc_with(aws, free={"us-east-1a": 16})
    pool = {"name": "train", "instance_type": "p5.48xlarge", "availability_zones": ["us-east-1a"], "max_nodes": 32}
    results = run_brownfield_checks(site_with(existing, pool), "test", aws)
    status, detail = rows(results, "addresses")["us-east-1a"]
    assert status == "fail"
    subnet = existing["subnets"]["us-east-1a"]["id"]
    # p5.48xlarge: 50 addresses per interface (DescribeInstanceTypes), two interfaces (primary + the CNI's
    # spare), its other 31 EFA interfaces efa-only; m7i.xlarge system nodes: 15 per interface, 1 of 2 per zone.
    assert detail.startswith(
        f"{subnet} has 16 free addresses but system m7i.xlarge: 1 × 30; pool train p5.48xlarge: 32 × 100 = 3230 "
        "addresses"
    )
    assert "WARM_ENI_TARGET=1" in detail
    # The other zone holds only its share of the system nodes.
    assert rows(results, "addresses")["us-east-1b"][0] == "pass"


def test_a_roomy_brownfield_network_passes_vpc_subnet_egress_and_addresses(aws):
    existing = vpc_with(aws)
    aws.client("s3").create_bucket(Bucket="campus-flow-logs")
    aws.client("ec2").create_flow_logs(
        ResourceIds=[existing["vpc_id"]],
        ResourceType="VPC",
        TrafficType="ALL",
        LogDestinationType="s3",
        LogDestination="arn:aws:s3:::campus-flow-logs",
    )
    pool = {"name": "infer", "instance_type": "g6e.12xlarge", "efa": False, "max_nodes": 2}
    results = run_brownfield_checks(site_with(existing, pool), "test", aws)
    assert {(r.check, r.pool): r.status for r in results} == {
        ("vpc", "-"): "pass",
        ("flow-logs", "-"): "pass",
        **{
            (check, zone): "pass"
            for check in ("subnet", "egress", "addresses")
            for zone in ("us-east-1a", "us-east-1b")
        },
    }
    assert rows(results, "egress")["us-east-1a"][1].startswith(
        f"{existing['route_table_ids'][0]} sends 0.0.0.0/0 to nat-"
    )


def test_an_fsx_file_system_in_the_zone_is_named_in_the_address_count(aws):
    existing = vpc_with(aws)
    lustre = {"name": "shared", "capacity_gib": 2400, "throughput_mbps_per_tib": 250, "zone": "us-east-1b"}
    results = run_brownfield_checks(site_with(existing, storage={"lustre": [lustre]}), "test", aws)
    addresses = rows(results, "addresses")
    assert addresses["us-east-1b"][1].endswith(", plus the file servers of FSx for Lustre shared (not counted)")
    assert "FSx" not in addresses["us-east-1a"][1]


def test_each_planted_network_gap_fails_with_its_fix(aws):
    existing = vpc_with(aws, nat=False)
    wrong = copy.deepcopy(existing)
    wrong["subnets"]["us-east-1b"]["cidr"] = "10.20.9.0/24"
    wrong["route_table_ids"] = ["rtb-0123456789abcdef0"]
    results = run_brownfield_checks(site_with(wrong), "test", aws)
    status, detail = rows(results, "subnet")["us-east-1b"]
    assert status == "fail" and "its CIDR is 10.20.1.0/24, not 10.20.9.0/24: copy it into the stack file" in detail
    status, detail = rows(results, "egress")["us-east-1a"]
    table = existing["route_table_ids"][0]
    assert status == "fail"
    assert detail == (
        f"{existing['subnets']['us-east-1a']['id']} uses {table}, which network.existing.route_table_ids does not "
        f"list: links and the S3 gateway endpoint would miss it; add {table}"
    )
    # With its table listed, a subnet with no NAT route and no endpoints fails on egress.
    results = run_brownfield_checks(site_with(existing), "test", aws)
    status, detail = rows(results, "egress")["us-east-1a"]
    assert (
        status == "fail" and f"{table} sends 0.0.0.0/0 to no NAT gateway, and the VPC lacks the endpoints s3" in detail
    )
    assert rows(results, "flow-logs")["-"] == (
        "fail",
        f"{existing['vpc_id']} has no active flow log, which flow_logs: true says it has; ask the network team to "
        "enable VPC flow logs (ALL traffic), or set flow_logs: false to record that it has none",
    )
    missing_vpc = {**existing, "vpc_id": "vpc-0123456789abcdef0"}
    results = run_brownfield_checks(site_with(missing_vpc), "test", aws)
    assert rows(results, "vpc")["-"] == (
        "fail",
        "vpc-0123456789abcdef0 does not exist in us-east-1; check network.existing.vpc_id",
    )


def test_efa_only_interfaces_take_no_address():
    # p5.48xlarge wires 32 EFA interfaces (the primary efa, 31 efa-only), p4d.24xlarge 4: a node takes what a
    # node without EFA takes, its primary interface and the CNI's spare one.
    assert node_addresses("p5.48xlarge", per_interface=50) == 100
    assert node_addresses("p4d.24xlarge", per_interface=50) == 100
    assert node_addresses("g6e.12xlarge", per_interface=50) == 100


def test_an_existing_cluster_must_run_the_stack_files_version_and_admit_access_entries(aws):
    existing = vpc_with(aws)
    eks = aws.client("eks")
    eks.create_cluster(
        name="platform-eks",
        version="1.32",
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/eks",
        resourcesVpcConfig={"subnetIds": [s["id"] for s in existing["subnets"].values()]},
    )
    answer_vpc_cni(aws, ENFORCING)
    spec = site_with(existing, kubernetes={"existing_cluster": "platform-eks"})
    status, detail = rows(run_brownfield_checks(spec, "test", aws), "cluster")["-"]
    assert status == "fail"
    assert 'it runs 1.32, the stack file says 1.33: set version: "1.32"' in detail
    assert "Lattice's node AMIs and add-ons are pinned for 1.33, 1.34, 1.35: upgrade the cluster" in detail
    assert (
        "its authentication mode is CONFIG_MAP, which refuses access entries: `aws eks update-cluster-config --name "
        "platform-eks --access-config authenticationMode=API_AND_CONFIG_MAP`"
    ) in detail

    eks.create_cluster(
        name="platform-133",
        version="1.33",
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/eks",
        resourcesVpcConfig={"subnetIds": [s["id"] for s in existing["subnets"].values()]},
    )

    def with_access_entries(parsed, **_):
        parsed["cluster"]["accessConfig"] = {"authenticationMode": "API_AND_CONFIG_MAP"}

    session = boto3.Session(region_name=REGION)
    session.events.register("after-call.eks.DescribeCluster", with_access_entries)
    answer_vpc_cni(session, ENFORCING)
    spec = site_with(existing, kubernetes={"existing_cluster": "platform-133"})
    assert rows(run_brownfield_checks(spec, "test", session), "cluster")["-"] == (
        "pass",
        "platform-133 is ACTIVE, runs 1.33 and admits access entries (API_AND_CONFIG_MAP)",
    )


# DescribeAddon's answer (docs.aws.amazon.com/eks/latest/APIReference/API_DescribeAddon.html) for the cluster's
# vpc-cni add-on; moto 5 does not implement the call ("Not yet implemented"), so botocore's before-call event
# answers it in place of the service.
ENFORCING = {
    "addonName": "vpc-cni",
    "clusterName": "platform-133",
    "status": "ACTIVE",
    "addonVersion": "v1.19.5-eksbuild.1",
    "configurationValues": '{"enableNetworkPolicy": "true"}',
}


def answer_vpc_cni(session: boto3.Session, addon: dict[str, Any] | None) -> list[str]:
    """Answer eks:DescribeAddon with ``addon`` (None: the cluster has no vpc-cni add-on); returns the requests'
    paths."""
    requests: list[str] = []

    def describe_addon(params, **_):
        requests.append(params["url_path"])
        if addon is None:
            error = {"Code": "ResourceNotFoundException", "Message": "No addon: vpc-cni found in cluster"}
            return SimpleNamespace(status_code=404), {"Error": error, "ResponseMetadata": {"HTTPStatusCode": 404}}
        return SimpleNamespace(status_code=200), {"addon": addon, "ResponseMetadata": {"HTTPStatusCode": 200}}

    session.events.register("before-call.eks.DescribeAddon", describe_addon)
    return requests


@pytest.mark.parametrize(
    ("addon", "status", "says"),
    [
        (ENFORCING, "pass", "platform-133's vpc-cni v1.19.5-eksbuild.1 enforces NetworkPolicies"),
        (  # EKS takes configuration values as YAML too
            {**ENFORCING, "configurationValues": "enableNetworkPolicy: 'true'\nenv:\n  WARM_IP_TARGET: '5'\n"},
            "pass",
            "enforces NetworkPolicies (enableNetworkPolicy)",
        ),
        (
            {**ENFORCING, "configurationValues": ""},
            "fail",
            "platform-133's vpc-cni add-on enforces no NetworkPolicy (enableNetworkPolicy is off), and team isolation "
            "is NetworkPolicies: `aws eks update-addon --cluster-name platform-133 --addon-name vpc-cni "
            """--configuration-values '{"enableNetworkPolicy": "true"}'`""",
        ),
        (None, "fail", "platform-133 runs the VPC CNI self-managed (no vpc-cni add-on)"),
    ],
    ids=["json", "yaml", "off", "self-managed"],
)
def test_an_existing_cluster_must_enforce_network_policies_for_team_isolation(aws, addon, status, says):
    existing = vpc_with(aws)
    aws.client("eks").create_cluster(
        name="platform-133",
        version="1.33",
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/eks",
        resourcesVpcConfig={"subnetIds": [s["id"] for s in existing["subnets"].values()]},
    )
    requests = answer_vpc_cni(aws, addon)
    spec = site_with(existing, kubernetes={"existing_cluster": "platform-133"})
    found = rows(run_brownfield_checks(spec, "test", aws), "network-policy")["-"]
    assert found[0] == status
    assert says in found[1]
    assert requests == ["/clusters/platform-133/addons/vpc-cni"]


def test_a_missing_cluster_gets_no_network_policy_row(aws):
    existing = vpc_with(aws)
    requests = answer_vpc_cni(aws, ENFORCING)
    spec = site_with(existing, kubernetes={"existing_cluster": "nowhere"})
    results = run_brownfield_checks(spec, "test", aws)
    assert rows(results, "cluster")["-"][0] == "fail"
    assert rows(results, "network-policy") == {} and requests == []


def test_the_key_policy_must_hold_the_statements_lattice_would_write(aws):
    existing = vpc_with(aws)
    kms = aws.client("kms")
    # moto's default key policy: the account root only.
    bare = kms.create_key()["KeyMetadata"]["Arn"]
    # An organisation trail: no statement for a trail of the site's own.
    spec = site_with(existing, encryption={"key_arn": bare}, audit={"cloudtrail": "organization"})
    status, detail = rows(run_brownfield_checks(spec, "test", aws), "key")["-"]
    assert status == "fail"
    assert detail.startswith(
        "the key policy lacks 3 statement(s) the site needs: CloudWatchLogsEncryptsThisAccountsLogGroups (CloudWatch "
        "Logs encrypts the site's log groups); AutoScalingUsesTheKeyForNodeVolumes (EC2 Auto Scaling launches nodes "
        "with encrypted volumes); AutoScalingAttachesNodeVolumes (EC2 Auto Scaling attaches those volumes (grants))."
    )
    # The statements to add are in the detail, ready to paste.
    pasted = json.loads(detail.split("Ask the key's owner to add: ", 1)[1])
    assert [s["Sid"] for s in pasted] == [
        "CloudWatchLogsEncryptsThisAccountsLogGroups",
        "AutoScalingUsesTheKeyForNodeVolumes",
        "AutoScalingAttachesNodeVolumes",
    ]
    # A key whose policy is what Lattice writes passes.
    complete = {"Version": "2012-10-17", "Statement": required_statements(spec.sites[0], ACCOUNT, "aws", "test")}
    full = kms.create_key(Policy=json.dumps(complete))["KeyMetadata"]["Arn"]
    spec = site_with(existing, encryption={"key_arn": full}, audit={"cloudtrail": "organization"})
    assert rows(run_brownfield_checks(spec, "test", aws), "key")["-"] == (
        "pass",
        f"{full} is enabled and its policy admits every service the site uses",
    )
    kms.disable_key(KeyId=full.rsplit("/", 1)[-1])  # moto looks keys up by ID here
    status, detail = rows(run_brownfield_checks(spec, "test", aws), "key")["-"]
    assert (status, detail) == ("fail", f"{full}: it is Disabled, not Enabled")


def test_a_narrower_statement_does_not_cover_a_requirement():
    wanted = {"Sid": "X", "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::1:role/r"}, "Action": ["kms:Decrypt"]}
    broad = {"Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam::1:role/r"]}, "Action": "kms:*", "Resource": "*"}
    narrow = {**broad, "Condition": {"StringEquals": {"kms:ViaService": "ec2.us-east-1.amazonaws.com"}}}
    other = {**broad, "Principal": {"AWS": "arn:aws:iam::1:role/other"}}
    assert missing_statements({"Statement": [broad]}, [wanted]) == []
    assert missing_statements({"Statement": [narrow]}, [wanted]) == [wanted]
    assert missing_statements({"Statement": [other]}, [wanted]) == [wanted]
    assert missing_statements({"Statement": [{**broad, "Effect": "Deny"}]}, [wanted]) == [wanted]


def organisation_trail(session: boto3.Session, **changes: Any) -> str:
    s3 = session.client("s3")
    s3.create_bucket(Bucket="org-trail-logs", ObjectLockEnabledForBucket=changes.pop("locked", True))
    options = {
        "Name": "org-trail",
        "S3BucketName": "org-trail-logs",
        "IsMultiRegionTrail": True,
        "EnableLogFileValidation": True,
        "IsOrganizationTrail": True,
        "KmsKeyId": f"arn:aws:kms:{REGION}:{ACCOUNT}:key/4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
        **changes,
    }
    trail = session.client("cloudtrail").create_trail(**{k: v for k, v in options.items() if v is not None})
    session.client("cloudtrail").start_logging(Name=trail["TrailARN"])
    return trail["TrailARN"]


def test_an_organisation_trail_that_covers_the_account_passes(aws):
    organisation_trail(aws)
    spec = site_with(vpc_with(aws), audit={"cloudtrail": "organization"})
    assert rows(run_brownfield_checks(spec, "test", aws), "trail")["-"] == (
        "pass",
        "organisation trail org-trail is multi-region, validated, KMS-encrypted and logging, into locked bucket "
        "org-trail-logs",
    )


def test_an_organisation_trail_with_gaps_fails_naming_each(aws):
    organisation_trail(aws, IsMultiRegionTrail=False, EnableLogFileValidation=False, KmsKeyId=None, locked=False)
    spec = site_with(vpc_with(aws), audit={"cloudtrail": "organization"})
    assert rows(run_brownfield_checks(spec, "test", aws), "trail")["-"] == (
        "fail",
        "organisation trail org-trail: not multi-region (IsMultiRegionTrail false), log file validation off, log "
        "files not encrypted with KMS (no KmsKeyId), bucket org-trail-logs has no Object Lock",
    )


def test_no_organisation_trail_fails(aws):
    spec = site_with(vpc_with(aws), audit={"cloudtrail": "organization"})
    status, detail = rows(run_brownfield_checks(spec, "test", aws), "trail")["-"]
    assert status == "fail" and detail.startswith("no organisation trail records this account in us-east-1")


def test_a_site_that_adopts_nothing_gets_no_brownfield_rows(aws):
    assert run_brownfield_checks(StackSpec.model_validate(spec_with(AWS_SITE)), "test", aws) == []


# --- the routes of the network team's tables to linked ranges --------------------------------------------------
# moto 5.2.5 does not implement EnableVgwRoutePropagation: a propagated route is added to moto's DescribeRouteTables
# answer at botocore's after-call hook, in the shape the EC2 API reference gives a Route (Origin
# EnableVgwRoutePropagation, the virtual private gateway as GatewayId) and the table's PropagatingVgws.
GRID_RANGE = "10.50.0.0/16"


def linked_site(existing: dict[str, Any]) -> StackSpec:
    """An AWS site in the given VPC (10.20.0.0/16) linked to a grid site that routes 10.50.0.0/16."""
    site = copy.deepcopy(AWS_SITE)
    site["network"] = {**site["network"], "existing": existing, "asn": 64600}
    grid = {**copy.deepcopy(GRID_SITE), "network": {"cidr": GRID_RANGE, "asn": 64800}}
    grid["network"]["vpn_gateway"] = {"public_ips": ["192.0.2.10"]}
    return StackSpec.model_validate(
        spec_with(site, grid, links=[{"sites": ["aws-use1", "grid-hpc"], "tunnel_size": "standard"}])
    )


def propagated(session: boto3.Session, table: str, cidr: str, gateway: str) -> None:
    def with_route(parsed, **_):
        for found in parsed["RouteTables"]:
            if found["RouteTableId"] == table:
                route = {"DestinationCidrBlock": cidr, "GatewayId": gateway, "Origin": "EnableVgwRoutePropagation"}
                found["Routes"].append({**route, "State": "active"})
                found["PropagatingVgws"] = [{"GatewayId": gateway}]

    session.events.register("after-call.ec2.DescribeRouteTables", with_route)


def _vgw(ec2, vpc: str) -> str:
    gateway = ec2.create_vpn_gateway(Type="ipsec.1")["VpnGateway"]["VpnGatewayId"]
    ec2.attach_vpn_gateway(VpcId=vpc, VpnGatewayId=gateway)
    return gateway


@pytest.mark.parametrize(
    ("plant", "says"),
    [
        (
            lambda ec2, table, vgw: ec2.create_route(
                RouteTableId=table, DestinationCidrBlock=GRID_RANGE, GatewayId=vgw
            ),
            "static route 10.50.0.0/16 -> {vgw} is 10.50.0.0/16 itself: creating Lattice's route fails "
            "(RouteAlreadyExists) and stops the up",
        ),
        (
            lambda ec2, table, vgw: ec2.create_route(
                RouteTableId=table, DestinationCidrBlock="10.0.0.0/8", GatewayId=vgw
            ),
            "static route 10.0.0.0/8 -> {vgw} holds 10.50.0.0/16: Lattice's more specific route would take that part "
            "of its traffic, from every subnet using the table, into Lattice's tunnels",
        ),
        (
            lambda ec2, table, vgw: ec2.create_route(
                RouteTableId=table, DestinationCidrBlock="10.50.8.0/24", GatewayId=vgw
            ),
            "static route 10.50.8.0/24 -> {vgw} lies inside 10.50.0.0/16: that part of the linked range would keep "
            "going to {vgw}, not over the link",
        ),
    ],
    ids=["equal-static", "broader-static", "narrower-static"],
)
def test_a_route_to_a_linked_range_in_the_network_teams_table_is_refused_before_up(aws, plant, says):
    existing = vpc_with(aws)
    ec2 = aws.client("ec2")
    table = existing["route_table_ids"][0]
    vgw = _vgw(ec2, existing["vpc_id"])
    plant(ec2, table, vgw)
    status, detail = rows(run_brownfield_checks(linked_site(existing), "test", aws), "routes")[table]
    assert status == "fail"
    assert detail.startswith(f"{table} already routes linked ranges elsewhere: ")
    assert says.format(vgw=vgw) in detail


def test_a_propagated_route_to_a_linked_range_would_be_silently_overridden_and_is_refused(aws):
    existing = vpc_with(aws)
    table = existing["route_table_ids"][0]
    vgw = _vgw(aws.client("ec2"), existing["vpc_id"])
    session = boto3.Session(region_name=REGION)
    propagated(session, table, GRID_RANGE, vgw)
    status, detail = rows(run_brownfield_checks(linked_site(existing), "test", session), "routes")[table]
    assert status == "fail"
    assert (
        f"propagated route 10.50.0.0/16 -> {vgw} is 10.50.0.0/16 itself: Lattice's static route would override it "
        "(AWS prefers a static route for the same prefix) and send every subnet's traffic for it through Lattice's "
        "tunnels"
    ) in detail


def test_a_prefix_list_route_is_read_entry_by_entry(aws):
    existing = vpc_with(aws)
    ec2 = aws.client("ec2")
    table = existing["route_table_ids"][0]
    campus = ec2.create_managed_prefix_list(
        PrefixListName="campus", MaxEntries=4, AddressFamily="IPv4", Entries=[{"Cidr": "10.48.0.0/12"}]
    )["PrefixList"]["PrefixListId"]
    theirs = ec2.create_transit_gateway(Description="the institution's")["TransitGateway"]["TransitGatewayId"]
    ec2.create_route(RouteTableId=table, DestinationPrefixListId=campus, TransitGatewayId=theirs)
    status, detail = rows(run_brownfield_checks(linked_site(existing), "test", aws), "routes")[table]
    assert status == "fail"
    assert f"static route {campus} (10.48.0.0/12) -> {theirs} holds 10.50.0.0/16" in detail


def test_a_prefix_list_entry_equal_to_a_linked_range_is_overridden_not_a_route_already_there(aws):
    """A CIDR route and a prefix list route are different destinations: CreateRoute does not fail on the prefix list's
    entry (RouteAlreadyExists is for a route to the same CIDR), and AWS prefers the CIDR route (Amazon VPC User
    Guide, "Route priority": static routes, then prefix list routes), so Lattice's would take the range."""
    existing = vpc_with(aws)
    ec2 = aws.client("ec2")
    table = existing["route_table_ids"][0]
    campus = ec2.create_managed_prefix_list(
        PrefixListName="campus", MaxEntries=4, AddressFamily="IPv4", Entries=[{"Cidr": GRID_RANGE}]
    )["PrefixList"]["PrefixListId"]
    theirs = ec2.create_transit_gateway(Description="the institution's")["TransitGateway"]["TransitGatewayId"]
    ec2.create_route(RouteTableId=table, DestinationPrefixListId=campus, TransitGatewayId=theirs)
    status, detail = rows(run_brownfield_checks(linked_site(existing), "test", aws), "routes")[table]
    assert status == "fail"
    assert (
        f"static route {campus} (10.50.0.0/16) -> {theirs} holds 10.50.0.0/16 itself: Lattice's static route to it "
        "would take priority over the prefix list's entry"
    ) in detail
    assert "RouteAlreadyExists" not in detail


def test_the_default_route_and_lattices_own_routes_from_an_earlier_up_pass(aws):
    existing = vpc_with(aws)  # 0.0.0.0/0 to a NAT gateway
    ec2 = aws.client("ec2")
    table = existing["route_table_ids"][0]
    tags = [{"Key": "lattice:stack", "Value": "test"}, {"Key": "lattice:site", "Value": "aws-use1"}]
    ours = ec2.create_transit_gateway(
        Description="Lattice test aws-use1", TagSpecifications=[{"ResourceType": "transit-gateway", "Tags": tags}]
    )["TransitGateway"]["TransitGatewayId"]
    ec2.create_route(RouteTableId=table, DestinationCidrBlock=GRID_RANGE, TransitGatewayId=ours)
    assert rows(run_brownfield_checks(linked_site(existing), "test", aws), "routes")[table] == (
        "pass",
        f"{table} routes none of the linked ranges 10.50.0.0/16 elsewhere: Lattice adds them towards its transit "
        "gateway",
    )
    # Another stack's transit gateway is not Lattice's own for this site.
    other = ec2.create_transit_gateway(
        Description="Lattice prod aws-use1",
        TagSpecifications=[{"ResourceType": "transit-gateway", "Tags": [{"Key": "lattice:stack", "Value": "prod"}]}],
    )["TransitGateway"]["TransitGatewayId"]
    ec2.replace_route(RouteTableId=table, DestinationCidrBlock=GRID_RANGE, TransitGatewayId=other)
    assert rows(run_brownfield_checks(linked_site(existing), "test", aws), "routes")[table][0] == "fail"


def test_a_site_without_links_gets_no_routes_row(aws):
    existing = vpc_with(aws)
    assert rows(run_brownfield_checks(site_with(existing), "test", aws), "routes") == {}


# --- what an existing cluster already has: access entries and add-ons ---------------------------------------------
ADMIN_ROLE = f"arn:aws:iam::{ACCOUNT}:role/platform-admin"
TEAM_ROLE = f"arn:aws:iam::{ACCOUNT}:role/vision-lab"
CLUSTER_ADMIN = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


class ClusterApi:
    """EKS's access-entry and add-on reads, which moto 5.2.5 does not implement ("Not yet implemented"), answered at
    botocore's ``before-call`` hook from an in-test cluster (EKS API reference: ListAccessEntries, DescribeAccessEntry,
    ListAssociatedAccessPolicies, DescribeAddon); preflight's client serialises every request for real, and every
    answer is validated against the operation's output shape."""

    def __init__(self, session: boto3.Session, cluster: str) -> None:
        self.cluster = cluster
        self.entries: dict[str, dict[str, Any]] = {}
        self.policies: dict[str, list[dict[str, Any]]] = {}
        self.addons: dict[str, dict[str, Any]] = {"vpc-cni": {**ENFORCING, "clusterName": cluster}}
        self.requests: list[str] = []
        for operation in ("ListAccessEntries", "DescribeAccessEntry", "ListAssociatedAccessPolicies", "DescribeAddon"):
            session.events.register(f"before-call.eks.{operation}", self._answer)

    def entry(
        self,
        arn: str,
        groups: list[str] = (),
        kind: str = "STANDARD",
        policies: list[str] = (),
        tags: dict[str, str] | None = None,
    ) -> None:
        self.entries[arn] = {
            "clusterName": self.cluster,
            "principalArn": arn,
            "kubernetesGroups": list(groups),
            "accessEntryArn": f"arn:aws:eks:{REGION}:{ACCOUNT}:access-entry/{self.cluster}/role/{ACCOUNT}/x/id",
            "username": arn,
            "type": kind,
            "tags": dict(tags or {}),
        }
        self.policies[arn] = [{"policyArn": p, "accessScope": {"type": "cluster"}} for p in policies]

    def addon(self, name: str, status: str = "ACTIVE", tags: dict[str, str] | None = None) -> None:
        self.addons[name] = {
            "addonName": name,
            "clusterName": self.cluster,
            "status": status,
            "addonVersion": "v1.3.8",
            "tags": dict(tags or {}),
        }

    def _answer(self, model, params, **_: Any):
        from urllib.parse import unquote

        path = params["url_path"]
        self.requests.append(f"{model.name} {unquote(path)}")
        parts = [unquote(part) for part in path.strip("/").split("/")]
        if model.name == "ListAccessEntries":
            response = {"accessEntries": sorted(self.entries)}
        elif model.name == "DescribeAddon":
            if parts[3] not in self.addons:
                return error_response("ResourceNotFoundException", f"No addon: {parts[3]} found in cluster", 404)
            response = {"addon": self.addons[parts[3]]}
        elif parts[3] not in self.entries:
            return error_response("ResourceNotFoundException", f"The specified principalArn {parts[3]} not found", 404)
        elif model.name == "DescribeAccessEntry":
            response = {"accessEntry": self.entries[parts[3]]}
        else:
            response = {
                "clusterName": self.cluster,
                "principalArn": parts[3],
                "associatedAccessPolicies": self.policies[parts[3]],
            }
        validate_parameters(response, model.output_shape)
        return AWSResponse(None, 200, {}, None), {**response, "ResponseMetadata": {"HTTPStatusCode": 200}}


def error_response(code: str, message: str, status: int) -> tuple[AWSResponse, dict[str, Any]]:
    return AWSResponse(None, status, {}, None), {
        "Error": {"Code": code, "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }


def adopted(existing: dict[str, Any], present: dict[str, Any] | None = None) -> StackSpec:
    """platform-133 with an admin role, a team with its own role, and an autoscaled GPU pool."""
    site = copy.deepcopy(AWS_SITE)
    site["network"] = {**site["network"], "existing": existing}
    kubernetes = {**site["kubernetes"], "existing_cluster": "platform-133", "admin_role_arns": [ADMIN_ROLE]}
    site["kubernetes"] = {**kubernetes, **({"present": present} if present else {})}
    site["gpu_pools"] = [{"name": "infer", "instance_type": "g6e.12xlarge", "efa": False, "max_nodes": 2}]
    team = {"name": "vision", "gpu_quota": 8, "sites": ["aws-use1"], "aws_role_arns": [TEAM_ROLE]}
    return StackSpec.model_validate(spec_with(site, teams=[team]))


@pytest.fixture
def cluster_api(aws):
    """A moto session with ACTIVE cluster platform-133 (API_AND_CONFIG_MAP) in a roomy VPC, and its ClusterApi."""
    existing = vpc_with(aws)
    aws.client("eks").create_cluster(
        name="platform-133",
        version="1.33",
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/eks",
        resourcesVpcConfig={"subnetIds": [s["id"] for s in existing["subnets"].values()]},
    )
    session = boto3.Session(region_name=REGION)
    session.events.register(
        "after-call.eks.DescribeCluster",
        lambda parsed, **_: parsed["cluster"].update(accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"}),
    )
    return SimpleNamespace(session=session, api=ClusterApi(session, "platform-133"), existing=existing)


def adoption_rows(results) -> dict[tuple[str, str], tuple[str, str]]:
    return {(r.check, r.pool): (r.status, r.detail) for r in results if r.check in ("access-entry", "add-on")}


def test_an_entry_or_addon_the_cluster_already_has_must_be_listed_present_or_up_would_collide(cluster_api):
    """The creator's admin entry and a Pod Identity agent the owner runs: creating them again fails with
    ResourceInUseException, and Lattice's copy would later be destroyed with the stack."""
    cluster_api.api.entry(ADMIN_ROLE, policies=[CLUSTER_ADMIN])
    cluster_api.api.addon("eks-pod-identity-agent")
    found = adoption_rows(run_brownfield_checks(adopted(cluster_api.existing), "test", cluster_api.session))
    assert found == {
        ("access-entry", "platform-admin"): (
            "fail",
            f"present: platform-133 already has an access entry for {ADMIN_ROLE}, and EKS allows one per principal, "
            "so creating Lattice's would stop the up (ResourceInUseException): add it to "
            "kubernetes.present.access_entries, and Lattice uses it as it is",
        ),
        ("access-entry", "vision-lab"): ("pass", "absent: Lattice creates it (team vision's group)"),
        ("add-on", "eks-pod-identity-agent"): (
            "fail",
            "present (v1.3.8, ACTIVE): platform-133 already runs eks-pod-identity-agent, and EKS allows one add-on of "
            "a name, so creating Lattice's would stop the up (ResourceInUseException): add it to "
            "kubernetes.present.addons, and Lattice uses it and never deletes it",
        ),
        ("add-on", "eks-node-monitoring-agent"): (
            "pass",
            "absent: Lattice creates it (the node conditions the GPU node groups' auto repair acts on)",
        ),
    }


def test_what_the_stack_file_lists_present_is_used_where_it_grants_what_lattices_would(cluster_api):
    api = cluster_api.api
    api.entry(ADMIN_ROLE, policies=[CLUSTER_ADMIN])
    api.entry(TEAM_ROLE, groups=["vision-readers", "lattice:team:vision"])
    api.addon("eks-pod-identity-agent")
    api.addon("eks-node-monitoring-agent")
    present = {
        "access_entries": [ADMIN_ROLE, TEAM_ROLE],
        "addons": ["eks-pod-identity-agent", "eks-node-monitoring-agent"],
    }
    found = adoption_rows(run_brownfield_checks(adopted(cluster_api.existing, present), "test", cluster_api.session))
    assert found == {
        ("access-entry", "platform-admin"): (
            "pass",
            "present: Lattice uses it (AmazonEKSClusterAdminPolicy, cluster-wide)",
        ),
        ("access-entry", "vision-lab"): ("pass", "present: Lattice uses it (Kubernetes group lattice:team:vision)"),
        ("add-on", "eks-pod-identity-agent"): (
            "pass",
            "present (v1.3.8, ACTIVE): Lattice uses it and never deletes it",
        ),
        ("add-on", "eks-node-monitoring-agent"): (
            "pass",
            "present (v1.3.8, ACTIVE): Lattice uses it and never deletes it",
        ),
    }
    assert f"ListAssociatedAccessPolicies /clusters/platform-133/access-entries/{ADMIN_ROLE}/access-policies" in (
        api.requests
    )


def test_a_present_entry_that_grants_less_than_lattices_or_a_listed_one_that_is_absent_fails(cluster_api):
    api = cluster_api.api
    api.entry(ADMIN_ROLE, policies=["arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"])
    api.entry(TEAM_ROLE, groups=["vision-readers"])
    api.addon("eks-pod-identity-agent", status="DEGRADED")
    present = {
        "access_entries": [ADMIN_ROLE, TEAM_ROLE],
        "addons": ["eks-pod-identity-agent", "eks-node-monitoring-agent"],
    }
    found = adoption_rows(run_brownfield_checks(adopted(cluster_api.existing, present), "test", cluster_api.session))
    assert found[("access-entry", "platform-admin")] == (
        "fail",
        "present, but it grants no AmazonEKSClusterAdminPolicy cluster-wide, which kubernetes.admin_role_arns stands "
        "for: ask the cluster's owner for `aws eks associate-access-policy --cluster-name platform-133 "
        f"--principal-arn {ADMIN_ROLE} --policy-arn {CLUSTER_ADMIN} --access-scope type=cluster`, or drop the role "
        "from admin_role_arns",
    )
    assert found[("access-entry", "vision-lab")] == (
        "fail",
        "present, but its Kubernetes groups (vision-readers) lack lattice:team:vision, which team vision's RoleBinding "
        "names: ask the cluster's owner for `aws eks update-access-entry --cluster-name platform-133 --principal-arn "
        f"{TEAM_ROLE} --kubernetes-groups vision-readers lattice:team:vision`",
    )
    assert found[("add-on", "eks-pod-identity-agent")][0] == "fail"
    assert found[("add-on", "eks-pod-identity-agent")][1].startswith("present but DEGRADED (v1.3.8): Lattice needs it")
    assert found[("add-on", "eks-node-monitoring-agent")] == (
        "fail",
        "absent: platform-133 runs no eks-node-monitoring-agent add-on, which kubernetes.present.addons lists; remove "
        "it there, and Lattice creates it (the node conditions the GPU node groups' auto repair acts on)",
    )


def test_lattices_own_entries_and_addons_from_an_earlier_up_are_kept_not_listed_present_where_the_next_up_deletes_them(
    cluster_api,
):
    """After the first up, the cluster holds the entries and add-ons Lattice created, tagged with the stack and site
    (TagContext.aws_tags). They are in Pulumi's state: asking to list them under present would have the next up stop
    declaring them, and Pulumi would delete them (the admins' cluster access, the teams' Pod Identity agent)."""
    api = cluster_api.api
    ours = {"lattice:stack": "test", "lattice:site": "aws-use1", "lattice:component": "EksCluster"}
    api.entry(ADMIN_ROLE, policies=[CLUSTER_ADMIN], tags=ours)
    api.entry(TEAM_ROLE, groups=["lattice:team:vision"], tags={**ours, "lattice:team": "vision"})
    api.addon("eks-pod-identity-agent", tags=ours)
    # Another stack's add-on is not this stack's: it is the cluster's, to be listed.
    api.addon("eks-node-monitoring-agent", tags={**ours, "lattice:stack": "prod"})
    found = adoption_rows(run_brownfield_checks(adopted(cluster_api.existing), "test", cluster_api.session))
    earlier = "Lattice's own, from an earlier up of this stack (tagged lattice:stack test, lattice:site aws-use1)"
    assert found == {
        ("access-entry", "platform-admin"): (
            "pass",
            f"present: {earlier}; Lattice keeps it (cluster admin (AmazonEKSClusterAdminPolicy))",
        ),
        ("access-entry", "vision-lab"): ("pass", f"present: {earlier}; Lattice keeps it (team vision's group)"),
        ("add-on", "eks-pod-identity-agent"): ("pass", f"present (v1.3.8, ACTIVE): {earlier}; Lattice keeps it"),
        ("add-on", "eks-node-monitoring-agent"): (
            "fail",
            "present (v1.3.8, ACTIVE): platform-133 already runs eks-node-monitoring-agent, and EKS allows one add-on "
            "of a name, so creating Lattice's would stop the up (ResourceInUseException): add it to "
            "kubernetes.present.addons, and Lattice uses it and never deletes it",
        ),
    }
    present = {"access_entries": [ADMIN_ROLE], "addons": ["eks-pod-identity-agent", "eks-node-monitoring-agent"]}
    found = adoption_rows(run_brownfield_checks(adopted(cluster_api.existing, present), "test", cluster_api.session))
    assert found[("access-entry", "platform-admin")] == (
        "fail",
        f"present, but {earlier}: listed under kubernetes.present.access_entries, the next up would delete it (the "
        "program would no longer declare it); remove it from there",
    )
    assert found[("add-on", "eks-pod-identity-agent")] == (
        "fail",
        f"present (v1.3.8, ACTIVE), but {earlier}: listed under kubernetes.present.addons, the next up would delete it "
        "(the program would no longer declare it); remove it from there",
    )
    assert found[("add-on", "eks-node-monitoring-agent")] == (
        "pass",
        "present (v1.3.8, ACTIVE): Lattice uses it and never deletes it",
    )


# --- nat: false: the endpoints Lattice adds to the network team's VPC -------------------------------------------
def test_an_s3_gateway_endpoint_already_on_the_given_route_tables_is_refused_before_up_where_lattices_would_collide(
    aws,
):
    """With nat: false Lattice adds an S3 gateway endpoint on every given route table; EC2 refuses a second route to
    the S3 prefix list in a table ("route table ... already has a route with destination-prefix-list-id ...",
    RouteAlreadyExists: eksctl-io/eksctl#2473, #4377), so a VPC whose team already routes S3 through its own gateway
    endpoint stopped the up half-built. Lattice's own endpoints, from an earlier up, are no clash."""
    existing = vpc_with(aws, nat=False)
    ec2 = aws.client("ec2")
    table = existing["route_table_ids"][0]
    theirs = ec2.create_vpc_endpoint(
        VpcId=existing["vpc_id"],
        ServiceName=f"com.amazonaws.{REGION}.s3",
        VpcEndpointType="Gateway",
        RouteTableIds=[table],
    )["VpcEndpoint"]["VpcEndpointId"]
    spec = site_with(existing, network={"nat": False})
    status, detail = rows(run_brownfield_checks(spec, "test", aws), "egress")["us-east-1a"]
    assert status == "fail"
    assert detail.startswith(
        f"the VPC's S3 gateway endpoint already routes S3 from {table} (by {theirs}), and with nat: false Lattice adds "
        "an S3 gateway endpoint on every table of network.existing.route_table_ids: EC2 refuses a second route to "
        "the S3 prefix list in a table (RouteAlreadyExists)"
    )
    # The same endpoint made by an earlier up of this stack's site is Lattice's own, in Pulumi's state.
    ec2.create_tags(
        Resources=[theirs],
        Tags=[{"Key": "lattice:stack", "Value": "test"}, {"Key": "lattice:site", "Value": "aws-use1"}],
    )
    ours = dict(
        ec2.create_vpc_endpoint(
            VpcId=existing["vpc_id"],
            ServiceName=f"com.amazonaws.{REGION}.sts",
            VpcEndpointType="Interface",
            SubnetIds=[existing["subnets"]["us-east-1a"]["id"]],
            PrivateDnsEnabled=True,
            TagSpecifications=[
                {
                    "ResourceType": "vpc-endpoint",
                    "Tags": [{"Key": "lattice:stack", "Value": "test"}, {"Key": "lattice:site", "Value": "aws-use1"}],
                }
            ],
        )["VpcEndpoint"]
    )
    assert ours["PrivateDnsEnabled"] is True
    assert rows(run_brownfield_checks(spec, "test", aws), "egress")["us-east-1a"] == (
        "pass",
        f"nat: false: Lattice adds the endpoints private nodes need to {table}'s VPC",
    )
