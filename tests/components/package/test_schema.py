"""The package schema is the consumers' contract: committed (schema/package.schema.json, ``make schema``), current,
and guarded against changes that would break a program written against it."""

from __future__ import annotations

import copy
import json

import pytest

from lattice.components.package import schema as package_schema
from lattice.components.package.host import version
from tests.conftest import ROOT

POOL = "lattice:index:AwsGpuNodePool"


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads((ROOT / "schema" / "package.schema.json").read_text())


def test_the_committed_schema_is_the_one_the_components_give(committed):
    assert package_schema.current() == committed, "schema/package.schema.json is stale: run make schema"
    assert committed["version"] == version()


def _edited(schema: dict, edit) -> dict:
    changed = copy.deepcopy(schema)
    edit(changed)
    return changed


def _pool(schema: dict) -> dict:
    return schema["resources"][POOL]


BREAKING = {
    "an input removed": (
        lambda s: _pool(s)["inputProperties"].pop("vpcId"),
        [f"{POOL}: input 'vpcId' removed"],
    ),
    "an input retyped": (
        lambda s: _pool(s)["inputProperties"].update(subnetIds={"type": "string"}),
        [f"{POOL}: input 'subnetIds' retyped from ('array', ('string', None, None), None) to ('string', None, None)"],
    ),
    "an input made required": (
        lambda s: _pool(s)["requiredInputs"].append("lustreClient"),
        [f"{POOL}: input 'lustreClient' is now required"],
    ),
    "an input that took outputs made plain": (
        lambda s: _pool(s)["inputProperties"]["clusterName"].update(plain=True),
        [f"{POOL}: input 'clusterName' no longer takes outputs (now plain)"],
    ),
    # Go types a plain input as a plain value and one that takes outputs as an input interface (pulumi/pulumi
    # pkg/codegen/go/gen.go): `ClusterName: "x"` is no pulumi.StringInput, `MaxNodes: 4` no *int.
    "a plain input made to take outputs, which a Go program's plain value no longer compiles against": (
        lambda s: _pool(s)["inputProperties"]["pool"].pop("plain"),
        [f"{POOL}: input 'pool' now takes outputs (was plain: a Go program's value breaks)"],
    ),
    "a required plain nested input made optional, which Go types as a pointer": (
        lambda s: s["types"]["lattice:index:AwsGpuPool"]["required"].remove("maxNodes"),
        ["lattice:index:AwsGpuPool: plain input 'maxNodes' made optional (a pointer in Go: a program's value breaks)"],
    ),
    "an output removed": (
        lambda s: _pool(s)["properties"].pop("nodeRoleArn"),
        [f"{POOL}: output 'nodeRoleArn' removed"],
    ),
    "a nested input retyped": (
        lambda s: s["types"]["lattice:index:AwsGpuPool"]["properties"]["maxNodes"].update(type="string"),
        ["lattice:index:AwsGpuPool: input 'maxNodes' retyped from ('integer', None, None) to ('string', None, None)"],
    ),
    "a component removed": (lambda s: s["resources"].pop(POOL), [f"{POOL}: component removed"]),
}


@pytest.mark.parametrize("case", sorted(BREAKING))
def test_a_change_that_breaks_a_consumer_is_named(committed, case):
    edit, expected = BREAKING[case]
    assert package_schema.breaking_changes(committed, _edited(committed, edit)) == expected


COMPATIBLE = {
    "an optional input added": lambda s: _pool(s)["inputProperties"].update(spotPrice={"type": "number"}),
    "an output added": lambda s: _pool(s)["properties"].update(asgName={"type": "string"}),
    "a component added": lambda s: s["resources"].update({"lattice:index:New": {"isComponent": True}}),
    "a required input made optional": lambda s: _pool(s)["requiredInputs"].remove("vpcId"),
    # Go types an optional array or map as it types a required one (both can be nil): no pointer.
    "a required plain list made optional": lambda s: s["types"]["lattice:index:OnPremGateway"]["required"].remove(
        "ranges"
    ),
    "a description reworded": lambda s: _pool(s).update(description="Another description."),
}


@pytest.mark.parametrize("case", sorted(COMPATIBLE))
def test_a_change_no_consumer_notices_passes(committed, case):
    assert package_schema.breaking_changes(committed, _edited(committed, COMPATIBLE[case])) == []


