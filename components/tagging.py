"""One tag / label contract for every taggable resource.

Standard keys identify the stack, site, component, environment, owner, cost centre and
data classification. User tags (stack-wide, then per site) are merged in; the standard
keys are reserved (the spec rejects user keys with the ``lattice:`` prefix), so the
contract cannot be overridden by accident.

AWS tags keep the ``lattice:`` keys and free-form values. GCP labels and Kubernetes
labels have strict alphabets, so keys and values are sanitised for each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import import_module

from .sdk_table import RESOURCES

STANDARD_KEYS = ("stack", "site", "component", "environment", "owner", "cost-centre", "data-classification")
AWS_PREFIX = "lattice:"
GCP_PREFIX = "lattice-"
K8S_PREFIX = "lattice.dev/"

_GCP_ALLOWED = re.compile(r"[^a-z0-9_-]")
_K8S_ALLOWED = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class TagContext:
    """The values behind the standard keys, plus user tags, for one place in the stack."""

    stack: str
    environment: str
    owner: str
    cost_centre: str
    data_classification: str
    site: str = ""
    component: str = ""
    user_tags: dict[str, str] = field(default_factory=dict)

    def for_site(self, site: str, site_tags: dict[str, str]) -> TagContext:
        return replace(self, site=site, user_tags={**self.user_tags, **site_tags})

    def for_component(self, component: str) -> TagContext:
        return replace(self, component=component)

    def standard(self) -> dict[str, str]:
        values = (
            self.stack,
            self.site or "stack",
            self.component or "stack",
            self.environment,
            self.owner,
            self.cost_centre,
            self.data_classification,
        )
        return dict(zip(STANDARD_KEYS, values, strict=True))

    def aws_tags(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        standard = {f"{AWS_PREFIX}{k}": v for k, v in self.standard().items()}
        return {**self.user_tags, **(extra or {}), **standard}

    def gcp_labels(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        user = {gcp_label_key(k): gcp_label_value(v) for k, v in {**self.user_tags, **(extra or {})}.items()}
        standard = {gcp_label_key(f"{GCP_PREFIX}{k}"): gcp_label_value(v) for k, v in self.standard().items()}
        return {**user, **standard}

    def k8s_labels(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        standard = {f"{K8S_PREFIX}{k}": k8s_label_value(v) for k, v in self.standard().items()}
        user = {k8s_label_key(k): k8s_label_value(v) for k, v in {**self.user_tags, **(extra or {})}.items()}
        return {**user, "app.kubernetes.io/managed-by": "lattice", **standard}


def gcp_label_key(key: str) -> str:
    """GCP label keys: 1-63 chars of [a-z0-9_-], starting with a lowercase letter."""
    cleaned = _GCP_ALLOWED.sub("_", key.lower())
    if not cleaned or not cleaned[0].isalpha():
        cleaned = f"k{cleaned}"
    return cleaned[:63]


def gcp_label_value(value: str) -> str:
    """GCP label values: 0-63 chars of [a-z0-9_-]."""
    return _GCP_ALLOWED.sub("_", value.lower())[:63]


def k8s_label_key(key: str) -> str:
    """Kubernetes label names: at most 63 chars of [A-Za-z0-9_.-], alphanumeric at both ends."""
    return _k8s_trim(_K8S_ALLOWED.sub("-", key)) or "key"


def k8s_label_value(value: str) -> str:
    return _k8s_trim(_K8S_ALLOWED.sub("_", value))


def _k8s_trim(text: str) -> str:
    return text[:63].strip("-_.")


# --- which inputs of which resource types carry tags / labels ----------------------------
# Read from the pinned SDKs rather than from a hand-kept list, so a new resource type is covered the day a
# component starts using it, under whatever name its provider gives the field. The facts are generated into
# components/sdk_table.py (a test fails when the installed SDKs say otherwise): deciding them by importing the SDK
# modules cost `lattice check` 4 s.

_LABELS_LIKE = re.compile(r"^(?:\w+_)?(?:tags|labels)$")
_STRING_MAP = "Mapping[str, pulumi.Input[_builtins.str]]"

# Labels-like inputs that hold something other than the resource's own metadata, with the words of the SDK's own
# documentation of the field that say so (tests/components/test_tagging.py reads them there) and why the contract
# does not apply. Every other labels-like input of a type Lattice plans carries the standard keys.
NOT_METADATA: dict[tuple[str, str], tuple[str, str]] = {
    ("aws:eks/nodeGroup:NodeGroup", "labels"): (
        "Key-value map of Kubernetes labels",
        "the Kubernetes labels of the group's nodes, which pods select them by (lattice.dev/pool), not AWS tags",
    ),
    ("gcp:filestore/instance:Instance", "tags"): (
        "A map of resource manager tags",
        "Resource Manager tag bindings (tagKeys/… to tagValues/… IDs, granted by IAM), not labels",
    ),
    ("gcp:monitoring/notificationChannel:NotificationChannel", "labels"): (
        "Configuration fields that define the channel and its behavior",
        "the channel's configuration its descriptor defines (an email address); its labels are user_labels",
    ),
}


def labels_like(package: str, parameter: str, annotation: str) -> bool:
    """Whether an SDK input (its Python name and type annotation) is labels-like: a Kubernetes resource's
    ``metadata`` (labels inside), or a string-to-string map named ``tags``, ``labels``, ``*_tags`` or ``*_labels``."""
    if package == "kubernetes":
        return parameter == "metadata"
    return bool(_LABELS_LIKE.match(parameter)) and _STRING_MAP in annotation and "Sequence[" not in annotation


SDK_PACKAGES = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "kubernetes": "pulumi_kubernetes"}


def sdk_module_name(type_token: str) -> str:
    """The SDK submodule a resource type token lives in: ``aws:ec2/vpc:Vpc`` -> ``ec2``,
    ``kubernetes:rbac.authorization.k8s.io/v1:Role`` -> ``rbac.v1``, ``kubernetes:core/v1:Namespace`` -> ``core.v1``."""
    package, _, rest = type_token.partition(":")
    module_path = rest.partition(":")[0]
    if package == "kubernetes":
        group, _, version = module_path.partition("/")
        return f"{group.split('.')[0]}.{version}"
    return module_path.split("/")[0]


@cache
def sdk_class(type_token: str) -> type | None:
    """The installed SDK's class for a resource type token, or None (components, providers). Imports the SDK
    module: for tests and the table's generator; everything else asks the table."""
    import pulumi

    package = type_token.partition(":")[0]
    if package not in SDK_PACKAGES:
        return None
    try:
        module = import_module(f"{SDK_PACKAGES[package]}.{sdk_module_name(type_token)}")
        cls = getattr(module, type_token.rpartition(":")[2])
    except (ImportError, AttributeError):
        return None
    # The provider's own components (kubernetes:kustomize/v2:Directory, yaml/v2:ConfigFile) are no resource of
    # their own: what they render is.
    return cls if isinstance(cls, type) and issubclass(cls, pulumi.CustomResource) else None


