"""Stack spec: the happy path, defaults, all-errors-at-once, line numbers, domain types."""

from __future__ import annotations

import pytest

from lattice.components.spec import SpecError, load_stack_file, parse_spec
from lattice.components.spec.types import CLOUDWATCH_RETENTION_DAYS
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, ROOT, spec_with, write_stack


def test_dev_stack_loads_with_its_values():
    stack = load_stack_file(ROOT / "stacks" / "Pulumi.dev.yaml")
    assert stack.stack == "dev"
    assert stack.spec.environment == "dev"
    assert [s.name for s in stack.spec.sites] == ["aws-use1", "grid-hpc"]
    assert [s.provider for s in stack.spec.sites] == ["aws", "kubernetes"]
    assert stack.spec.sites[0].network.availability_zones == ["us-east-1a", "us-east-1b"]
    assert stack.spec.protects_stateful is False


def test_prod_stack_loads_and_keeps_its_secret_key_secret():
    stack = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml")
    assert {s.tier for s in stack.spec.sites} == {"cloud", "grid", "edge"}
    assert {s.provider for s in stack.spec.sites} == {"aws", "gcp", "kubernetes"}
    assert stack.secret_keys == [
        "lattice:beamlineKubeconfig",
        "lattice:ldapBindPassword",
        "lattice:pagerdutyCloudwatchKey",
        "lattice:pagerdutyRoutingKey",
        "lattice:slackWebhook",
        "lattice:slurmDbPassword",
    ]
    assert stack.spec.protects_stateful is True


def test_defaults_are_opinionated_and_overridable():
    spec = parse_spec(spec_with(AWS_SITE), "inline")
    site = spec.sites[0]
    assert site.audit.log_retention_days == 365
    assert site.encryption.key_rotation_days == 365
    assert site.network.nat is True and site.network.flow_logs is True
    assert site.kubernetes.endpoint_public_access is False
    override = spec_with({**AWS_SITE, "audit": {"log_retention_days": 731}}, protect_stateful=True)
    spec = parse_spec(override, "inline")
    assert spec.sites[0].audit.log_retention_days == 731
    assert spec.protects_stateful is True
    assert parse_spec(spec_with(AWS_SITE, environment="prod", protect_stateful=False), "x").protects_stateful is False


def test_every_error_is_reported_at_once(tmp_path):
    bad_site = {**AWS_SITE, "region": "useast1", "network": {"cidr": "300.1.0.0/16", "availability_zones": ["x"]}}
    path = write_stack(tmp_path, spec_with(bad_site, environment="qa", colour="blue"))
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    paths = {issue.path for issue in caught.value.issues}
    assert paths >= {
        "environment",
        "colour",
        "sites[0].region",
        "sites[0].network.cidr",
        "sites[0].network.availability_zones[0]",
    }


def test_cross_field_errors_are_all_reported_too(tmp_path):
    grid = {**GRID_SITE, "network": {"cidr": "10.20.0.0/16"}}
    edge = {**GRID_SITE, "name": "grid-hpc", "tier": "edge", "network": {"cidr": "10.21.0.0/16"}}
    path = write_stack(tmp_path, spec_with(AWS_SITE, grid, edge))
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    assert [(i.path, i.message.split(";")[0]) for i in caught.value.issues] == [
        ("sites[2].name", "site name 'grid-hpc' is already used by sites[1]"),
        ("sites[1].network.cidr", "10.20.0.0/16 overlaps 10.20.0.0/16 of sites[0] ('aws-use1')"),
    ]


def test_report_points_at_the_yaml_line(tmp_path):
    path = write_stack(tmp_path, spec_with({**AWS_SITE, "region": "mars-1"}))
    lines = path.read_text().splitlines()
    region_line = next(i for i, line in enumerate(lines, start=1) if "mars-1" in line)
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    assert f"sites[0].region  ({path}:{region_line})" in str(caught.value)


def test_missing_key_points_at_its_parent_line(tmp_path):
    site = {k: v for k, v in AWS_SITE.items() if k != "region"}
    path = write_stack(tmp_path, spec_with(site))
    lines = path.read_text().splitlines()
    site_line = next(i for i, line in enumerate(lines, start=1) if "name: aws-use1" in line)
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    assert f"sites[0].region  ({path}:{site_line})" in str(caught.value)


