"""AwsSiteNetwork: subnets carved per zone, NAT egress on and off, flow logs on and off."""

from __future__ import annotations

import json

from tests.conftest import AWS_SITE, spec_with

VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"


def test_vpc_and_private_subnets_per_zone(dev_plan):
    vpc = dev_plan.one(VPC, "aws-use1-net-vpc")
    assert vpc["inputs"]["cidrBlock"] == "10.20.0.0/16"
    assert vpc["inputs"]["enableDnsHostnames"] is True
    private = {
        r["inputs"]["availabilityZone"]: r["inputs"] for r in dev_plan.by_type(SUBNET) if "-private-" in r["name"]
    }
    assert {zone: s["cidrBlock"] for zone, s in private.items()} == {
        "us-east-1a": "10.20.0.0/20",
        "us-east-1b": "10.20.16.0/20",
    }
    assert all(s["vpcId"] == dev_plan.state(vpc)["id"] for s in private.values())
    assert all(s["tags"]["kubernetes.io/role/internal-elb"] == "1" for s in private.values())
    assert all(s["mapPublicIpOnLaunch"] is False for s in private.values())


def test_nat_egress_per_zone(dev_plan):
    public = {
        r["inputs"]["availabilityZone"]: r["inputs"]["cidrBlock"]
        for r in dev_plan.by_type(SUBNET)
        if "-public-" in r["name"]
    }
    assert public == {"us-east-1a": "10.20.128.0/24", "us-east-1b": "10.20.144.0/24"}
    gateways = {r["name"]: r for r in dev_plan.by_type("aws:ec2/natGateway:NatGateway")}
    assert set(gateways) == {"aws-use1-net-nat-us-east-1a", "aws-use1-net-nat-us-east-1b"}
    table = dev_plan.one("aws:ec2/routeTable:RouteTable", "aws-use1-net-private-us-east-1a")
    nat_id = dev_plan.state(gateways["aws-use1-net-nat-us-east-1a"])["id"]
    assert table["inputs"]["routes"] == [{"cidrBlock": "0.0.0.0/0", "natGatewayId": nat_id}]
    public_table = dev_plan.one("aws:ec2/routeTable:RouteTable", "aws-use1-net-public")
    igw = dev_plan.one("aws:ec2/internetGateway:InternetGateway", "aws-use1-net-igw")
    assert public_table["inputs"]["routes"] == [{"cidrBlock": "0.0.0.0/0", "gatewayId": dev_plan.state(igw)["id"]}]


def test_without_nat_there_is_no_public_surface(plan_spec):
    site = {**AWS_SITE, "network": {**AWS_SITE["network"], "nat": False}}
    plan = plan_spec(spec_with(site))
    for kind in ("natGateway:NatGateway", "internetGateway:InternetGateway", "eip:Eip"):
        assert plan.by_type(f"aws:ec2/{kind}") == []
    assert [r["name"] for r in plan.by_type(SUBNET)] == [
        "aws-use1-net-private-us-east-1a",
        "aws-use1-net-private-us-east-1b",
    ]
    table = plan.one("aws:ec2/routeTable:RouteTable", "aws-use1-net-private-us-east-1a")
    assert table["inputs"]["routes"] == []


