"""Every taggable resource carries the standard Lattice tags / labels."""

from components.tagging import AWS_PREFIX, GCP_PREFIX, K8S_PREFIX, STANDARD_KEYS, gcp_label_key, tag_property

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

TAGGABLE_EXAMPLES = (
    "aws:ec2/vpc:Vpc",
    "aws:kms/key:Key",
    "gcp:container/cluster:Cluster",
    "kubernetes:core/v1:Namespace",
)


def expected_keys(type_token: str) -> tuple[str | None, list[str]]:
    prop = tag_property(type_token)
    if prop is None:
        return None, []
    if prop == "tags":
        return "tags", [f"{AWS_PREFIX}{k}" for k in STANDARD_KEYS]
    if prop == "metadata":
        return "metadata.labels", [f"{K8S_PREFIX}{k}" for k in STANDARD_KEYS]
    return prop, [gcp_label_key(f"{GCP_PREFIX}{k}") for k in STANDARD_KEYS]


class _AnyTaggable(tuple):
    """Matches every resource type the installed SDKs say carries tags or labels."""

    def __contains__(self, type_token: object) -> bool:
        return isinstance(type_token, str) and tag_property(type_token) is not None


@resource_rule(
    name="required-tags",
    description="Taggable resources carry the stack, site, component, environment, owner, cost-centre and "
    "data-classification tags (AWS tags, GCP and Kubernetes labels).",
    severity="low",
    remediation="Create resources through Lattice components (they apply components.tagging.TagContext), or "
    "add the lattice:* tags / lattice-* labels yourself.",
    resource_types=_AnyTaggable(TAGGABLE_EXAMPLES),
    counterexample=Counterexample("aws:kms/key:Key", put("tags", value={"Name": "hand-made"})),
    category="tagging",
)
def required_tags(args):
    where, keys = expected_keys(args.resource_type)
    if where is None:
        return
    present = get(args.props, *where.split("."), default={})
    missing = [key for key in keys if not get(present, key)]
    if missing:
        yield f"missing {where} {', '.join(missing)}"