def test_a_breaking_change_needs_the_next_release_under_semantic_versioning(committed):
    broken = _edited(committed, lambda s: _pool(s)["inputProperties"].pop("vpcId"))
    reason = package_schema.refused(committed, {**broken, "version": committed["version"]})
    assert reason is not None and f"{POOL}: input 'vpcId' removed" in reason
    assert "CHANGELOG.md" in reason
    patch = ".".join([*committed["version"].split(".")[:2], "99"])
    assert package_schema.refused(committed, {**broken, "version": patch}) is not None  # a patch release: refused
    assert package_schema.refused({**committed, "version": "0.4.2"}, {**broken, "version": "0.5.0"}) is None
    assert package_schema.refused({**committed, "version": "1.4.2"}, {**broken, "version": "1.5.0"}) is not None
    assert package_schema.refused({**committed, "version": "1.4.2"}, {**broken, "version": "2.0.0"}) is None


def _keys(typed_dict) -> set[str]:
    return set(typed_dict.__annotations__)


def test_the_public_nested_inputs_are_the_stack_files_keys():
    """Each nested input mirrors a stack-file model and is validated by it: a key the model lacks would be refused
    as unknown, a key renamed in the model would silently stop working in the package."""
    from lattice.components.compute.aws_gpu_node_pool import AwsGpuPool, AwsPoolCapacity
    from lattice.components.compute.gcp_gpu_node_pool import (
        GcpGpuPool,
        GcpPoolCapacity,
        GpuNicNetwork,
        GpuNicNetworks,
        GuestAccelerator,
        TpuSlice,
    )
    from lattice.components.network.vpn import AdmitRule, IkeProposals, LinkSettings
    from lattice.components.package.inputs import TrainingWorkload
    from lattice.components.spec.links import AdmitSpec, IkeSpec, LinkSpec
    from lattice.components.spec.model import (
        AwsCapacitySpec,
        AwsGpuPoolSpec,
        GcpCapacitySpec,
        GcpGpuPoolSpec,
        GuestAcceleratorSpec,
        HostGpuNicsSpec,
        HostNicNetworkSpec,
        TpuSliceSpec,
        WorkloadSpec,
    )
    from lattice.components.spec.storage import (
        BackupSpec,
        DataRepositorySpec,
        DurabilitySpec,
        FsxLustreSpec,
        ManagedLustreSpec,
    )
    from lattice.components.storage.fsx_lustre import FsxBackups, FsxDataRepository, FsxDurability, FsxLustreFileSystem
    from lattice.components.storage.managed_lustre import ManagedLustreInstance

    same = [
        (AwsPoolCapacity, AwsCapacitySpec),
        (FsxBackups, BackupSpec),
        (FsxDataRepository, DataRepositorySpec),
        (FsxDurability, DurabilitySpec),
        (IkeProposals, IkeSpec),
        (AdmitRule, AdmitSpec),
        (GcpPoolCapacity, GcpCapacitySpec),
        (GuestAccelerator, GuestAcceleratorSpec),
        (TpuSlice, TpuSliceSpec),
        (GpuNicNetwork, HostNicNetworkSpec),
        (GpuNicNetworks, HostGpuNicsSpec),
    ]
    for public, model in same:
        assert _keys(public) == set(model.model_fields), public.__name__
    # Left out on purpose: where the site decides (zones, the workload by name, adoption, Intelligent-Tiering's
    # read cache), and a hub's spokes (one link is one pair).
    subsets = [
        (AwsGpuPool, AwsGpuPoolSpec, {"availability_zones", "workload"}),
        (GcpGpuPool, GcpGpuPoolSpec, {"zone", "workload"}),
        (FsxLustreFileSystem, FsxLustreSpec, {"zone", "workload", "admin_clients", "existing_file_system",
                                               "throughput_mbps", "read_cache"}),
        (TrainingWorkload, WorkloadSpec, {"sequence_length", "micro_batch_size", "activation_checkpointing"}),
        (LinkSettings, LinkSpec, {"sites", "hub", "spokes"}),
        (ManagedLustreInstance, ManagedLustreSpec, {"zone", "workload", "admin_clients", "cmek"}),
    ]  # fmt: skip
    for public, model, left_out in subsets:
        assert _keys(public) == set(model.model_fields) - left_out, public.__name__
