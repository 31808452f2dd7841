"""Every taggable resource carries the standard Lattice tags / labels."""

from lattice.components.tagging import (
    AWS_PREFIX,
    GCP_PREFIX,
    K8S_PREFIX,
    STANDARD_KEYS,
    gcp_label_key,
    label_properties,
)

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

TAGGABLE_EXAMPLES = (
    "aws:ec2/vpc:Vpc",
    "aws:kms/key:Key",
    "gcp:container/cluster:Cluster",
    "kubernetes:core/v1:Namespace",
)


def expected_keys(type_token: str) -> list[tuple[str, list[str]]]:
    """Where the standard keys go on a resource of this type, and which: one entry per input that carries its
    tags / labels (``lattice.components.tagging.label_properties``; an FSx file system's tags and its final
    backup's)."""
    package = type_token.partition(":")[0]
    expected = []
    for prop in label_properties(type_token):
        if package == "kubernetes":
            expected.append(("metadata.labels", [f"{K8S_PREFIX}{k}" for k in STANDARD_KEYS]))
        elif package == "aws":
            expected.append((prop, [f"{AWS_PREFIX}{k}" for k in STANDARD_KEYS]))
        else:
            expected.append((prop, [gcp_label_key(f"{GCP_PREFIX}{k}") for k in STANDARD_KEYS]))
    return expected


class _AnyTaggable(tuple):
    """Matches every resource type the installed SDKs say carries tags or labels."""

    def __contains__(self, type_token: object) -> bool:
        return isinstance(type_token, str) and bool(label_properties(type_token))


@resource_rule(
    name="required-tags",
    description="Taggable resources carry the stack, site, component, environment, owner, cost-centre and "
    "data-classification tags (AWS tags, GCP and Kubernetes labels).",
    severity="low",
    fix="`owner`, `cost_centre` and `data_classification` (and `tags`) at the top of the stack file tag everything "
    "Lattice makes",
    remediation="Create resources through Lattice components (they apply lattice.components.tagging.TagContext), or "
    "add the lattice:* tags / lattice-* labels yourself.",
    resource_types=_AnyTaggable(TAGGABLE_EXAMPLES),
    counterexample=Counterexample("aws:kms/key:Key", put("tags", value={"Name": "hand-made"})),
    category="tagging",
)
def required_tags(args):
    for where, keys in expected_keys(args.resource_type):
        present = get(args.props, *where.split("."), default={})
        missing = [key for key in keys if not get(present, key)]
        if missing:
            yield f"missing {where} {', '.join(missing)}"
