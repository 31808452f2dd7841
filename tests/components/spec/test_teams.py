"""Teams in the spec: per-site keys, Pod Security levels and the warnings the sites' hardware calls for, and
CPU / memory quotas derived from (and checked against) the hosts the catalog knows."""

from __future__ import annotations

import pytest

from lattice.components.spec import SpecError, parse_spec
from lattice.components.spec.teams import host_share, team_on_site
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, spec_with

IB_POOL = {"name": "ib", "gpu_model": "H100-80GB", "gpu_memory_gib": 80, "gpus_per_node": 8, "max_nodes": 4,
           "fabric": "infiniband", "fabric_bandwidth_gbps": 3200}  # fmt: skip
P5_POOL = {"name": "p5", "instance_type": "p5.48xlarge", "max_nodes": 2}


def _issues(spec: dict) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        parse_spec(spec, "inline")
    return [(issue.path, issue.message) for issue in caught.value.issues]


def _warnings(spec: dict) -> list[tuple[str, str]]:
    found = []
    parse_spec(spec, "inline", warnings=found)
    return [(issue.path, issue.message) for issue in found]


def test_old_team_entries_keep_working_with_restricted_and_derived_defaults():
    spec = parse_spec(
        spec_with({**GRID_SITE, "gpu_pools": [IB_POOL]}, teams=[{"name": "climate", "gpu_quota": 8}]), "x"
    )
    team = team_on_site(spec.teams[0], spec.sites[0])
    assert (team.pod_security, team.pod_security_explicit, team.pod_security_reason) == ("restricted", False, None)
    # existing hardware: the standards' 24 CPUs and 256 GiB per accelerator, plus the base allowance
    assert (team.cpu, team.memory_gib, team.storage_gib, team.volume_claims) == (16 + 8 * 24, 64 + 8 * 256, 1024, 20)


def test_catalog_hosts_set_the_share_per_accelerator():
    aws = parse_spec(spec_with({**AWS_SITE, "gpu_pools": [P5_POOL]}), "x").sites[0]
    assert host_share(aws) == (24.0, 256.0)  # p5.48xlarge: 192 vCPU, 2,048 GiB, 8 GPUs
    gcp = {**GCP_SITE, "gpu_pools": [{"name": "a3", "machine_type": "a3-megagpu-8g", "max_nodes": 2}]}
    assert host_share(parse_spec(spec_with(gcp), "x").sites[0]) == (26.0, 234.0)  # 208 vCPU, 1,872 GB


def test_per_site_values_override_defaults_site_by_site():
    edge = {**GRID_SITE, "name": "edge", "tier": "edge", "network": {"cidr": "10.60.0.0/20"}}
    team = {"name": "t", "cpu": {"grid-hpc": 64}, "memory_gib": 512, "volume_claims": {"edge": 3},
            "pod_security": {"grid-hpc": "baseline"}, "pod_security_reason": "images run as root"}  # fmt: skip
    spec = parse_spec(spec_with(GRID_SITE, edge, teams=[team]), "x")
    grid, edge_team = (team_on_site(spec.teams[0], site) for site in spec.sites)
    assert (grid.cpu, grid.memory_gib, grid.volume_claims, grid.pod_security) == (64, 512, 20, "baseline")
    assert (edge_team.cpu, edge_team.memory_gib, edge_team.volume_claims, edge_team.pod_security) == (
        16,
        512,
        3,
        "restricted",
    )
    assert (grid.pod_security_explicit, edge_team.pod_security_explicit) == (True, False)


@pytest.mark.parametrize(
    ("team", "path", "message"),
    [
        (
            {"pod_security": "baseline"},
            "teams[0].pod_security_reason",
            "team 't' enforces 'baseline' on 'grid-hpc', above restricted; say why in pod_security_reason",
        ),
        (
            {"pod_security_reason": "just in case"},
            "teams[0].pod_security_reason",
            "team 't' enforces restricted everywhere, so pod_security_reason explains nothing; remove it",
        ),
        (
            {"pod_security": "root"},
            "teams[0].pod_security",
            "the value: use one of 'restricted', 'baseline' or 'privileged' (got 'root'); give one value for "
            "every site the team is on, or one per site: {site-name: value}",
        ),
        (
            {"cpu": {"grdi": 8}},
            "teams[0].cpu.grdi",
            "unknown site 'grdi'; use one of: grid-hpc",
        ),
        (
            {"cpu": {"grid-hpc": 0}},
            "teams[0].cpu",
            "the value for 'grid-hpc': must be at least 1 (got 0)",
        ),
        (
            {"memory_gib": "lots"},
            "teams[0].memory_gib",
            "the value: must be a whole number (got 'lots')",
        ),
    ],
)
def test_bad_team_keys_name_their_path_and_fix(team, path, message):
    issues = _issues(spec_with(GRID_SITE, teams=[{"name": "t", **team}]))
    assert any(p == path and message in m for p, m in issues), issues


