"""``lattice preflight``'s site checks: what this machine can reach, and what the account already has.

- ``endpoint``, every site: can the machine running ``pulumi up`` open a connection to the site's Kubernetes
  API? EKS: ``eks:DescribeCluster`` gives the endpoint and who may reach it. GKE: ``gcloud container clusters
  describe`` (the Google Cloud CLI is also what the kubeconfig's ``gke-gcloud-auth-plugin`` needs) gives the
  DNS endpoint, or the IP endpoint when the DNS one is off. Grid / edge: the server of the site's kubeconfig
  context. A cluster that does not exist yet is a ``skip`` that says how a runner will reach it. Reaching is
  a TCP connection to port 443: it proves the network path, not the credentials.
- ``autoscaling-role``, AWS sites: the site key's policy names EC2 Auto Scaling's service-linked role, which
  the spec says exists already or is to be created; either way round is a failed ``pulumi up``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import yaml
from botocore.exceptions import ClientError

from lattice.components.network.ports import HTTPS
from lattice.components.security.aws_kms_key import AUTOSCALING_SERVICE_ROLE
from lattice.components.spec import AwsSite, GcpSite, KubernetesSite, StackSpec

from .pools import CheckResult, Status, aws_errors, error_code

SITE_CHECKS = ("admin-access", "autoscaling-role", "endpoint")
SITE_READS = "sts:GetCallerIdentity, iam:GetRole and eks:DescribeCluster"
CONNECT_TIMEOUT_SECONDS = 3
GCLOUD_TIMEOUT_SECONDS = 60
Connect = Callable[[str, int], None]


def tcp_connect(host: str, port: int) -> None:
    """Open and close a TCP connection; raises OSError when the path is closed."""
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_SECONDS):
        pass


def run_site_checks(
    spec: StackSpec,
    stack: str,
    session: boto3.Session | None = None,
    *,
    connect: Connect = tcp_connect,
    gcloud: str | None = None,
    kubeconfig: Path | None = None,
) -> list[CheckResult]:
    """Every site check of every site, sorted by site and check. Pool column: ``-``."""
    gcloud = gcloud if gcloud is not None else shutil.which("gcloud")
    results: list[CheckResult] = []
    for site in spec.sites:
        if isinstance(site, AwsSite):
            session = session or boto3.Session()
            with aws_errors(site.region, SITE_READS):
                caller = session.client("sts", region_name=site.region).get_caller_identity()["Arn"]
                results.append(_row(site.name, "admin-access", *_admin_access(site, caller)))
                iam = session.client("iam", region_name=site.region)
                results.append(_row(site.name, "autoscaling-role", *_autoscaling_role(site, iam)))
                eks = session.client("eks", region_name=site.region)
                cluster = site.kubernetes.existing_cluster or f"{stack}-{site.name}"
                results.append(_row(site.name, "endpoint", *_eks_endpoint(site, cluster, eks, connect)))
        elif isinstance(site, GcpSite):
            cluster = site.kubernetes.existing_cluster or f"{stack}-{site.name}"
            results.append(_row(site.name, "endpoint", *_gke_endpoint(site, cluster, gcloud, connect)))
        else:
            results.append(_row(site.name, "endpoint", *_kubeconfig_endpoint(site, kubeconfig, connect)))
    return sorted(results, key=lambda r: (r.site, SITE_CHECKS.index(r.check)))


def _row(site: str, check: str, status: Status, detail: str) -> CheckResult:
    return CheckResult(site=site, pool="-", check=check, status=status, detail=detail)


def _admin_access(site: AwsSite, caller_arn: str) -> tuple[Status, str]:
    """Whether this machine acts as one of the site's admin roles, which alone may create in-cluster resources."""
    admins = {arn.rsplit("/", 1)[-1]: arn for arn in site.kubernetes.admin_role_arns}
    if not admins:
        return "skip", "no admin_role_arns: the identity that creates the cluster keeps cluster admin"
    # arn:aws:sts::123456789012:assumed-role/ROLE/SESSION, or an IAM user's or role's own ARN
    parts = caller_arn.split(":", 5)[-1].split("/")
    role = parts[1] if parts[0] == "assumed-role" and len(parts) > 1 else None
    if role in admins:
        return "pass", f"this machine acts as {role}, one of the site's admin roles"
    return "fail", (
        f"this machine acts as {caller_arn}, not one of the admin roles ({', '.join(admins)}), so EKS refuses its "
        "in-cluster requests; assume one first (AWS_PROFILE with role_arn, or `aws sts assume-role`)"
    )


def _autoscaling_role(site: AwsSite, iam: Any) -> tuple[Status, str]:
    wanted = site.encryption.autoscaling_service_role
    try:
        iam.get_role(RoleName=AUTOSCALING_SERVICE_ROLE)
        exists = True
    except ClientError as exc:
        if error_code(exc) != "NoSuchEntity":
            raise
        exists = False
    if exists and wanted == "existing":
        return "pass", f"{AUTOSCALING_SERVICE_ROLE} exists; the site key's policy can name it"
    if not exists and wanted == "create":
        return "pass", f"{AUTOSCALING_SERVICE_ROLE} does not exist yet; the stack creates it before the site key"
    if exists:
        return "fail", (
            f"{AUTOSCALING_SERVICE_ROLE} already exists in this account and creating it again fails; set "
            "encryption.autoscaling_service_role: existing"
        )
    return "fail", (
        f"{AUTOSCALING_SERVICE_ROLE} does not exist in this account (no Auto Scaling group was ever made), so a key "
        "policy cannot name it; set encryption.autoscaling_service_role: create"
    )


