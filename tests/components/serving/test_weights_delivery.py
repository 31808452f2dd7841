"""Weights from where they were trained to the serving pod (prod: grid-hpc's Lustre to the beamline's L40S pool),
walked on the plan: the route over the links and the bandwidth it carries, the NetworkPolicies at both ends
(tests/netpol.py), the export's address and its Service, the credentials (Pulumi secrets both ends), the copy Job
Pulumi waits for before the engine starts, and what `lattice plan` and `lattice cost` say of the copy."""

from __future__ import annotations

import ipaddress
import math

from lattice.cli import main
from lattice.cli.plan_serving import duration
from lattice.components.network.link_plan import link_plans
from lattice.components.network.links import linked_ranges
from lattice.components.serve_sizing import transfer
from lattice.components.serving.endpoints import endpoint_plan, weights_route
from lattice.components.spec import load_stack_file
from tests.conftest import ROOT
from tests.netpol import Cluster, Endpoint

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
EXPORT = "10.50.0.41"
BEAMLINE_POD, GRID_POD, AWS_POD = "10.60.3.7", "10.51.7.20", "10.20.40.9"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


def _entry():
    spec = load_stack_file(PROD).spec
    site = next(s for s in spec.sites if s.name == "edge-beamline")
    return spec, site, site.inference[0]


def test_the_route_crosses_the_aws_hub_at_the_slower_spokes_carried_bandwidth():
    spec, site, entry = _entry()
    route = weights_route(spec, site, entry)
    assert (route.source, route.through, route.target) == ("grid-hpc", "aws-use1", "edge-beamline")
    carried = {plan.peer: plan.capacity_gbps for plan in link_plans(spec) if plan.cloud == "aws-use1"}
    assert carried["grid-hpc"] == 10 and carried["edge-beamline"] == 1.25  # `lattice links plan`'s "carries"
    assert route.carried_gbps == min(carried["grid-hpc"], carried["edge-beamline"]) == 1.25
    # the transit gateway routes between its attachments: each spoke reaches the other's ranges
    assert "10.50.0.0/16" in linked_ranges(spec, site)
    assert "10.60.0.0/20" in linked_ranges(spec, next(s for s in spec.sites if s.name == "grid-hpc"))


def test_the_transfer_time_is_the_weights_at_the_carried_bandwidth():
    _, site, entry = _entry()
    report = endpoint_plan(site, entry)
    assert report.weight_bytes == 8_030_261_248 * 2
    seconds = transfer(report.weight_bytes, 1.25)
    assert seconds == report.weight_bytes * 8 / 1.25e9 and duration(seconds) == "1 min 43 s"


