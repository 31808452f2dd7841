"""Annotated domain types for the stack spec: one validator each, one fix each.

Every type here is a plain ``str``/``int`` at runtime, so components and the
policy pack read ordinary values; the validators only guard the door.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, TypeAdapter, ValidationError, WrapValidator

# The values CloudWatch Logs accepts for retentionInDays (PutRetentionPolicy).
# Anything else is rejected by AWS at apply time; we reject it at plan time.
CLOUDWATCH_RETENTION_DAYS = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)

_AWS_REGION = re.compile(r"^[a-z]{2}(-gov|-iso|-isob)?-[a-z]+-\d$")
_GCP_REGION = re.compile(r"^[a-z]+-[a-z]+\d+$")
_GCP_PROJECT = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_DNS_LABEL = re.compile(r"^[a-z]([a-z0-9-]*[a-z0-9])?$")
_IAM_ROLE_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:iam::\d{12}:role/[\w+=,.@/-]+$")
_CONFIG_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_K8S_VERSION = re.compile(r"^1\.\d{2}$")
_TAG_KEY = re.compile(r"^[\w .:/=+@-]{1,128}$")
RESERVED_TAG_PREFIX = "lattice:"


def _cidr(value: str) -> str:
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(
            f"'{value}' is not a network address in CIDR form ({exc}); "
            "write it like 10.20.0.0/16 with the host bits zero"
        ) from None
    if network.version != 4:
        raise ValueError(f"'{value}' is IPv6; site networks are IPv4 CIDR blocks such as 10.20.0.0/16")
    if network.is_link_local or network.is_loopback:
        raise ValueError(
            f"'{value}' is {'link-local' if network.is_link_local else 'loopback'} space (VPN tunnels use "
            "169.254.0.0/16 for their inside addresses); use 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"
        )
    if not (network.is_private or network.subnet_of(ipaddress.ip_network("100.64.0.0/10"))):
        raise ValueError(
            f"'{value}' is public address space; use a private range "
            "(10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16) or 100.64.0.0/10"
        )
    return str(network)


def _any_cidr(value: str) -> str:
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(
            f"'{value}' is not a network address in CIDR form ({exc}); "
            "write it like 203.0.113.0/24 with the host bits zero"
        ) from None
    return str(network)


# RFC 6996 private ASNs: what AWS transit gateways and GCP Cloud Routers accept for themselves.
PRIVATE_ASNS = ((64_512, 65_534), (4_200_000_000, 4_294_967_294))


def _asn(value: int) -> int:
    if not any(low <= value <= high for low, high in PRIVATE_ASNS):
        raise ValueError(
            f"{value} is not a private ASN; use one from 64512-65534 or 4200000000-4294967294 (RFC 6996), "
            "unique in the stack"
        )
    return value


def _public_ip(value: str) -> str:
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"'{value}' is not an IPv4 address; write it like 203.0.113.10") from None
    internal = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "127.0.0.0/8",
                "0.0.0.0/8", "224.0.0.0/3")  # fmt: skip
    if address.version != 4 or any(address in ipaddress.ip_network(block) for block in internal):
        raise ValueError(
            f"'{value}' is not a public IPv4 address; a VPN gateway's outside address must be reachable from the "
            "internet (the address the site's firewall NATs to the VPN device)"
        )
    return str(address)


def _ipv4_address(value: str) -> str:
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"'{value}' is not an IPv4 address; write it like 10.50.0.40") from None
    if address.version != 4:
        raise ValueError(f"'{value}' is IPv6; write the IPv4 address the site's network routes, like 10.50.0.40")
    return str(address)


def _aws_region(value: str) -> str:
    if not _AWS_REGION.match(value):
        raise ValueError(f"'{value}' is not an AWS region name; write it like us-east-1 or eu-west-2")
    return value


def _gcp_region(value: str) -> str:
    if not _GCP_REGION.match(value):
        raise ValueError(f"'{value}' is not a GCP region name; write it like us-central1 or europe-west4")
    return value


def _zone(value: str) -> str:
    # A zone's region is checked against its site in the cross-field validators;
    # here only the shape, which both clouds share: region + letter suffix.
    if not re.match(r"^[a-z]+(-[a-z]+)+-?\d+-?[a-z]$", value):
        raise ValueError(f"'{value}' is not a zone name; write it like us-east-1a (AWS) or us-central1-a (GCP)")
    return value


def _gcp_project(value: str) -> str:
    if not _GCP_PROJECT.match(value):
        raise ValueError(
            f"'{value}' is not a GCP project ID: 6-30 characters, lowercase letters, digits and "
            "hyphens, starting with a letter (the ID, not the display name)"
        )
    return value


def _dns_label(value: str) -> str:
    if not _DNS_LABEL.match(value) or len(value) > 20:
        raise ValueError(
            f"'{value}' must be a DNS label of at most 20 characters: lowercase letters, digits "
            "and '-', starting with a letter (it becomes part of every resource name)"
        )
    return value


RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _namespace(value: str) -> str:
    if not _DNS_LABEL.match(value) or len(value) > 63:
        raise ValueError(
            f"'{value}' is not a Kubernetes namespace name: at most 63 lowercase letters, "
            "digits and '-', starting with a letter"
        )
    if value in RESERVED_NAMESPACES or value.startswith("kube-"):
        raise ValueError(f"'{value}' is a system namespace; give the team a namespace of its own")
    return value


def _retention_days(value: int) -> int:
    if value not in CLOUDWATCH_RETENTION_DAYS:
        allowed = ", ".join(str(d) for d in CLOUDWATCH_RETENTION_DAYS)
        raise ValueError(f"{value} is not a retention CloudWatch Logs accepts; pick one of {allowed}")
    return value


def _iam_role_arn(value: str) -> str:
    if not _IAM_ROLE_ARN.match(value):
        raise ValueError(
            f"'{value}' is not an IAM role ARN; write it like arn:aws:iam::123456789012:role/platform-admin"
        )
    return value


def _config_key(value: str) -> str:
    if not _CONFIG_KEY.match(value):
        # Never echo it: people paste the kubeconfig itself here, and errors end up in CI logs.
        shown = f"'{value}'" if len(value) <= 40 and "\n" not in value else "this value"
        raise ValueError(
            f"{shown} is not a config key name; use letters, digits and '_' "
            "(set it with `pulumi config set --secret lattice:<key>`)"
        )
    return value


def _k8s_version(value: str) -> str:
    if not _K8S_VERSION.match(value):
        raise ValueError(f"'{value}' is not a Kubernetes minor version; write it as a quoted string like \"1.33\"")
    return value


def _tag_key(value: str) -> str:
    if value.lower().startswith("aws:"):
        raise ValueError(f"tag key '{value}' uses the 'aws:' prefix, which AWS reserves for itself; rename the key")
    if value.startswith(RESERVED_TAG_PREFIX):
        raise ValueError(
            f"tag key '{value}' uses the reserved prefix '{RESERVED_TAG_PREFIX}', which Lattice sets "
            "itself; rename the key"
        )
    if not _TAG_KEY.match(value):
        raise ValueError(f"tag key '{value}' must be 1-128 letters, digits, spaces or _ . : / = + - @")
    return value


def _parameter_count(value: float | int | str) -> float:
    # YAML 1.1 reads 70e9 as a string (it wants 7.0e+10), so accept the forms people write.
    text = str(value).strip().lower().replace("_", "")
    multiplier = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}.get(text[-1:], 1)
    try:
        count = float(text[:-1] if multiplier != 1 else text) * multiplier
    except ValueError:
        raise ValueError(f"'{value}' is not a parameter count; write 70B, 7e9 or 7000000000") from None
    if count <= 0:
        raise ValueError(f"'{value}' must be a positive parameter count")
    return count


def _reservation_id(value: str) -> str:
    if not re.match(r"^cr-[0-9a-f]{8,17}$", value):
        raise ValueError(f"'{value}' is not a capacity reservation or block ID; write it like cr-0123456789abcdef0")
    return value


def _aws_id(prefix: str, what: str):
    pattern = re.compile(rf"^{prefix}-(?:[0-9a-f]{{8}}|[0-9a-f]{{17}})$")

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"'{value}' is not {what} ID; write it like {prefix}-0123456789abcdef0")
        return value

    return check


# https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html: 1-100 characters, a letter or digit
# first, then letters, digits, hyphens and underscores.
_EKS_CLUSTER_NAME = re.compile(r"^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$")
# A key ARN, not an alias: a key policy and grants name the key itself (multi-Region keys are mrk-…).
_KMS_KEY_ARN = re.compile(
    r"^arn:aws[a-z-]*:kms:[a-z]{2}(?:-[a-z]+)+-\d:\d{12}:key/(?:mrk-[0-9a-f]{32}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})$"
)


def _eks_cluster_name(value: str) -> str:
    if not _EKS_CLUSTER_NAME.match(value):
        raise ValueError(
            f"'{value}' is not an EKS cluster name (letters, digits, '-' and '_', up to 100, a letter or digit "
            "first); use the name `aws eks list-clusters` shows"
        )
    return value


def _kms_key_arn(value: str) -> str:
    if not _KMS_KEY_ARN.match(value):
        raise ValueError(
            f"'{value}' is not a KMS key ARN; write the key's ARN (not an alias) like "
            "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
        )
    return value


# Compute Engine resource names (networks, subnetworks, secondary ranges): RFC 1035, 1-63 characters.
_GCE_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
# GKE: 1-40 characters, lowercase letters, digits and hyphens, a letter first, no hyphen last.
_GKE_CLUSTER_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
_CLOUD_KMS_KEY = re.compile(
    r"^projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/locations/[a-z0-9-]+/keyRings/[A-Za-z0-9_-]{1,63}"
    r"/cryptoKeys/[A-Za-z0-9_-]{1,63}$"
)
# S3: 3-63 lowercase letters, digits, dots and hyphens, a letter or digit at both ends; GCS adds underscores.
_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$")


def _gce_name(value: str) -> str:
    if not _GCE_NAME.match(value):
        raise ValueError(
            f"'{value}' is not a Compute Engine name (a lowercase letter, then up to 62 lowercase letters, digits or "
            "hyphens, not ending in a hyphen); give the name, not its URL"
        )
    return value


def _gke_cluster_name(value: str) -> str:
    if not _GKE_CLUSTER_NAME.match(value):
        raise ValueError(
            f"'{value}' is not a GKE cluster name (a lowercase letter, then up to 39 lowercase letters, digits or "
            "hyphens); use the name `gcloud container clusters list` shows"
        )
    return value


def _cloud_kms_key(value: str) -> str:
    if not _CLOUD_KMS_KEY.match(value):
        raise ValueError(
            f"'{value}' is not a Cloud KMS key name; write it like "
            "projects/my-project/locations/us-central1/keyRings/my-ring/cryptoKeys/my-key"
        )
    return value


def _bucket_name(value: str) -> str:
    if not _BUCKET_NAME.match(value) or ".." in value:
        raise ValueError(
            f"'{value}' is not a bucket name (3-63 lowercase letters, digits, '.', '-' or '_', a letter or digit at "
            "both ends); give the bucket's name, not its ARN or URL"
        )
    return value


_LABEL_NAME = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)$")
_LABEL_PREFIX = re.compile(r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$")


def _label_key(value: str) -> str:
    prefix, _, name = value.rpartition("/")
    if not _LABEL_NAME.match(name) or (prefix and not _LABEL_PREFIX.match(prefix)):
        raise ValueError(
            f"'{value}' is not a Kubernetes label key: an optional DNS prefix and '/', then at most 63 letters, "
            "digits, '-', '_' or '.', starting and ending with a letter or digit"
        )
    return value


def _label_value(value: str) -> str:
    if value and not _LABEL_NAME.match(value):
        raise ValueError(
            f"'{value}' is not a Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return value


Cidr = Annotated[str, AfterValidator(_cidr)]
Asn = Annotated[int, AfterValidator(_asn)]
GcpMember = Annotated[
    str,
    Field(
        pattern=r"^(user|group):[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$",
        description="user:alice@example.edu or group:climate-ml@example.edu",
    ),
]
PublicIp = Annotated[str, AfterValidator(_public_ip)]
Ipv4Address = Annotated[str, AfterValidator(_ipv4_address)]
LabelKey = Annotated[str, AfterValidator(_label_key)]
LabelValue = Annotated[str, AfterValidator(_label_value)]
ParameterCount = Annotated[float | int | str, AfterValidator(_parameter_count)]
ReservationId = Annotated[str, AfterValidator(_reservation_id)]
AllowedCidr = Annotated[str, AfterValidator(_any_cidr)]
VpcId = Annotated[str, AfterValidator(_aws_id("vpc", "a VPC"))]
SubnetId = Annotated[str, AfterValidator(_aws_id("subnet", "a subnet"))]
RouteTableId = Annotated[str, AfterValidator(_aws_id("rtb", "a route table"))]
SecurityGroupId = Annotated[str, AfterValidator(_aws_id("sg", "a security group"))]
FsxFileSystemId = Annotated[str, AfterValidator(_aws_id("fs", "an FSx file system"))]
EksClusterName = Annotated[str, AfterValidator(_eks_cluster_name)]
KmsKeyArn = Annotated[str, AfterValidator(_kms_key_arn)]
GceName = Annotated[str, AfterValidator(_gce_name)]
GkeClusterName = Annotated[str, AfterValidator(_gke_cluster_name)]
CloudKmsKeyName = Annotated[str, AfterValidator(_cloud_kms_key)]
BucketName = Annotated[str, AfterValidator(_bucket_name)]
AwsRegion = Annotated[str, AfterValidator(_aws_region)]
GcpRegion = Annotated[str, AfterValidator(_gcp_region)]
Zone = Annotated[str, AfterValidator(_zone)]
GcpProjectId = Annotated[str, AfterValidator(_gcp_project)]
SiteName = Annotated[str, AfterValidator(_dns_label)]
TeamName = Annotated[str, AfterValidator(_dns_label)]
Namespace = Annotated[str, AfterValidator(_namespace)]
RetentionDays = Annotated[int, AfterValidator(_retention_days)]
IamRoleArn = Annotated[str, AfterValidator(_iam_role_arn)]
ConfigKey = Annotated[str, AfterValidator(_config_key)]
KubernetesVersion = Annotated[str, AfterValidator(_k8s_version)]
TagKey = Annotated[str, AfterValidator(_tag_key)]
TagValue = Annotated[str, Field(max_length=256)]
NonEmpty = Annotated[str, Field(min_length=1, max_length=256)]


def per_site(inner: Any) -> Any:
    """One value for every site a team is on, or ``{site: value}`` (unlisted sites take the default).

    Validated here rather than as a plain union so a wrong value gets one message naming the site, not one
    per union member (``constrained-int``, ``dict[…]``) as pydantic reports unions.
    """
    scalar = TypeAdapter(inner)
    site = TypeAdapter(SiteName)

    def validate(value: Any, handler: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                out[_checked(site, key, f"site name {key!r}")] = _checked(scalar, item, f"the value for {key!r}")
            return out
        return _checked(scalar, value, "the value")

    return Annotated[inner | dict[SiteName, inner], WrapValidator(validate)]


def _checked(adapter: TypeAdapter, value: Any, what: str) -> Any:
    try:
        return adapter.validate_python(value, strict=isinstance(value, bool))
    except ValidationError as exc:
        error = exc.errors()[0]
        reason = error["msg"].removeprefix("Value error, ")
        bounds = {"greater_than_equal": "at least {ge}", "greater_than": "more than {gt}",
                  "less_than_equal": "at most {le}", "less_than": "less than {lt}"}  # fmt: skip
        if error["type"] == "literal_error":
            reason = f"use one of {error['ctx']['expected']}"
        elif error["type"] in ("int_parsing", "int_type", "int_from_float"):
            reason = "must be a whole number"
        elif error["type"] in bounds:
            reason = "must be " + bounds[error["type"]].format(**error["ctx"])
        got = "" if error["type"] == "value_error" else f" (got {value!r})"
        raise ValueError(
            f"{what}: {reason}{got}; give one value for every site the team is on, or one per site: "
            "{site-name: value}"
        ) from None