def _reach(host: str, connect: Connect, how: str, advice: str) -> tuple[Status, str]:
    try:
        connect(host, HTTPS)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return "fail", f"this machine cannot reach {host}:{HTTPS} ({reason}); {advice}"
    return "pass", f"this machine reaches {host}:{HTTPS} ({how})"


def _eks_endpoint(site: AwsSite, cluster: str, eks: Any, connect: Connect) -> tuple[Status, str]:
    spec = site.kubernetes
    runners = ", ".join(spec.runner_cidrs)
    public = f"the public endpoint from {', '.join(spec.public_access_cidrs)}" if spec.endpoint_public_access else ""
    private = f"the private endpoint from {runners}" if runners else ""
    routes = " or ".join(part for part in (public, private) if part) or "no network (declare runner_cidrs)"
    try:
        described = eks.describe_cluster(name=cluster)["cluster"]
    except ClientError as exc:
        if error_code(exc) != "ResourceNotFoundException":
            raise
        return "skip", f"EKS cluster {cluster} does not exist yet; a runner will reach it through {routes}"
    host = urlsplit(described["endpoint"]).hostname
    vpc = described.get("resourcesVpcConfig", {})
    how = "public endpoint" if vpc.get("endpointPublicAccess") else "private endpoint"
    return _reach(host, connect, how, f"run pulumi up from a machine that reaches {routes}")


def _gke_endpoint(site: GcpSite, cluster: str, gcloud: str | None, connect: Connect) -> tuple[Status, str]:
    spec = site.kubernetes
    routes = "its DNS endpoint, from anywhere with GCP credentials" if spec.dns_endpoint else "its IP endpoint"
    if gcloud is None:
        return "skip", (
            "gcloud is not installed, so the cluster cannot be described (the kubeconfig's gke-gcloud-auth-plugin "
            f"needs it too): install the Google Cloud CLI; a runner will reach {cluster} through {routes}"
        )
    command = [gcloud, "container", "clusters", "describe", cluster, "--location", site.region,
               "--project", site.project, "--format", "json"]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=GCLOUD_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "fail", f"`gcloud container clusters describe {cluster}` did not run ({exc}); check the gcloud install"
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or ["no output"])[-1]
        if "NOT_FOUND" in done.stderr or "not found" in done.stderr.lower():
            return "skip", f"GKE cluster {cluster} does not exist yet; a runner will reach it through {routes}"
        return "fail", f"gcloud could not describe {cluster}: {message}; run `gcloud auth login` for the project"
    described = json.loads(done.stdout)
    dns = described.get("controlPlaneEndpointsConfig", {}).get("dnsEndpointConfig", {})
    if dns.get("allowExternalTraffic") and dns.get("endpoint"):
        return _reach(dns["endpoint"], connect, "DNS endpoint, IAM-gated", "check this machine's egress to *.gke.goog")
    private = described.get("privateClusterConfig", {})
    host = private.get("privateEndpoint") if private.get("enablePrivateEndpoint") else described.get("endpoint")
    return _reach(
        host,
        connect,
        "IP endpoint",
        "run pulumi up from inside the site's VPC (a master_authorized_cidrs network), or set "
        "kubernetes.dns_endpoint: true",
    )


def _kubeconfig_endpoint(site: KubernetesSite, kubeconfig: Path | None, connect: Connect) -> tuple[Status, str]:
    access = site.kubernetes
    if access.context is None:
        return "skip", (
            f"the kubeconfig is the Pulumi secret lattice:{access.kubeconfig_secret}, which only the Pulumi CLI "
            "decrypts; check from the runner with `kubectl cluster-info` against that kubeconfig"
        )
    path = kubeconfig or Path(os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or Path.home() / ".kube/config")
    try:
        document = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        return "fail", f"cannot read the kubeconfig {path} ({exc}); set KUBECONFIG to the file holding {access.context}"
    contexts = {c.get("name"): c.get("context", {}) for c in document.get("contexts") or []}
    clusters = {c.get("name"): c.get("cluster", {}) for c in document.get("clusters") or []}
    if access.context not in contexts:
        known = ", ".join(sorted(str(name) for name in contexts)) or "none"
        return "fail", f"context {access.context} is not in {path} (it has: {known}); add it or set KUBECONFIG"
    server = clusters.get(contexts[access.context].get("cluster"), {}).get("server", "")
    address = urlsplit(server)
    if not address.hostname:
        return "fail", f"context {access.context} in {path} names no cluster server; fix the kubeconfig"
    port = address.port or HTTPS
    try:
        connect(address.hostname, port)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return "fail", (
            f"this machine cannot reach {address.hostname}:{port} ({reason}); run pulumi up from the site's "
            "network or over its VPN link"
        )
    return "pass", f"this machine reaches {address.hostname}:{port} (context {access.context})"