def is_sdk_resource(type_token: str) -> bool:
    """Whether the pinned SDKs define a resource of this type token."""
    return type_token in RESOURCES


def takes_name(type_token: str) -> bool:
    """Whether the resource type has a ``name`` input (the provider names it after that, else auto-names it)."""
    return RESOURCES.get(type_token, ((), False))[1]


def labels_like_properties(type_token: str) -> tuple[str, ...]:
    """Every labels-like camelCase input of a resource type token, as the pinned SDK has it (metadata or not)."""
    return RESOURCES.get(type_token, ((), False))[0]


def label_properties(type_token: str) -> tuple[str, ...]:
    """The camelCase inputs that carry a resource type's tags / labels: its labels-like inputs but those
    ``NOT_METADATA`` names. Empty when it has none.

    ``aws:ec2/vpc:Vpc`` -> ``("tags",)``; ``gcp:container/cluster:Cluster`` -> ``("resourceLabels",)``;
    ``gcp:monitoring/alertPolicy:AlertPolicy`` -> ``("userLabels",)``; ``aws:fsx/lustreFileSystem:LustreFileSystem``
    -> ``("finalBackupTags", "tags")``; ``kubernetes:core/v1:Namespace`` -> ``("metadata",)`` (labels inside);
    ``aws:kms/alias:Alias`` -> ``()``.
    """
    return tuple(prop for prop in labels_like_properties(type_token) if (type_token, prop) not in NOT_METADATA)