def test_lattice_plan_prints_the_copy(capsys):
    assert main(["plan", "--stack", "prod"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "edge-beamline/xpcs-8b (team beamline-ops, pool infer-l40s)" in out
    assert "TP 1, 1–4 replicas" in out
    assert (
        "weights 16.1 GB copied from grid-hpc:lustre/beamline-ops/models/xpcs-8b over grid-hpc → aws-use1 → "
        "edge-beamline at 1.25 Gbps carried: 1 min 43 s a copy"
    ) in out


def test_only_the_copy_job_reaches_only_the_export(prod_plan):
    edge = Cluster(prod_plan, "edge-beamline")
    copier = edge.pod("beamline-ops", BEAMLINE_POD, **{"lattice.dev/weights": "xpcs-8b"})
    other = edge.pod("beamline-ops", BEAMLINE_POD)
    export = Endpoint(EXPORT)
    assert edge.egress(copier, export, 8080)
    assert not edge.egress(other, export, 8080)  # the team's own policies open 22 and 443 to linked sites, not 8080
    assert not edge.egress(copier, Endpoint("10.50.0.40"), 8080)  # the central metrics receiver: not this Job's


def test_the_export_admits_the_serving_site_alone(prod_plan):
    grid = Cluster(prod_plan, "grid-hpc")
    export = grid.pod("beamline-ops", GRID_POD, **{"lattice.dev/weights-export": "xpcs-8b"})
    assert grid.ingress(export, Endpoint(BEAMLINE_POD), 8080)
    assert not grid.ingress(export, Endpoint(AWS_POD), 8080)
    assert not grid.ingress(export, Endpoint(BEAMLINE_POD), 9090)
    other_team = grid.pod("climate", "10.51.9.9")
    assert not grid.ingress(export, other_team, 8080)


def test_the_exports_service_keeps_the_clients_address_on_the_spec_address(prod_plan):
    service = prod_plan.one("kubernetes:core/v1:Service", "grid-hpc-xpcs-8b-weights-service")["inputs"]
    assert service["metadata"]["namespace"] == "beamline-ops"
    spec = service["spec"]
    assert (spec["type"], spec["loadBalancerIP"], spec["externalTrafficPolicy"]) == ("LoadBalancer", EXPORT, "Local")
    assert spec["ports"] == [{"name": "weights", "port": 8080, "targetPort": "weights", "protocol": "TCP"}]
    assert ipaddress.ip_address(EXPORT) in ipaddress.ip_network("10.50.0.0/16")


def test_the_credentials_are_secrets_at_both_ends(prod_plan):
    for name in ("edge-beamline-xpcs-8b-copy-credentials", "grid-hpc-xpcs-8b-weights-users"):
        secret = prod_plan.one("kubernetes:core/v1:Secret", name)["inputs"]
        assert secret["stringData"]["value"] == "[secret]" and SECRET_SIG in secret["stringData"].values()
    job = prod_plan.one("kubernetes:batch/v1:Job", "edge-beamline-xpcs-8b-copy")["inputs"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["envFrom"] == [{"secretRef": {"name": "xpcs-8b-weights-credentials"}}]
    assert container["args"][:5] == ["sync", ":http:", "/cache", "--http-url", f"http://{EXPORT}:8080/"]


def test_the_engine_starts_after_the_copy_which_pulumi_waits_for(prod_plan):
    job = prod_plan.one("kubernetes:batch/v1:Job", "edge-beamline-xpcs-8b-copy")
    release = prod_plan.one("kubernetes:helm.sh/v3:Release", "edge-beamline-xpcs-8b-release")
    assert job["urn"] in release["dependencies"]
    minutes = math.ceil(2 * transfer(8_030_261_248 * 2, 1.25) / 60) + 10
    assert prod_plan.options[job["urn"]]["customTimeouts"] == {"create": f"{minutes}m", "update": f"{minutes}m"}
    claim = prod_plan.one("kubernetes:core/v1:PersistentVolumeClaim", "edge-beamline-xpcs-8b-cache")["inputs"]
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "19Gi"  # 15.0 GiB × 1.1 + 2
    export = prod_plan.one("kubernetes:core/v1:Service", "grid-hpc-xpcs-8b-weights-service")
    assert export["urn"] in job["dependencies"] or export["urn"] in release["dependencies"]


def test_a_new_copy_runs_beside_the_replicas_on_a_read_write_once_volume(prod_plan):
    """A new weights.path replaces the copy Job while the replicas hold the ReadWriteOnce volume on their node: the Job
    must land on that node too (runtime.same_node), or its attach fails and Pulumi's wait for it times out."""
    job = prod_plan.one("kubernetes:batch/v1:Job", "edge-beamline-xpcs-8b-copy")["inputs"]
    template = job["spec"]["template"]
    (term,) = template["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term == {"labelSelector": {"matchLabels": {"lattice.dev/inference": "xpcs-8b"}},
                    "topologyKey": "kubernetes.io/hostname"}  # fmt: skip
    # the Job's pod matches the term itself, so the first copy (no replica yet) is placed anywhere
    assert term["labelSelector"]["matchLabels"].items() <= template["metadata"]["labels"].items()


def test_the_endpoint_is_reached_from_its_teams_namespace_alone(prod_plan):
    """The engine Service is the endpoint; the team namespace's default-deny admits the team's own pods and the site's
    Prometheus (on the engine's port), and no other namespace's pods: the docs say "from its team's namespace"."""
    edge = Cluster(prod_plan, "edge-beamline")
    engine = edge.pod("beamline-ops", "10.60.3.8", **{"lattice.dev/inference": "xpcs-8b"})
    client = edge.pod("beamline-ops", BEAMLINE_POD)
    assert edge.connects(client, engine, 8000)
    assert edge.connects(edge.pod("monitoring", "10.60.3.9"), engine, 8000)
    assert not edge.connects(edge.pod("materials-sim", "10.60.3.10"), engine, 8000)
    assert not edge.connects(edge.pod("kube-system", "10.60.3.11"), engine, 8000)