def test_private_nodes_without_nat_can_still_join_their_cluster(plan_spec):
    """Without NAT or endpoints, nodes cannot reach ECR, STS, EC2 or EKS and never join."""
    site = {**AWS_SITE, "network": {**AWS_SITE["network"], "nat": False}}
    plan = plan_spec(spec_with(site))
    endpoints = {r["inputs"]["serviceName"]: r for r in plan.by_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
    services = ("ecr.api", "ecr.dkr", "sts", "ec2", "eks", "eks-auth", "logs", "ssm", "ssmmessages", "ec2messages")
    interface = [f"com.amazonaws.us-east-1.{s}" for s in services]
    assert sorted(endpoints) == sorted(["com.amazonaws.us-east-1.s3", *interface])
    private = [r for r in plan.by_type(SUBNET) if "-private-" in r["name"]]
    tables = [r for r in plan.by_type("aws:ec2/routeTable:RouteTable") if "-private-" in r["name"]]
    group = plan.one("aws:ec2/securityGroup:SecurityGroup", "aws-use1-net-endpoints")
    gateway = endpoints["com.amazonaws.us-east-1.s3"]["inputs"]
    assert gateway["vpcEndpointType"] == "Gateway"
    assert sorted(gateway["routeTableIds"]) == sorted(plan.state(r)["id"] for r in tables)
    for service in interface:
        inputs = endpoints[service]["inputs"]
        assert inputs["vpcEndpointType"] == "Interface" and inputs["privateDnsEnabled"] is True
        assert sorted(inputs["subnetIds"]) == sorted(plan.state(s)["id"] for s in private)
        assert inputs["securityGroupIds"] == [plan.state(group)["id"]]
    https = plan.one("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "aws-use1-net-endpoints-https")
    assert https["inputs"] | {"tags": None} == {
        "securityGroupId": plan.state(group)["id"],
        "cidrIpv4": "10.20.0.0/16",
        "ipProtocol": "tcp",
        "fromPort": 443,
        "toPort": 443,
        "description": "HTTPS from the site VPC",
        "tags": None,
    }


def test_sites_with_nat_need_no_endpoints(dev_plan):
    assert dev_plan.by_type("aws:ec2/vpcEndpoint:VpcEndpoint") == []


def test_default_security_group_is_emptied(dev_plan):
    group = dev_plan.one("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "aws-use1-net-default-sg")
    assert group["inputs"]["ingress"] == []
    assert group["inputs"]["egress"] == []


def test_flow_logs_go_to_an_encrypted_log_group_with_retention(dev_plan):
    key = dev_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    group = dev_plan.one("aws:cloudwatch/logGroup:LogGroup", "aws-use1-net-flow-logs")
    assert group["inputs"]["name"] == "/lattice/dev/aws-use1/vpc-flow-logs"
    assert group["inputs"]["retentionInDays"] == 365
    assert group["inputs"]["kmsKeyId"] == dev_plan.state(key)["arn"]
    flow = dev_plan.one("aws:ec2/flowLog:FlowLog", "aws-use1-net-flow-logs")
    assert flow["inputs"]["trafficType"] == "ALL"
    assert flow["inputs"]["logDestinationType"] == "cloud-watch-logs"
    assert flow["inputs"]["logDestination"] == dev_plan.state(group)["arn"]
    role = dev_plan.one("aws:iam/role:Role", "aws-use1-net-flow-logs")
    assert flow["inputs"]["iamRoleArn"] == dev_plan.state(role)["arn"]
    trust = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "vpc-flow-logs.amazonaws.com"}
    policy = json.loads(dev_plan.one("aws:iam/rolePolicy:RolePolicy", "aws-use1-net-flow-logs")["inputs"]["policy"])
    assert policy["Statement"][0]["Resource"] == [dev_plan.state(group)["arn"], dev_plan.state(group)["arn"] + ":*"]


def test_flow_log_retention_follows_the_audit_spec(prod_plan):
    group = prod_plan.one("aws:cloudwatch/logGroup:LogGroup", "aws-use1-net-flow-logs")
    assert group["inputs"]["retentionInDays"] == 731
    assert group["protect"] is True


def test_flow_logs_can_be_turned_off(plan_spec):
    site = {**AWS_SITE, "network": {**AWS_SITE["network"], "flow_logs": False}}
    plan = plan_spec(spec_with(site))
    assert plan.by_type("aws:ec2/flowLog:FlowLog") == []
    assert sorted(r["name"] for r in plan.by_type("aws:cloudwatch/logGroup:LogGroup")) == [
        "aws-use1-eks-control-plane",
        "aws-use1-trail-logs",
    ]  # no flow-log group


def _subnet_cidrs(plan) -> dict[str, str]:
    return {r["name"]: r["inputs"]["cidrBlock"] for r in plan.by_type(SUBNET)}


def test_adding_or_reordering_zones_replaces_no_subnet(plan_spec):
    """A subnet's CIDR cannot change in place: a moved block would replace the subnet and all in it."""
    zones = AWS_SITE["network"]["availability_zones"]
    before = _subnet_cidrs(plan_spec(spec_with(AWS_SITE)))
    for changed in ([*zones, "us-east-1c"], [*reversed(zones), "us-east-1d"], list(reversed(zones))):
        site = {**AWS_SITE, "network": {**AWS_SITE["network"], "availability_zones": changed}}
        after = _subnet_cidrs(plan_spec(spec_with(site)))
        assert {name: after[name] for name in before} == before, changed