def test_per_site_keys_for_sites_the_team_is_not_on_are_refused():
    spec = spec_with(AWS_SITE, GRID_SITE, teams=[{"name": "t", "storage_gib": {"aws-use1": 10}}])
    assert _issues(spec) == [
        (
            "teams[0].storage_gib.aws-use1",
            "team 't' has no namespace on 'aws-use1'; add 'aws-use1' to the team's sites or remove its storage_gib "
            "entry",
        )
    ]


def test_a_cpu_quota_that_cannot_hold_one_node_of_the_teams_gpus_is_an_error():
    aws = {**AWS_SITE, "gpu_pools": [P5_POOL]}
    team = {"name": "t", "gpu_quota": 8, "sites": ["aws-use1"], "cpu": 64, "memory_gib": {"aws-use1": 2048}}
    assert _issues(spec_with(aws, teams=[team])) == [
        (
            "teams[0].cpu",
            "team 't' may request 64 CPUs on 'aws-use1', but one node's worth of its accelerator pods there — 8 of "
            "the 8 accelerators of pool 'p5' (p5.48xlarge: 192 CPUs) — needs 192; raise cpu to at least 192 (cpu: "
            "{aws-use1: 192}) or remove it to take the default",
        )
    ]
    # a team with fewer accelerators than a node needs only their share of it
    smaller = {**team, "gpu_quota": 2, "cpu": 48, "memory_gib": 512}
    assert parse_spec(spec_with(aws, teams=[smaller]), "x").teams[0].cpu == 48


def test_hosts_the_catalog_does_not_know_are_not_judged():
    grid = {**GRID_SITE, "gpu_pools": [IB_POOL]}
    team = {"name": "t", "gpu_quota": 8, "cpu": 1, "pod_security": "privileged", "pod_security_reason": "RDMA"}
    assert parse_spec(spec_with(grid, teams=[team]), "x").teams[0].cpu == 1


def test_default_levels_warn_where_the_hardware_needs_privileged():
    grid = {**GRID_SITE, "gpu_pools": [IB_POOL], "storage": {"scratch": {"host_path": "/scratch"}}}
    aws = {**AWS_SITE, "gpu_pools": [P5_POOL]}
    teams = [{"name": "t", "sites": ["grid-hpc", "aws-use1"]}]
    assert _warnings(spec_with(aws, grid, teams=teams)) == [
        (
            "teams[0].pod_security",
            "team 't' enforces 'restricted' (the default) on 'aws-use1', where EFA pods (pool 'p5') add IPC_LOCK to "
            "pin registered memory (the EKS AL2023 AMI raises no RLIMIT_MEMLOCK for containers); instance-store NVMe "
            "scratch (pool 'p5') is a hostPath volume. Only privileged admits that, so such pods would be refused: if "
            "the team runs them there, set pod_security: {aws-use1: privileged} with a pod_security_reason; to keep "
            "'restricted', set it for 'aws-use1' explicitly",
        ),
        (
            "teams[0].pod_security",
            "team 't' enforces 'restricted' (the default) on 'grid-hpc', where RDMA pods (pool 'ib') add IPC_LOCK for "
            "the RDMA shared device plugin; node-local scratch (/scratch) is a hostPath volume. Only privileged "
            "admits that, so such pods would be refused: if the team runs them there, set pod_security: {grid-hpc: "
            "privileged} with a pod_security_reason; to keep 'restricted', set it for 'grid-hpc' explicitly",
        ),
    ]
    explicit = [{**teams[0], "pod_security": {"grid-hpc": "privileged", "aws-use1": "restricted"},
                 "pod_security_reason": "RDMA"}]  # fmt: skip
    assert _warnings(spec_with(aws, grid, teams=explicit)) == []


@pytest.mark.parametrize(
    ("machine", "need"),
    [
        ("a3-highgpu-8g", "GPUDirect-TCPX pods (pool 'a3') run Google's tcpx-daemon sidecar privileged"),
        ("a3-megagpu-8g", "GPUDirect-TCPXO pods (pool 'a3') run the tcpxo-daemon sidecar with NET_ADMIN"),
        (
            "a3-ultragpu-8g",
            "GPUDirect-RDMA pods (pool 'a3') mount the NCCL gIB plugin and NVIDIA libraries by hostPath",
        ),
    ],
)
def test_gpudirect_flavours_need_privileged(machine, need):
    gcp = {**GCP_SITE, "gpu_pools": [{"name": "a3", "machine_type": machine, "max_nodes": 2}]}
    ((path, message),) = _warnings(spec_with(gcp, teams=[{"name": "t", "sites": ["gcp-usc1"]}]))
    assert path == "teams[0].pod_security" and need in message


def test_ethernet_pools_and_plain_gpus_need_nothing_more():
    ethernet = {**IB_POOL, "fabric": "ethernet"}
    g2 = {**GCP_SITE, "gpu_pools": [{"name": "g2", "machine_type": "g2-standard-48", "max_nodes": 2}]}
    spec = spec_with(
        {**GRID_SITE, "gpu_pools": [ethernet]}, g2, teams=[{"name": "t", "sites": ["grid-hpc", "gcp-usc1"]}]
    )
    assert _warnings(spec) == []
