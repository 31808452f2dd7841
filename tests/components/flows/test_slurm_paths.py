"""Slurm's ports across the links, walked hop by hop (components/flows/reachability.py): prod's grid lets the
beamline's users ssh to the login pods and its pipeline call slurmrestd (slurm.login_from / rest_from), through the
AWS hub and namespace slurm's NetworkPolicies; nothing else of Slurm is reachable from another site."""

from __future__ import annotations

import pytest

from lattice.components.flows.reachability import estate, needed_paths, reach, slurm_endpoint
from lattice.components.spec import load_stack_file
from tests.conftest import ROOT

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"


@pytest.fixture(scope="module")
def world(prod_plan):
    return estate(prod_plan, load_stack_file(PROD).spec)


def test_the_login_and_rest_clients_prod_names_are_delivered(prod_plan):
    needs = [n for n in needed_paths(prod_plan, load_stack_file(PROD).spec) if n.kind == "slurm"]
    assert [(n.key, n.source_site, n.destination.port) for n in needs] == [
        ("sites[2].slurm.login_from[0]", "edge-beamline", 22),
        ("sites[2].slurm.rest_from[0]", "edge-beamline", 6820),
    ]
    for need in needs:
        assert need.path.delivered, need.path.verdict()
        last = need.path.hops[-1]
        assert (last.where, last.what) == ("grid-hpc namespace slurm", "NetworkPolicy")


@pytest.mark.parametrize(
    ("source", "app", "port", "policies"),
    [
        ("aws-use1", "login", 22, "slurm-login-from-links, slurm-site"),  # not in login_from
        ("edge-beamline", "slurmctld", 6817, "slurm-site"),  # the controller: the site only
        ("edge-beamline", "slurmdbd", 6819, "slurm-site"),
        ("edge-beamline", "login", 6820, "slurm-login-from-links, slurm-site"),  # login pods: ssh only
    ],
)
def test_everything_else_of_slurm_is_dropped_at_its_network_policies(world, source, app, port, policies):
    path = reach(world, load_stack_file(PROD).spec, source, slurm_endpoint(world, "grid-hpc", app, port))
    assert not path.delivered
    assert str(path.dropped_at) == (
        "grid-hpc namespace slurm: NetworkPolicy: no ingress rule of namespace slurm's NetworkPolicies "
        f"({policies}) allows it"
    )


def test_users_are_told_where_to_ssh_and_the_paths_end_at_those_addresses(prod_plan):
    """The login and slurmrestd LoadBalancer Services take the addresses prod names (slurm.login_address /
    rest_address: loadBalancerIP, which the operator copies into the Services it builds), the site's outputs say
    where to connect, and the reachability model walks each client to that address rather than to the whole site
    range. On the previous main neither Service had an address and users were told nowhere to ssh."""
    from lattice.components.scheduling.slurm_cluster import SLURMRESTD_PORT

    login = prod_plan.one("kubernetes:slinky.slurm.net/v1beta1:LoginSet", "grid-hpc-slurm-login")
    restapi = prod_plan.one("kubernetes:slinky.slurm.net/v1beta1:RestApi", "grid-hpc-slurm-restapi")
    assert login["inputs"]["spec"]["service"]["spec"] == {
        "type": "LoadBalancer",
        "externalTrafficPolicy": "Local",
        "loadBalancerIP": "10.50.0.42",
    }
    assert restapi["inputs"]["spec"]["service"]["spec"]["loadBalancerIP"] == "10.50.0.43"
    outputs = prod_plan.outputs["sites"]["grid-hpc"]["slurm"]
    assert outputs["login"] == "ssh <user>@10.50.0.42"
    assert outputs["rest"] == f"http://10.50.0.43:{SLURMRESTD_PORT}/"
    needs = [n for n in needed_paths(prod_plan, load_stack_file(PROD).spec) if n.kind == "slurm"]
    assert [(n.destination.address, n.destination.port) for n in needs] == [("10.50.0.42", 22), ("10.50.0.43", 6820)]
    assert all(n.path.delivered for n in needs)
    # the grid's network delivers the address as one of its own ranges' (no longer the whole range, assumed)
    hop = next(h for h in needs[0].path.hops if h.where == "grid-hpc network")
    assert "10.50.0.42/32 is one of grid-hpc's own ranges" in str(hop)
