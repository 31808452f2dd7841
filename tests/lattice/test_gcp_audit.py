"""`lattice audit` judges what a GCP site adopts, live: the existing key's rotation and state, and flow logs on the
Shared VPC subnetwork, from recorded answers in the APIs' documented shapes (Cloud KMS ``cryptoKeys.get``,
Compute ``subnetworks.get``: cloud.google.com/kms/docs/reference/rest/v1/projects.locations.keyRings.cryptoKeys,
cloud.google.com/compute/docs/reference/rest/v1/subnetworks), with the rules ``lattice check`` runs on plans."""

from __future__ import annotations

import json

from tests.components.sites.test_gcp_brownfield import HOST, KEY, SUBNETWORK
from tests.conftest import write_stack
from tests.lattice.test_gcp_brownfield_preflight import SUBNET_URL, FixtureApis, adopting, answers

KEY_URL = f"GET https://cloudkms.googleapis.com/v1/{KEY}"
SUBNET = f"GET {SUBNET_URL}"
# Flow logs as `gcloud compute networks subnets update --enable-flow-logs` leaves them (subnetworks.get's logConfig).
FLOW_LOGS = {
    "enable": True,
    "aggregationInterval": "INTERVAL_5_SEC",
    "flowSampling": 0.5,
    "metadata": "INCLUDE_ALL_METADATA",
}


def recorded(**changes) -> dict:
    responses = answers()
    responses[SUBNET]["logConfig"] = dict(FLOW_LOGS)
    for request, edit in changes.items():
        edit(responses[{"key": KEY_URL, "subnet": SUBNET}[request]])
    return responses


def audit(tmp_path, capsys, monkeypatch, responses) -> tuple[int, list[dict], FixtureApis]:
    from lattice.audit import gcp as gcp_audit
    from lattice.cli import main

    apis = FixtureApis(responses)
    monkeypatch.setattr(gcp_audit, "client", lambda: apis)
    spec = adopting().model_dump(mode="json", exclude_unset=True)
    path = write_stack(tmp_path, spec)
    config = tmp_path / "policy-config.json"
    config.write_text('{"all": "mandatory"}')
    code = main(["audit", "--stack-file", str(path), "--format", "json", "--policy-config", str(config)])
    out = capsys.readouterr().out
    return code, json.loads(out)["violations"], apis


def test_an_adopted_key_and_subnetwork_as_lattice_would_make_them_pass(tmp_path, capsys, monkeypatch):
    code, violations, apis = audit(tmp_path, capsys, monkeypatch, recorded())
    assert (code, violations) == (0, [])
    # Read, not assumed: both adopted resources were asked for, and nothing of AWS (the stack has no AWS site).
    assert KEY_URL in apis.requests and SUBNET in apis.requests


def test_each_gap_in_what_the_site_adopts_is_a_finding_of_the_plan_rule(tmp_path, capsys, monkeypatch):
    def no_rotation(key):
        key.pop("rotationPeriod")
        key["primary"]["state"] = "DISABLED"

    responses = recorded(key=no_rotation, subnet=lambda s: s["logConfig"].update(enable=False))
    code, violations, _ = audit(tmp_path, capsys, monkeypatch, responses)
    assert code == 1
    subnet = f"projects/{HOST}/regions/us-central1/subnetworks/{SUBNETWORK}"
    assert sorted((v["policy"], v["urn"], v["message"]) for v in violations) == [
        (
            "gcp-kms-key-enabled",
            KEY,
            "the key's primary version is DISABLED, not ENABLED: nothing can encrypt or decrypt with it",
        ),
        ("gcp-kms-key-rotation", KEY, "the key never rotates"),
        ("gcp-subnetwork-flow-logs", subnet, "the subnetwork records no VPC flow logs"),
    ]


def test_a_rotation_longer_than_the_pack_allows_is_named_with_its_days(tmp_path, capsys, monkeypatch):
    responses = recorded(key=lambda k: k.update(rotationPeriod=f"{400 * 86400}s"))
    code, violations, _ = audit(tmp_path, capsys, monkeypatch, responses)
    assert code == 1
    assert [(v["policy"], v["message"]) for v in violations] == [
        ("gcp-kms-key-rotation", "the key rotates every 400 days; at most 365 allowed")
    ]


def test_an_adopted_resource_that_cannot_be_read_is_never_passed_silently(tmp_path, capsys, monkeypatch):
    responses = recorded()
    del responses[SUBNET]
    from lattice.audit import gcp as gcp_audit
    from lattice.cli import main

    monkeypatch.setattr(gcp_audit, "client", lambda: FixtureApis(responses))
    path = write_stack(tmp_path, adopting().model_dump(mode="json", exclude_unset=True))
    assert main(["audit", "--stack-file", str(path)]) == 1
    out = capsys.readouterr().out
    assert (
        f"not judged: gcp-usc1: subnetwork {SUBNETWORK} of {HOST} (network.shared_vpc) does not exist or is not "
        "shared with the site's project"
    ) in " ".join(out.split())
