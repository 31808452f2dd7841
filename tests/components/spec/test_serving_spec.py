"""The sites' ``inference`` entries (components/spec/serving.py, serving_validators.py): each rule refuses what
cannot be served, at the key path, saying what to do; prod's beamline endpoint is the compliant baseline."""

from __future__ import annotations

import copy

import pytest

from lattice.components.spec import SpecError, ValidationContext, parse_spec
from tests.conftest import ROOT, read_yaml

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
EDGE = 3  # sites[3]: edge-beamline
ENTRY = f"sites[{EDGE}].inference[0]"
CONTEXT = ValidationContext(knows_config=False)  # the receivers' secrets are not what these tests are about


def prod_raw() -> dict:
    return read_yaml(PROD)["config"]["lattice:spec"]


def issues(raw: dict, warnings: list | None = None) -> dict[str, str]:
    try:
        parse_spec(raw, "prod", CONTEXT, warnings=warnings)
    except SpecError as error:
        return {issue.path: issue.message for issue in error.issues}
    return {}


def edit(change) -> dict:
    raw = prod_raw()
    change(raw, raw["sites"][EDGE]["inference"][0])
    return raw


def team(raw: dict, name: str) -> dict:
    return next(t for t in raw["teams"] if t["name"] == name)


def test_prod_serves_its_beamline_model():
    warnings: list = []
    assert issues(prod_raw(), warnings) == {}
    assert [w for w in warnings if ".inference" in w.path] == []
    assert prod_raw()["sites"][EDGE]["name"] == "edge-beamline"