def test_file_name_must_name_the_stack(tmp_path):
    path = tmp_path / "dev.yaml"
    path.write_text("config: {}\n")
    with pytest.raises(SpecError, match=r"stack files are named Pulumi\.<stack>\.yaml"):
        load_stack_file(path)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(SpecError, match="cannot read the stack file"):
        load_stack_file(tmp_path / "Pulumi.gone.yaml")


def test_secret_kubeconfig_is_accepted_when_set_as_secret(tmp_path):
    grid = {**GRID_SITE, "kubernetes": {"kubeconfig_secret": "gridKubeconfig"}}
    path = write_stack(tmp_path, spec_with(grid), **{"lattice:gridKubeconfig": {"secure": "v1:abc"}})
    assert load_stack_file(path).secret_keys == ["lattice:gridKubeconfig"]


def test_under_pulumi_up_secret_presence_is_not_checked_from_the_file():
    from lattice.components.spec import ValidationContext

    grid = {**GRID_SITE, "kubernetes": {"kubeconfig_secret": "gridKubeconfig"}}
    spec = parse_spec(spec_with(grid), "stacks/Pulumi.x.yaml", ValidationContext(knows_config=False))
    assert spec.sites[0].kubernetes.kubeconfig_secret == "gridKubeconfig"


def test_gcp_site_defaults():
    site = parse_spec(spec_with(GCP_SITE), "x").sites[0]
    assert site.kubernetes.release_channel == "REGULAR"
    assert site.kubernetes.private_endpoint is True


@pytest.mark.parametrize("days", CLOUDWATCH_RETENTION_DAYS)
def test_every_cloudwatch_retention_value_is_accepted(days):
    spec = parse_spec(spec_with({**AWS_SITE, "audit": {"log_retention_days": days}}), "x")
    assert spec.sites[0].audit.log_retention_days == days


@pytest.mark.parametrize(
    ("region", "ok"),
    [("us-east-1", True), ("eu-west-2", True), ("us-gov-west-1", True), ("us-east", False), ("US-EAST-1", False)],
)
def test_aws_region_format(region, ok):
    site = {**AWS_SITE, "region": region, "network": {**AWS_SITE["network"], "availability_zones": []}}
    site["network"]["availability_zones"] = [f"{region}a", f"{region}b"]
    if ok:
        assert parse_spec(spec_with(site), "x").sites[0].region == region
    else:
        with pytest.raises(SpecError) as caught:
            parse_spec(spec_with(site), "x")
        assert caught.value.issues[0].path == "sites[0].region"


@pytest.mark.parametrize(
    ("cidr", "fragment"),
    [
        ("10.0.0.0/33", "not a network address"),
        ("fd00::/8", "is IPv6"),
        ("52.0.0.0/16", "public address space"),
    ],
)
def test_cidr_domain_type(cidr, fragment):
    with pytest.raises(SpecError) as caught:
        parse_spec(spec_with({**AWS_SITE, "network": {**AWS_SITE["network"], "cidr": cidr}}), "x")
    assert fragment in caught.value.issues[0].message


def test_carrier_grade_nat_space_is_allowed():
    site = {**GRID_SITE, "network": {"cidr": "100.64.0.0/16"}}
    assert parse_spec(spec_with(site), "x").sites[0].network.cidr == "100.64.0.0/16"


@pytest.mark.parametrize("stack", ["Prod", "my_stack", "a.b", "x" * 41])
def test_stack_names_must_suit_cloud_resource_names(tmp_path, stack):
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text("config: {}\n")
    with pytest.raises(SpecError, match="lowercase letters, digits or '-'"):
        load_stack_file(path)


def test_gke_cluster_names_must_fit(tmp_path):
    path = write_stack(tmp_path, spec_with({**GCP_SITE, "name": "gcp-us-central1-main"}), stack="x" * 25)
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    assert caught.value.issues[0].path == "sites[0].name"
    assert "GKE allows 40" in caught.value.issues[0].message


