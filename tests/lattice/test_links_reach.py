"""lattice links reach: the matrix of every needed path (text at 80 columns, JSON with every hop), exit 1 when one
is dropped, the dropped hop named."""

from __future__ import annotations

import json

import yaml

from lattice.cli import main
from lattice.components.spec import SPEC_KEY
from tests.conftest import ROOT, read_yaml

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"


def test_prods_matrix_fits_80_columns_and_delivers_every_path(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["links", "reach", "--stack", "prod"]) == 0
    out = capsys.readouterr().out
    assert "prod: 23 needed paths, 0 dropped" in out
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
    assert "…" not in out
    words = " ".join(out.split())
    for cell in ("gcp-usc1 GKE API (private endpoint):443", "grid-hpc metrics receiver:8080", "gcp-usc1 Filestore"):
        assert all(word in words for word in cell.split()), cell
    assert "dropped" not in out.split("0 dropped", 1)[1]


def test_hops_prints_each_path_there_and_back(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["links", "reach", "--stack", "prod", "--hops"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "gcp-usc1 GKE control-plane peering: VPC peering: custom routes exported (gcp-usc1-gke-control-plane-routes)"
        in out
    )
    assert "(assumed)" in out


def test_json_holds_every_path_with_its_hops_and_their_sources(capsys):
    assert main(["links", "reach", "--stack", "prod", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["stack"], document["needed"], document["delivered"], document["dropped"]) == ("prod", 23, 23, 0)
    gke = next(p for p in document["paths"] if p["destination"]["kind"] == "gke-api")
    assert gke["destination"] == {
        "site": "gcp-usc1",
        "kind": "gke-api",
        "address": "10.30.127.240/28",
        "port": 443,
        "protocol": "tcp",
        "what": "GKE API (private endpoint in the control plane's peered network)",
        "server": "https://<private endpoint in 10.30.127.240/28, e.g. 10.30.127.242>",
        "namespace": None,
        "resource": None,
    }
    assert gke["dropped_at"] is None and gke["key"] == "sites[1].kubernetes"
    advertisement = next(h for h in gke["hops"] if h["what"] == "transit gateway route table")
    assert advertisement["source"] == "https://docs.aws.amazon.com/vpc/latest/tgw/how-transit-gateways-work.html"
    assert gke["return_hops"][0]["source"] == (
        "https://cloud.google.com/solutions/creating-kubernetes-engine-private-clusters-with-net-proxies"
    )


def test_a_dropped_path_exits_1_naming_the_hop(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    document = read_yaml(PROD)
    spec = document["config"][SPEC_KEY]
    aws = spec["sites"][0]
    aws["kubernetes"]["endpoint_public_access"] = False
    del aws["kubernetes"]["public_access_cidrs"]
    del next(link for link in spec["links"] if "hub" in link)["admit"]
    fusion = next(team for team in spec["teams"] if team["name"] == "fusion")
    fusion["serve"] = [entry for entry in fusion["serve"] if "aws-use1" not in entry.get("sites", [])]
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    assert main(["links", "reach", "--stack-file", str(path)]) == 1
    out = capsys.readouterr().out
    assert "2 dropped" in out
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
    words = " ".join(out.split())
    assert (
        "dropped: grid-hpc 10.50.0.0/16 → aws-use1 EKS API (private endpoint):443: aws-use1 EKS cluster security "
        "group: security group: no rule admits tcp 443 from 10.50.0.0/16 to the EKS API's private endpoint" in words
    )
    assert main(["links", "reach", "--stack-file", str(path), "--format", "json"]) == 1
    dropped = [p for p in json.loads(capsys.readouterr().out)["paths"] if not p["delivered"]]
    assert [(p["source"], p["dropped_at"]["what"]) for p in dropped] == [
        ("10.50.0.0/16", "security group"),
        ("10.51.0.0/16", "security group"),
    ]
