"""Instances answer only IMDSv2 (session tokens), which SSRF-style requests cannot use to read role credentials."""

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration"


@resource_rule(
    name="imdsv2-required",
    description="Launch templates, instances and launch configurations require IMDSv2 session tokens "
    "(metadata_options.http_tokens = required) or switch the metadata endpoint off.",
    severity="high",
    fix="`aws ec2 modify-instance-metadata-options --http-tokens required --instance-id ID` (Lattice's launch "
    "templates require IMDSv2)",
    remediation="Set metadata_options = {http_endpoint: 'enabled', http_tokens: 'required', "
    "http_put_response_hop_limit: 2} (2 lets containers on the node reach it, as EKS's own templates do).",
    resource_types=(TEMPLATE, INSTANCE, LAUNCH_CONFIGURATION),
    counterexample=Counterexample(TEMPLATE, put("metadataOptions", "httpTokens", value="optional")),
    checkov=("CKV_AWS_79",),
    trivy=("AVD-AWS-0028", "AVD-AWS-0130"),
    category="access",
)
def imdsv2_required(args):
    options = get(args.props, "metadataOptions", default={})
    if get(options, "httpEndpoint") == "disabled":
        return
    tokens = get(options, "httpTokens")
    if tokens != "required":
        found = f"http_tokens is {tokens!r}" if tokens else "no metadata_options.http_tokens"
        yield f"{found}: IMDSv1 answers without a session token; require IMDSv2"