@pytest.mark.parametrize(("capacity", "warned"), [("on-demand", True), ("spot", False), ("flex-start", False)])
def test_small_a3_high_outside_spot_or_flex_start_is_a_warning(capacity, warned):
    pool = {"name": "small", "machine_type": "a3-highgpu-4g", "max_nodes": 2, "capacity": {"type": capacity}}
    found: list = []
    parse_spec(spec_with({**GCP_SITE, "gpu_pools": [pool]}), "x", warnings=found)
    expected = [
        (
            "sites[0].gpu_pools[0].capacity.type",
            "Google offers a3-highgpu-4g only as spot or flex-start VMs, so this on-demand pool may never get nodes; "
            "set capacity: {type: spot}",
        )
    ]
    assert [(w.path, w.message) for w in found] == (expected if warned else [])


def aws_site_in(region: str, **system_nodes) -> dict:
    """AWS_SITE moved to ``region`` (its zones a and b), with ``system_nodes`` keys when given."""
    site = {**AWS_SITE, "name": "aws-site", "region": region}
    site["network"] = {"cidr": "10.20.0.0/16", "availability_zones": [f"{region}a", f"{region}b"]}
    if system_nodes:
        site["kubernetes"] = AWS_SITE["kubernetes"] | {"system_nodes": system_nodes}
    return site


@pytest.mark.parametrize(("region", "expected"), [("ca-west-1", "m6i.xlarge"), ("me-south-1", "m6i.xlarge")])
def test_a_site_in_a_region_without_m7i_gets_system_nodes_the_region_offers(region, expected):
    """On the previous main every AWS site defaulted to m7i.xlarge, which ca-west-1 and me-south-1 do not offer: the
    plan looked fine and `pulumi up` failed creating the node group. Unset, the type is now the region's default,
    also when other system_nodes keys are set; a region that offers m7i keeps it, so no existing node group there
    changes type."""
    usw2 = aws_site_in("us-west-2") | {"name": "aws-usw2"}
    usw2["network"]["cidr"] = "10.21.0.0/16"
    usw2["kubernetes"] = {"runner_cidrs": ["10.21.0.0/16"]}
    spec = parse_spec(spec_with(aws_site_in(region), usw2), "inline")
    assert spec.sites[0].kubernetes.system_nodes.instance_type == expected
    assert spec.sites[1].kubernetes.system_nodes.instance_type == "m7i.xlarge"
    spec = parse_spec(spec_with(aws_site_in(region, nodes=3)), "inline")
    assert (spec.sites[0].kubernetes.system_nodes.instance_type, spec.sites[0].kubernetes.system_nodes.nodes) == (
        expected,
        3,
    )
    # A type the user names is theirs.
    spec = parse_spec(spec_with(aws_site_in(region, instance_type="m5.2xlarge")), "inline")
    assert spec.sites[0].kubernetes.system_nodes.instance_type == "m5.2xlarge"


def test_a_system_node_type_of_a_family_the_region_does_not_offer_is_refused(tmp_path):
    """An explicit m7i type in me-south-1 would fail at `pulumi up` as the default did: the stack file is refused at
    the key, saying why and what to do (on the previous main it planned)."""
    path = write_stack(tmp_path, spec_with(aws_site_in("me-south-1", instance_type="m7i.2xlarge")))
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    [issue] = caught.value.issues
    assert issue.path == "sites[0].kubernetes.system_nodes.instance_type"
    assert issue.message == (
        "EC2 offers no m7i type in me-south-1 (its DescribeInstanceTypeOfferings and the EC2 pricing feed list none), "
        "so the node group would fail at `pulumi up`; remove the key (Lattice then uses m6i.xlarge there) or name "
        "another type the region offers"
    )


def test_an_m6i_system_node_type_in_a_region_without_m6i_is_refused(tmp_path):
    """m6i, the fallback family, is itself offered in no size in ap-southeast-4 and eu-south-2 (moto's offerings and
    the EC2 pricing feed): an explicit m6i type there would fail at `pulumi up` creating the node group. It is refused
    at the key, naming the region's own default (on the previous main it planned)."""
    path = write_stack(tmp_path, spec_with(aws_site_in("eu-south-2", instance_type="m6i.xlarge")))
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    [issue] = caught.value.issues
    assert issue.path == "sites[0].kubernetes.system_nodes.instance_type"
    assert issue.message.startswith("EC2 offers no m6i type in eu-south-2 ")
    assert "remove the key (Lattice then uses m7i.xlarge there)" in issue.message
