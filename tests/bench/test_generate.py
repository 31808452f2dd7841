"""The bench's generated stacks are valid stacks that replicate prod, and its floor registers a plan's resources."""

from __future__ import annotations

import ipaddress
import json

from bench.floor import replay
from bench.generate import PROD, generate, write
from lattice.components.spec import load_stack_file


def test_copies_of_prod_validate_as_one_stack(tmp_path):
    stack_file = load_stack_file(write(3, tmp_path))
    prod = load_stack_file(PROD)

    assert [site.name for site in stack_file.spec.sites] == [
        f"{site.name}-c{k}" for k in range(3) for site in prod.spec.sites
    ]
    assert [team.name for team in stack_file.spec.teams] == [
        f"{team.name}-c{k}" for k in range(3) for team in prod.spec.teams
    ]
    assert len(stack_file.spec.links) == 3 * len(prod.spec.links)
    networks = [ipaddress.ip_network(site.network.cidr) for site in stack_file.spec.sites]
    assert not any(a.overlaps(b) for i, a in enumerate(networks) for b in networks[i + 1 :])
    assert len({site.network.asn for site in stack_file.spec.sites}) == len(stack_file.spec.sites)


def test_a_copy_keeps_prod_values_inside_its_own_ranges():
    first = generate(2)["config"]["lattice:spec"]["sites"]
    aws, grid = first[4], first[6]  # copy 1 of aws-use1 and grid-hpc

    assert aws["name"] == "aws-use1-c1"
    grid_block = ipaddress.ip_network(grid["network"]["cidr"])
    # prod's runner sits on the grid's 10.50.8.0/24: the copy's runner sits on its own grid
    assert [ipaddress.ip_network(c).subnet_of(grid_block) for c in aws["kubernetes"]["runner_cidrs"]] == [True]
    assert grid["network"]["cidr"] != "10.50.0.0/16"


def test_the_floor_registers_every_resource_of_a_plan_with_its_inputs(dev_plan):
    recorded = json.loads(dev_plan.to_json())

    floor = replay(recorded)

    assert json.loads(floor.to_json())["resources"] == recorded["resources"]
