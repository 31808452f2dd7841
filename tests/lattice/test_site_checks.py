"""`lattice preflight` site checks: which control planes this machine reaches, and the Auto Scaling role.

No network: EKS and IAM come from moto, the TCP probe is a recorded stand-in, gcloud is a script in tmp_path,
and kubeconfigs are files in tmp_path.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import boto3
import pytest
import yaml
from moto import mock_aws

from lattice.cli import main
from lattice.components.spec import StackSpec
from lattice.preflight.pools import CheckResult
from lattice.preflight.sites import run_site_checks
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, spec_with, write_stack

ROLE_ARN = "arn:aws:iam::123456789012:role/eks"


class Probe:
    """Stands in for the TCP connection: records every host:port and refuses the ones told to."""

    def __init__(self, refused: set[str] = frozenset()):
        self.refused = refused
        self.calls: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> None:
        self.calls.append((host, port))
        if host in self.refused:
            raise ConnectionRefusedError(111, "Connection refused")


@pytest.fixture
def session(offline_aws_credentials):
    with mock_aws():
        yield boto3.session.Session(region_name="us-east-1")


def _spec(*sites) -> StackSpec:
    return StackSpec.model_validate(spec_with(*sites))


def _by(results: list[CheckResult]) -> dict[tuple[str, str], CheckResult]:
    return {(r.site, r.check): r for r in results}


def _eks(session, **vpc) -> str:
    config = {"subnetIds": ["subnet-1"], "endpointPublicAccess": False, "endpointPrivateAccess": True, **vpc}
    cluster = session.client("eks").create_cluster(name="dev-aws-use1", roleArn=ROLE_ARN, resourcesVpcConfig=config)
    return cluster["cluster"]["endpoint"].removeprefix("https://").rstrip("/").lower()  # hostnames are case-blind


def test_the_runner_learns_it_cannot_reach_a_private_eks_api(session):
    host = _eks(session)
    session.client("iam").create_service_linked_role(AWSServiceName="autoscaling.amazonaws.com")
    probe = Probe(refused={host})
    results = _by(run_site_checks(_spec(AWS_SITE), "dev", session, connect=probe))
    endpoint = results[("aws-use1", "endpoint")]
    assert (endpoint.status, endpoint.detail) == (
        "fail",
        f"this machine cannot reach {host}:443 (Connection refused); run pulumi up from a machine that reaches "
        "the private endpoint from 10.20.0.0/16",
    )
    assert probe.calls == [(host, 443)]
    assert results[("aws-use1", "autoscaling-role")].status == "pass"


def test_a_reachable_eks_api_passes(session):
    host = _eks(session, endpointPublicAccess=True)
    results = _by(run_site_checks(_spec(AWS_SITE), "dev", session, connect=Probe()))
    assert results[("aws-use1", "endpoint")].detail == f"this machine reaches {host}:443 (public endpoint)"


def test_a_cluster_not_created_yet_says_how_it_will_be_reached(session):
    site = {**AWS_SITE, "kubernetes": {"endpoint_public_access": True, "public_access_cidrs": ["198.51.100.0/24"]}}
    probe = Probe()
    result = _by(run_site_checks(_spec(site), "dev", session, connect=probe))[("aws-use1", "endpoint")]
    assert (result.status, result.detail) == (
        "skip",
        "EKS cluster dev-aws-use1 does not exist yet; a runner will reach it through the public endpoint from "
        "198.51.100.0/24",
    )
    assert probe.calls == []


@pytest.mark.parametrize(
    ("wanted", "exists", "status", "fix"),
    [
        ("existing", False, "fail", "set encryption.autoscaling_service_role: create"),
        ("create", True, "fail", "set encryption.autoscaling_service_role: existing"),
        ("create", False, "pass", "the stack creates it before the site key"),
    ],
)
def test_the_autoscaling_role_the_key_names_matches_the_account(session, wanted, exists, status, fix):
    if exists:
        session.client("iam").create_service_linked_role(AWSServiceName="autoscaling.amazonaws.com")
    site = {**AWS_SITE, "encryption": {"autoscaling_service_role": wanted}}
    result = _by(run_site_checks(_spec(site), "dev", session, connect=Probe()))[("aws-use1", "autoscaling-role")]
    assert result.status == status and result.detail.endswith(fix)


def _fake_gcloud(tmp_path: Path, *, stdout: str = "", stderr: str = "", code: int = 0) -> str:
    script = tmp_path / "gcloud"
    script.write_text(
        f"#!{sys.executable}\nimport sys, json\n"
        f"json.dump(sys.argv[1:], open({str(tmp_path / 'argv.json')!r}, 'w'))\n"
        f"sys.stdout.write({stdout!r}); sys.stderr.write({stderr!r}); sys.exit({code})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_gke_is_reached_through_its_dns_endpoint(tmp_path):
    described = {
        "controlPlaneEndpointsConfig": {
            "dnsEndpointConfig": {"allowExternalTraffic": True, "endpoint": "gke-abc.us-central1.gke.goog"}
        }
    }
    gcloud = _fake_gcloud(tmp_path, stdout=json.dumps(described))
    probe = Probe()
    result = _by(run_site_checks(_spec(GCP_SITE), "dev", connect=probe, gcloud=gcloud))[("gcp-usc1", "endpoint")]
    assert result.detail == "this machine reaches gke-abc.us-central1.gke.goog:443 (DNS endpoint, IAM-gated)"
    assert json.loads((tmp_path / "argv.json").read_text()) == [
        "container",
        "clusters",
        "describe",
        "dev-gcp-usc1",
        "--location",
        "us-central1",
        "--project",
        "lattice-ml-test",
        "--format",
        "json",
    ]


def test_an_adopted_gke_cluster_is_described_by_its_own_name(tmp_path):
    from tests.components.sites.test_gcp_brownfield import CLUSTER, shared_site

    described = {"controlPlaneEndpointsConfig": {"dnsEndpointConfig": {"endpoint": "gke-xyz.us-central1.gke.goog"}}}
    gcloud = _fake_gcloud(tmp_path, stdout=json.dumps(described))
    site = shared_site(kubernetes={"existing_cluster": CLUSTER})
    run_site_checks(_spec(site), "dev", connect=Probe(), gcloud=gcloud)
    assert json.loads((tmp_path / "argv.json").read_text())[3] == CLUSTER


def test_gke_not_created_yet_and_gcloud_missing_are_skips(tmp_path):
    gcloud = _fake_gcloud(tmp_path, stderr="ERROR: (gcloud.container.clusters.describe) NOT_FOUND: x", code=1)
    result = _by(run_site_checks(_spec(GCP_SITE), "dev", connect=Probe(), gcloud=gcloud))[("gcp-usc1", "endpoint")]
    assert (result.status, result.detail) == (
        "skip",
        "GKE cluster dev-gcp-usc1 does not exist yet; a runner will reach it through its DNS endpoint, from "
        "anywhere with GCP credentials",
    )


def _kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "grid", "cluster": {"server": server}}],
                "contexts": [{"name": "hpc-admin@grid", "context": {"cluster": "grid", "user": "admin"}}],
            }
        )
    )
    return path


def test_grid_context_is_probed_at_its_server(tmp_path):
    path = _kubeconfig(tmp_path, "https://k8s.grid.example.edu:6443")
    probe = Probe(refused={"k8s.grid.example.edu"})
    result = _by(run_site_checks(_spec(GRID_SITE), "dev", connect=probe, kubeconfig=path))[("grid-hpc", "endpoint")]
    assert result.status == "fail" and result.detail.startswith("this machine cannot reach k8s.grid.example.edu:6443")
    assert probe.calls == [("k8s.grid.example.edu", 6443)]


def test_a_missing_context_names_the_ones_the_file_has(tmp_path):
    path = _kubeconfig(tmp_path, "https://k8s.grid.example.edu:6443")
    site = {**GRID_SITE, "kubernetes": {"context": "other@grid"}}
    result = _by(run_site_checks(_spec(site), "dev", connect=Probe(), kubeconfig=path))[("grid-hpc", "endpoint")]
    assert result.detail == f"context other@grid is not in {path} (it has: hpc-admin@grid); add it or set KUBECONFIG"


def test_preflight_prints_the_site_table_and_fails_on_a_site(tmp_path, capsys, monkeypatch, offline_aws_credentials):
    path = _kubeconfig(tmp_path, "https://127.0.0.1:9")  # a closed loopback port: refused, nothing leaves
    monkeypatch.setenv("KUBECONFIG", str(path))
    stack = write_stack(tmp_path, spec_with(GRID_SITE), stack="grid")
    assert main(["preflight", "--stack-file", str(stack)]) == 1
    out = capsys.readouterr().out
    assert "lattice preflight: sites" in out and "cannot reach 127.0.0.1:9" in out


@pytest.mark.parametrize(
    ("caller_role", "status"),
    [("lattice-platform-admin", "pass"), ("ci-deployer", "fail")],
)
def test_the_runner_must_act_as_an_admin_role(session, caller_role, status):
    """EKS refuses every in-cluster request from an identity with no access entry."""
    iam = session.client("iam")
    trust = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}, "Action": "sts:AssumeRole"}
            ],
        }
    )
    role = iam.create_role(RoleName=caller_role, AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    credentials = session.client("sts").assume_role(RoleArn=role, RoleSessionName="runner")["Credentials"]
    assumed = boto3.session.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
        region_name="us-east-1",
    )
    site = {
        **AWS_SITE,
        "kubernetes": {
            **AWS_SITE["kubernetes"],
            "admin_role_arns": ["arn:aws:iam::123456789012:role/lattice-platform-admin"],
        },
    }
    result = _by(run_site_checks(_spec(site), "dev", assumed, connect=Probe()))[("aws-use1", "admin-access")]
    assert result.status == status
    if status == "fail":
        assert result.detail.endswith("assume one first (AWS_PROFILE with role_arn, or `aws sts assume-role`)")