CASES = {
    "70b-does-not-fit": (
        lambda raw, e: e["model"].update(known="llama-3-70b"),
        f"{ENTRY}.pool",
        "does not fit pool 'infer-l40s' (TP 4, the whole node): 32.9 GiB of weights and 10.0 GiB of KV cache per GPU",
    ),
    "unknown-model": (lambda raw, e: e["model"].update(known="llama-9-8b"), f"{ENTRY}.model.known", "unknown model"),
    "known-and-shape": (
        lambda raw, e: e["model"].update(layers=32),
        f"{ENTRY}.model",
        "give either known (a model of Lattice's table) or the shape, not both",
    ),
    "unknown-team": (lambda raw, e: e.update(team="physics"), f"{ENTRY}.team", "unknown team 'physics'"),
    "team-elsewhere": (
        lambda raw, e: e.update(team="climate"),
        f"{ENTRY}.team",
        "team 'climate' has no namespace on 'edge-beamline'; add the site to its sites",
    ),
    "unknown-pool": (lambda raw, e: e.update(pool="infer-h100"), f"{ENTRY}.pool", "use one of: infer-l40s"),
    "too-many-replicas": (
        lambda raw, e: e.update(replicas={"min": 1, "max": 9}, cache={"access_mode": "ReadWriteMany"}),
        f"{ENTRY}.replicas.max",
        "9 replicas of 1 GPUs need 9; pool 'infer-l40s' has 8: lower replicas.max to 8",
    ),
    "one-node-volume": (
        lambda raw, e: e.update(replicas={"min": 1, "max": 5}),
        f"{ENTRY}.cache.access_mode",
        "a ReadWriteOnce volume is mounted on one node, which holds 4 replicas of 1 GPUs",
    ),
    "quota-below-a-replica": (
        lambda raw, e: (
            e["model"].update(known="llama-3-70b"),
            e.update(precision="int4"),
            team(raw, "beamline-ops").update(gpu_quota={"edge-beamline": 1}),
        ),
        f"{ENTRY}.team",
        "team 'beamline-ops' may use 1 GPUs on 'edge-beamline' (gpu_quota) and one replica needs 2",
    ),
    "context-beyond-the-model": (
        lambda raw, e: e.update(max_context=16384, concurrency=4),
        f"{ENTRY}.max_context",
        "llama-3-8b reads at most 8,192 tokens (max_position_embeddings); vLLM refuses a longer max_model_len",
    ),
    "no-export-address": (
        lambda raw, e: e["weights"].pop("address"),
        f"{ENTRY}.weights.address",
        "the weights cross from 'grid-hpc' to 'edge-beamline': name the address their export takes on 'grid-hpc'",
    ),
    "export-address-elsewhere": (
        lambda raw, e: e["weights"].update(address="10.60.0.41"),
        f"{ENTRY}.weights.address",
        "10.60.0.41 is outside 'grid-hpc' (10.50.0.0/16, 10.51.0.0/16)",
    ),
    "team-not-on-weights-site": (
        lambda raw, e: team(raw, "beamline-ops").update(sites=["edge-beamline"]),
        f"{ENTRY}.weights.site",
        "team 'beamline-ops' has no namespace on 'grid-hpc', where its weights' export runs",
    ),
    "unknown-mount": (
        lambda raw, e: e["weights"].update(mount="gpfs"),
        f"{ENTRY}.weights.mount",
        "'grid-hpc' has no mount 'gpfs'; use one of: lustre, home",
    ),
    "bucket-not-yet": (
        lambda raw, e: e.update(weights={"site": "aws-use1", "bucket": "checkpoints", "prefix": "fusion/m/"}),
        f"{ENTRY}.weights.bucket",
        "not yet: Lattice copies weights from a grid or edge site's file system",
    ),
    "restricted-over-the-hub": (
        lambda raw, e: e.update(team="materials", weights={**e["weights"], "path": "/materials/models/x"}),
        f"{ENTRY}.weights.site",
        "the weights are restricted (team 'materials') and would cross aws-use1 (grid-hpc → aws-use1 → "
        "edge-beamline; its transit gateway ends the IPsec tunnels): restricted data never leaves the grid and edge",
    ),
    "gcp-not-yet": (
        lambda raw, e: (
            raw["sites"][1]
            .setdefault("inference", [])
            .append({**copy.deepcopy(e), "team": "fusion", "pool": "train-a3mega"})
        ),
        "sites[1].inference[0]",
        "'gcp-usc1' is a GCP site: Lattice does not serve there yet",
    ),
    "duplicate-name": (
        lambda raw, e: raw["sites"][EDGE]["inference"].append(copy.deepcopy(e)),
        f"sites[{EDGE}].inference[1].name",
        "'xpcs-8b' is already inference[0]; name each once",
    ),
    "export-address-taken": (
        lambda raw, e: e["weights"].update(address="10.50.0.40"),
        f"{ENTRY}.weights.address",
        "10.50.0.40 is already observability.central.address's; give the export an address of its own",
    ),
    "min-replicas-zero": (
        lambda raw, e: e.update(replicas={"min": 0, "max": 2}),
        f"{ENTRY}.replicas.min",
        "`min` must be at least 1 (got 0)",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_rule_refuses_at_its_path(case):
    change, path, message = CASES[case]
    found = issues(edit(change))
    assert path in found, f"no issue at {path}: {found}"
    assert message in found[path], found[path]


def test_a_replica_count_beyond_the_quota_is_a_warning_not_an_error():
    raw = edit(
        lambda raw, e: (
            e.update(replicas={"min": 1, "max": 4}),
            team(raw, "beamline-ops").update(gpu_quota={"edge-beamline": 2}),
        )
    )
    warnings: list = []
    assert issues(raw, warnings) == {}
    message = "team 'beamline-ops' may use 2 GPUs on 'edge-beamline': Kueue admits 2 of the 4 replicas; the rest wait"
    assert [(w.path, w.message) for w in warnings if ".inference" in w.path] == [(f"{ENTRY}.replicas.max", message)]


def test_the_same_sites_mount_is_read_in_place_without_an_export():
    raw = edit(lambda raw, e: e.update(weights={"site": "edge-beamline", "mount": "detector", "path": "/models/x"}))
    assert issues(raw) == {}
    raw = edit(lambda raw, e: e.update(weights={"site": "edge-beamline", "mount": "detector", "path": "/models/x",
                                                "address": "10.60.0.41"}))  # fmt: skip
    assert issues(raw) == {
        f"{ENTRY}.weights.address": "the weights are on the serving site itself: nothing is exported; remove it"
    }


def test_an_entry_naming_a_team_or_weights_site_left_out_for_its_shape_reports_only_that_shape_error():
    """One mistake, one message: a typo in beamline-ops (the serving team) or in grid-hpc (the weights' site) leaves
    it out of the cross-field checks; the endpoint that names it is no "unknown team" / "unknown site" then."""
    raw = prod_raw()
    team(raw, "beamline-ops")["colour"] = "blue"
    assert list(issues(raw)) == [f"teams[{raw['teams'].index(team(raw, 'beamline-ops'))}].colour"]
    raw = prod_raw()
    raw["sites"][2]["network"]["colour"] = "blue"  # grid-hpc
    assert list(issues(raw)) == ["sites[2].network.colour"]


def test_slurm_clients_naming_a_site_left_out_for_its_shape_report_only_that_shape_error():
    """grid-hpc's Slurm admits logins from edge-beamline: a typo inside edge-beamline leaves it out, and its name
    under login_from / rest_from is no "unknown site" then, nor is anything else that rests on it wrong (the previous
    main gave 8 problems: those two, the served port, the MultiKueue worker and the metrics store unreachable)."""
    raw = prod_raw()
    assert "edge-beamline" in raw["sites"][2]["slurm"]["login_from"]
    raw["sites"][EDGE]["network"]["colour"] = "blue"
    assert list(issues(raw)) == [f"sites[{EDGE}].network.colour"]
