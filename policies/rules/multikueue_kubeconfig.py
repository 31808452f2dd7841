"""MultiKueue reaches its workers with kubeconfigs kept as secrets, of the kind Kueue accepts.

A MultiKueueCluster names a Secret in kueue-system whose ``kubeconfig`` key holds a worker's credentials: a
cluster-wide bearer token. ``lattice check`` plans redact every Pulumi secret, so a kubeconfig seen there in plain
text never was one (CrossGuard hands policies secrets decrypted and unmarked, pulumi/pulumi-policy#241, so there
the rule judges only what the kubeconfig holds). A visible kubeconfig is also held to what Kueue 0.19.2's manager
accepts (multikueuecluster.go, validateKubeconfig): no exec plugin, token file or CA file path.
"""

import base64
import json

import yaml

from lattice.components.platform.kueue_api import KUBECONFIG_KEY, KUEUE_NAMESPACE, kueue_type

from ..mutations import put
from ..props import as_list, get, of_type
from ..registry import Counterexample, stack_rule

CLUSTER = kueue_type("MultiKueueCluster")
SECRET = "kubernetes:core/v1:Secret"
REDACTED = "[secret]"
PLAIN = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "w", "cluster": {"server": "https://10.20.0.10", "certificate-authority-data": "Q0E="}}],
        "users": [{"name": "w", "user": {"token": "plain-token"}}],
    }
)


def _cluster(resource) -> str | None:
    return resource.provider.urn if resource.provider is not None else None


def _kubeconfig(props):
    """The kubeconfig a Secret holds: REDACTED, its text, or None."""
    for field, decode in (("stringData", False), ("data", True)):
        value = get(props, field)
        if value == REDACTED:
            return REDACTED
        text = get(value, KUBECONFIG_KEY) if value is not None and not isinstance(value, str) else None
        if text == REDACTED:
            return REDACTED
        if text is not None:
            if decode:
                text = base64.b64decode(text).decode()
            return text
    return None


def _refusal(text: str) -> str | None:
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError:
        return "is not a kubeconfig"
    for entry in as_list(get(config, "users")):
        user = get(entry, "user", default={}) or {}
        if user.get("exec"):
            return "authenticates with an exec plugin, which MultiKueue refuses"
        if user.get("tokenFile"):
            return "reads a token file, which MultiKueue refuses"
    for entry in as_list(get(config, "clusters")):
        cluster = get(entry, "cluster", default={}) or {}
        if cluster.get("certificate-authority"):
            return "names a CA file path, which MultiKueue refuses (inline certificate-authority-data)"
        if cluster.get("insecure-skip-tls-verify"):
            return "skips TLS verification, which MultiKueue refuses"
    return None


@stack_rule(
    name="multikueue-kubeconfig-secret",
    description="Every MultiKueueCluster's kubeconfig is a Secret in kueue-system held as a Pulumi secret, with a "
    "static token and inline CA data (no exec plugin, token file or CA file path).",
    severity="critical",
    fix="`multikueue.manager` names the manager site; Lattice composes each worker's kubeconfig and keeps it a "
    "Pulumi secret",
    remediation="Let Lattice compose worker kubeconfigs (components/scheduling/multikueue_worker.py) and pass them "
    "with pulumi.Output.secret; never write a token into the program or the stack file.",
    resource_types=(SECRET,),
    counterexample=Counterexample(
        SECRET,
        put("stringData", value={KUBECONFIG_KEY: PLAIN}),
        select=lambda r, plan: (
            r["inputs"].get("metadata", {}).get("name", "").startswith("multikueue-")
            and r["inputs"].get("metadata", {}).get("namespace") == KUEUE_NAMESPACE
        ),
    ),
    config={"secretsRedacted": {"type": "boolean", "default": False}},
    category="secrets",
)
def multikueue_kubeconfig_secret(args):
    redacted = args.get_config()["secretsRedacted"]
    secrets = {
        (_cluster(s), get(s.props, "metadata", "namespace"), get(s.props, "metadata", "name")): s
        for s in of_type(args.resources, SECRET)
    }
    for cluster in of_type(args.resources, CLUSTER):
        name = get(cluster.props, "metadata", "name") or cluster.name
        source = get(cluster.props, "spec", "clusterSource", "kubeConfig")
        if source is None:
            continue  # a ClusterProfile: no kubeconfig to judge
        if get(source, "locationType", default="Secret") != "Secret":
            yield cluster.urn, f"MultiKueueCluster '{name}' reads its kubeconfig from a file path; use a Secret"
            continue
        secret = secrets.get((_cluster(cluster), KUEUE_NAMESPACE, get(source, "location")))
        if secret is None:
            yield (
                cluster.urn,
                f"MultiKueueCluster '{name}' names Secret '{get(source, 'location')}', which is not in "
                f"{KUEUE_NAMESPACE} on its cluster",
            )
            continue
        text = _kubeconfig(secret.props)
        if text is None:
            yield secret.urn, f"Secret '{get(secret.props, 'metadata', 'name')}' holds no '{KUBECONFIG_KEY}' key"
        elif text != REDACTED:
            if redacted:
                yield (
                    secret.urn,
                    f"the kubeconfig of MultiKueueCluster '{name}' is in plain text in the plan; pass it as a "
                    "Pulumi secret",
                )
            refusal = _refusal(text)
            if refusal:
                yield secret.urn, f"the kubeconfig of MultiKueueCluster '{name}' {refusal}"
