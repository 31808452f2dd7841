"""The VPC of an AWS cloud site: private subnets per zone, NAT egress or VPC endpoints, flow logs.

Subnets are carved from the site CIDR by ``cidr.aws_zone_subnets``. Private subnets carry
the EKS internal-load-balancer role tag, public ones the internet-facing one. The VPC's
default security group is emptied (no rules), so nothing lands in an open group by default.

A site with cross-site links gets a transit gateway (its own route table, ECMP on, nothing associated or
propagated by default), attached to the VPC over the private subnets; the private route tables send every
linked site's ranges to it. The VPN attachments associate and propagate in ``components/network/vpn.py``.

Without NAT, nodes reach AWS only through VPC endpoints, and an EKS node that cannot reach
ECR, STS, EC2 and the EKS API never joins its cluster: a site with ``nat: false`` gets the S3
gateway endpoint and the interface endpoints EKS documents for private clusters.

Bring your own network (``existing``): the VPC, its subnets, their route tables, NAT and flow logs are the
network team's, so none of them is created here. What Lattice still adds goes into them: the transit
gateway's VPC attachment over the given subnets, the routes to linked sites as ``aws.ec2.Route`` entries in
the given route tables (standalone routes, which leave the tables' other routes alone), and with
``nat: false`` the endpoints. ``lattice preflight`` proves the subnets exist, egress and have room.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..security.aws_log_group import encrypted_log_group
from ..security.iam import service_trust_policy
from ..tagging import TagContext
from .cidr import aws_zone_subnets
from .ports import HTTPS

# https://docs.aws.amazon.com/eks/latest/userguide/private-clusters.html ("VPC endpoints for private
# clusters"), plus the three endpoints the SSM agent needs to reach Session Manager.
INTERFACE_ENDPOINTS = (
    "ecr.api",
    "ecr.dkr",
    "sts",
    "ec2",
    "eks",
    "eks-auth",
    "logs",
    "ssm",
    "ssmmessages",
    "ec2messages",
)


@dataclass
class AwsSiteNetworkArgs:
    region: str
    cidr: str
    availability_zones: list[str]
    nat: bool
    flow_logs: bool
    log_retention_days: int
    kms_key_arn: pulumi.Input[str]
    tags: TagContext
    protect: bool
    # Cross-site links: the transit gateway's ASN, and the ranges of linked sites the VPC routes to it.
    transit_asn: int | None = None
    transit_routes: list[str] = field(default_factory=list)
    existing: ExistingNetwork | None = None


@dataclass(frozen=True)
class ExistingNetwork:
    """An existing VPC: its ID, one private subnet per zone (in availability_zones' order), its route tables."""

    vpc_id: str
    subnet_ids: dict[str, str]
    route_table_ids: list[str] = field(default_factory=list)


class AwsSiteNetwork(pulumi.ComponentResource):
    vpc: aws.ec2.Vpc | None
    private_subnets: list[aws.ec2.Subnet]
    public_subnets: list[aws.ec2.Subnet]
    nat_gateways: list[aws.ec2.NatGateway]
    private_route_tables: list[aws.ec2.RouteTable]
    endpoints: dict[str, aws.ec2.VpcEndpoint]
    flow_log_group: aws.cloudwatch.LogGroup | None
    transit_gateway: aws.ec2transitgateway.TransitGateway | None
    transit_route_table: aws.ec2transitgateway.RouteTable | None
    transit_attachment: aws.ec2transitgateway.VpcAttachment | None
    vpn_log_group: aws.cloudwatch.LogGroup | None
    vpc_id: pulumi.Output[str]
    private_subnet_ids: pulumi.Output[list[str]]
    subnet_ids: dict[str, pulumi.Output[str]]  # zone -> the private subnet nodes, FSx and endpoints use

    def __init__(self, name: str, args: AwsSiteNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:network:AwsSiteNetwork", name, None, opts)
        tags = args.tags.for_component("AwsSiteNetwork")
        if args.existing is not None:
            self._existing(name, args, tags)
            return
        child = pulumi.ResourceOptions(parent=self)
        plan = aws_zone_subnets(args.cidr, args.availability_zones)

        self.vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags=tags.aws_tags({"Name": f"{tags.stack}-{tags.site}"}),
            opts=child,
        )
        aws.ec2.DefaultSecurityGroup(
            f"{name}-default-sg",
            vpc_id=self.vpc.id,
            ingress=[],
            egress=[],
            tags=tags.aws_tags({"Name": f"{tags.stack}-{tags.site}-default-closed"}),
            opts=child,
        )

        self.private_subnets = [
            aws.ec2.Subnet(
                f"{name}-private-{zone.zone}",
                vpc_id=self.vpc.id,
                cidr_block=zone.private,
                availability_zone=zone.zone,
                map_public_ip_on_launch=False,
                tags=tags.aws_tags(
                    {"Name": f"{tags.site}-private-{zone.zone}", "kubernetes.io/role/internal-elb": "1"}
                ),
                opts=child,
            )
            for zone in plan
        ]
        self.public_subnets = []
        self.nat_gateways = []
        if args.nat:
            self._nat_egress(name, plan, tags)
        self.transit_gateway = self.transit_route_table = self.transit_attachment = self.vpn_log_group = None
        if args.transit_asn is not None:
            self._transit(name, args, tags)
        self.private_route_tables = []
        for index, zone in enumerate(plan):
            routes = (
                [aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=self.nat_gateways[index].id)]
                if args.nat
                else []
            )
            # Routes stay inline (as the NAT route): a table with inline routes must not also get aws.ec2.Route
            # resources, or each would remove the other's. A route to a transit gateway needs its attachment.
            if self.transit_gateway is not None:
                routes += [
                    aws.ec2.RouteTableRouteArgs(cidr_block=cidr, transit_gateway_id=self.transit_gateway.id)
                    for cidr in args.transit_routes
                ]
            table = aws.ec2.RouteTable(
                f"{name}-private-{zone.zone}",
                vpc_id=self.vpc.id,
                routes=routes,
                tags=tags.aws_tags({"Name": f"{tags.site}-private-{zone.zone}"}),
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[self.transit_attachment] if self.transit_attachment else []
                ),
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{zone.zone}",
                subnet_id=self.private_subnets[index].id,
                route_table_id=table.id,
                opts=child,
            )
            self.private_route_tables.append(table)
        self.endpoints = {} if args.nat else self._endpoints(name, args, tags)

        self.flow_log_group = None
        if args.flow_logs:
            self._flow_logs(name, args, tags)

        self.vpc_id = self.vpc.id
        self.subnet_ids = {zone.zone: subnet.id for zone, subnet in zip(plan, self.private_subnets, strict=True)}
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in self.private_subnets])
        self.register_outputs({"vpc_id": self.vpc_id, "private_subnet_ids": self.private_subnet_ids})

    def _existing(self, name: str, args: AwsSiteNetworkArgs, tags: TagContext) -> None:
        """The network team's VPC: no VPC, subnet, NAT, route table or flow log of ours; links and endpoints in it."""
        existing = args.existing
        self.vpc = None
        self.private_subnets, self.public_subnets, self.nat_gateways, self.private_route_tables = [], [], [], []
        self.flow_log_group = None
        self.vpc_id = pulumi.Output.from_input(existing.vpc_id)
        self.subnet_ids = {
            zone: pulumi.Output.from_input(existing.subnet_ids[zone]) for zone in args.availability_zones
        }
        self.transit_gateway = self.transit_route_table = self.transit_attachment = self.vpn_log_group = None
        if args.transit_asn is not None:
            self._transit(name, args, tags)
            for table_id in existing.route_table_ids:
                for cidr in args.transit_routes:
                    # Named after the table and the range, not positions: appending a link replaces nothing.
                    aws.ec2.Route(
                        f"{name}-{table_id}-{cidr.replace('.', '-').replace('/', '-')}",
                        route_table_id=table_id,
                        destination_cidr_block=cidr,
                        transit_gateway_id=self.transit_gateway.id,
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[self.transit_attachment]),
                    )
        self.endpoints = {} if args.nat else self._endpoints(name, args, tags)
        self.private_subnet_ids = pulumi.Output.all(*self.subnet_ids.values())
        self.register_outputs({"vpc_id": self.vpc_id, "private_subnet_ids": self.private_subnet_ids})

    def _vpc_id(self, args: AwsSiteNetworkArgs) -> pulumi.Input[str]:
        return args.existing.vpc_id if args.existing is not None else self.vpc.id

    def _subnet_ids(self, args: AwsSiteNetworkArgs) -> list[pulumi.Input[str]]:
        if args.existing is not None:
            return [args.existing.subnet_ids[zone] for zone in args.availability_zones]
        return [subnet.id for subnet in self.private_subnets]

    def _transit(self, name: str, args: AwsSiteNetworkArgs, tags: TagContext) -> None:
        child = pulumi.ResourceOptions(parent=self)
        self.transit_gateway = aws.ec2transitgateway.TransitGateway(
            f"{name}-tgw",
            description=f"Lattice {tags.stack} {tags.site}: cross-site links",
            amazon_side_asn=args.transit_asn,
            # ECMP spreads a link's traffic over all its BGP tunnels; one route table, managed below, instead of
            # the default one every attachment would join unasked.
            vpn_ecmp_support="enable",
            dns_support="enable",
            default_route_table_association="disable",
            default_route_table_propagation="disable",
            auto_accept_shared_attachments="disable",
            tags=tags.aws_tags({"Name": f"{tags.stack}-{tags.site}"}),
            opts=child,
        )
        self.transit_route_table = aws.ec2transitgateway.RouteTable(
            f"{name}-tgw-routes",
            transit_gateway_id=self.transit_gateway.id,
            tags=tags.aws_tags({"Name": f"{tags.stack}-{tags.site}-links"}),
            opts=child,
        )
        self.transit_attachment = aws.ec2transitgateway.VpcAttachment(
            f"{name}-tgw-vpc",
            transit_gateway_id=self.transit_gateway.id,
            vpc_id=self._vpc_id(args),
            subnet_ids=self._subnet_ids(args),
            dns_support="enable",
            transit_gateway_default_route_table_association=False,
            transit_gateway_default_route_table_propagation=False,
            tags=tags.aws_tags({"Name": f"{tags.stack}-{tags.site}-vpc"}),
            opts=child,
        )
        # The VPC's CIDR in the table: the transit gateway routes, and announces over BGP, the site to its links.
        join_route_table(
            f"{name}-tgw-vpc", self.transit_attachment.id, self.transit_route_table.id, propagate=True, opts=child
        )
        # Tunnel and BGP logs of every VPN connection on the transit gateway.
        self.vpn_log_group = encrypted_log_group(
            f"{name}-vpn-logs",
            log_group_name=f"/aws/vpn/lattice/{tags.stack}/{tags.site}",
            retention_days=args.log_retention_days,
            kms_key_arn=args.kms_key_arn,
            tags=tags,
            parent=self,
            protect=args.protect,
        )

    def _nat_egress(self, name: str, plan, tags: TagContext) -> None:
        child = pulumi.ResourceOptions(parent=self)
        gateway = aws.ec2.InternetGateway(
            f"{name}-igw", vpc_id=self.vpc.id, tags=tags.aws_tags({"Name": f"{tags.site}-igw"}), opts=child
        )
        public_table = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=self.vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=gateway.id)],
            tags=tags.aws_tags({"Name": f"{tags.site}-public"}),
            opts=child,
        )
        for zone in plan:
            subnet = aws.ec2.Subnet(
                f"{name}-public-{zone.zone}",
                vpc_id=self.vpc.id,
                cidr_block=zone.public,
                availability_zone=zone.zone,
                map_public_ip_on_launch=False,
                tags=tags.aws_tags({"Name": f"{tags.site}-public-{zone.zone}", "kubernetes.io/role/elb": "1"}),
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{zone.zone}", subnet_id=subnet.id, route_table_id=public_table.id, opts=child
            )
            address = aws.ec2.Eip(
                f"{name}-nat-{zone.zone}",
                domain="vpc",
                tags=tags.aws_tags({"Name": f"{tags.site}-nat-{zone.zone}"}),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[gateway]),
            )
            self.public_subnets.append(subnet)
            self.nat_gateways.append(
                aws.ec2.NatGateway(
                    f"{name}-nat-{zone.zone}",
                    allocation_id=address.allocation_id,
                    subnet_id=subnet.id,
                    tags=tags.aws_tags({"Name": f"{tags.site}-nat-{zone.zone}"}),
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[gateway]),
                )
            )

    def _endpoints(self, name: str, args: AwsSiteNetworkArgs, tags: TagContext) -> dict[str, aws.ec2.VpcEndpoint]:
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            f"{name}-endpoints",
            vpc_id=self._vpc_id(args),
            description="VPC interface endpoints: HTTPS from inside the VPC",
            tags=tags.aws_tags({"Name": f"{tags.stack}-{tags.site}-endpoints"}),
            opts=child,
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-endpoints-https",
            security_group_id=group.id,
            cidr_ipv4=args.cidr,
            ip_protocol="tcp",
            from_port=HTTPS,
            to_port=HTTPS,
            description="HTTPS from the site VPC",
            tags=tags.aws_tags(),
            opts=child,
        )
        endpoints = {
            "s3": aws.ec2.VpcEndpoint(
                f"{name}-s3",
                vpc_id=self._vpc_id(args),
                service_name=f"com.amazonaws.{args.region}.s3",
                vpc_endpoint_type="Gateway",
                route_table_ids=(
                    list(args.existing.route_table_ids)
                    if args.existing is not None
                    else [table.id for table in self.private_route_tables]
                ),
                tags=tags.aws_tags({"Name": f"{tags.site}-s3"}),
                opts=child,
            )
        }
        for service in INTERFACE_ENDPOINTS:
            endpoints[service] = aws.ec2.VpcEndpoint(
                f"{name}-{service.replace('.', '-')}",
                vpc_id=self._vpc_id(args),
                service_name=f"com.amazonaws.{args.region}.{service}",
                vpc_endpoint_type="Interface",
                private_dns_enabled=True,
                subnet_ids=self._subnet_ids(args),
                security_group_ids=[group.id],
                tags=tags.aws_tags({"Name": f"{tags.site}-{service}"}),
                opts=child,
            )
        return endpoints

    def _flow_logs(self, name: str, args: AwsSiteNetworkArgs, tags: TagContext) -> None:
        child = pulumi.ResourceOptions(parent=self)
        self.flow_log_group = encrypted_log_group(
            f"{name}-flow-logs",
            log_group_name=f"/lattice/{tags.stack}/{tags.site}/vpc-flow-logs",
            retention_days=args.log_retention_days,
            kms_key_arn=args.kms_key_arn,
            tags=tags,
            parent=self,
            protect=args.protect,
        )
        role = aws.iam.Role(
            f"{name}-flow-logs",
            assume_role_policy=service_trust_policy("vpc-flow-logs.amazonaws.com"),
            tags=tags.aws_tags(),
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-flow-logs",
            role=role.id,
            policy=self.flow_log_group.arn.apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Action": ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                                "Resource": [arn, f"{arn}:*"],
                            }
                        ],
                    }
                )
            ),
            opts=child,
        )
        aws.ec2.FlowLog(
            f"{name}-flow-logs",
            vpc_id=self.vpc.id,
            traffic_type="ALL",
            log_destination_type="cloud-watch-logs",
            log_destination=self.flow_log_group.arn,
            iam_role_arn=role.arn,
            max_aggregation_interval=60,
            tags=tags.aws_tags(),
            opts=child,
        )


def join_route_table(
    name: str,
    attachment_id: pulumi.Input[str],
    table_id: pulumi.Input[str],
    *,
    propagate: bool,
    opts: pulumi.ResourceOptions,
) -> None:
    """Associate a transit gateway attachment with the links' route table and, where its routes are learned
    (the VPC, BGP connections), propagate them into it."""
    aws.ec2transitgateway.RouteTableAssociation(
        name, transit_gateway_attachment_id=attachment_id, transit_gateway_route_table_id=table_id, opts=opts
    )
    if propagate:
        aws.ec2transitgateway.RouteTablePropagation(
            name, transit_gateway_attachment_id=attachment_id, transit_gateway_route_table_id=table_id, opts=opts
        )
