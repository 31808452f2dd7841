"""JSON Schema of the stack spec, for editors (yaml-language-server) and `lattice schema`."""

from __future__ import annotations

from typing import Any

from .loader import SPEC_KEY
from .model import StackSpec

SCHEMA_ID = "https://lattice.dev/schema/stack-file.schema.json"


# Examples for the fields whose declaration gives none and whose default is no example (null, empty): values
# as the shipped and test stacks write them. Fields with a default or a fixed set of values show those.
EXAMPLES: dict[str, Any] = {
    "StackSpec.owner": "research-computing@example.edu",
    "StackSpec.protect_stateful": True,
    "StackSpec.tags": {"project": "fusion"},
    "AdmitSpec.ports": "8000-8100",
    "AuditSpec.data_access_services": ["allServices"],
    "AuditSpec.data_events": ["datasets", "checkpoints"],
    "AuditSpec.kept_log_buckets": [365],
    "AwsCapacitySpec.ends_at": "2026-12-15T11:30:00Z",
    "AwsCapacitySpec.reservation_id": "cr-0a1b2c3d4e5f60718",
    "AwsCapacitySpec.starts_at": "2026-12-01T11:30:00Z",
    "AwsGpuPoolSpec.autoscale": True,
    "AwsGpuPoolSpec.availability_zones": ["us-east-1a"],
    "AwsGpuPoolSpec.desired_nodes": 2,
    "AwsGpuPoolSpec.efa": True,
    "AwsGpuPoolSpec.instance_type": "p5.48xlarge",
    "AwsGpuPoolSpec.labels": {"lattice.dev/tier": "gold"},
    "AwsGpuPoolSpec.placement_group": True,
    "AwsGpuPoolSpec.workload": "fusion-7b",
    "AwsNetworkSpec.asn": 64600,
    "AwsNetworkSpec.cidr": "10.20.0.0/16",
    "AwsSite.tags": {"project": "fusion"},
    "BucketSpec.soft_delete_days": 7,
    "ClusterPoolSpec.desired_nodes": 4,
    "ClusterPoolSpec.gpu_model": "A100-80GB",
    "ClusterPoolSpec.labels": {"tier": "gold"},
    "ClusterPoolSpec.node_selector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
    "ClusterPoolSpec.workload": "fusion-70b",
    "DataRepositorySpec.bucket": "datasets",
    "DataRepositorySpec.path": "/datasets",
    "EksSpec.admin_role_arns": ["arn:aws:iam::123456789012:role/lattice-platform-admin"],
    "EksSpec.public_access_cidrs": ["198.51.100.0/24"],
    "EksSpec.runner_cidrs": ["10.50.8.0/24"],
    "ExistingMountSpec.host_path": "/lustre",
    "ExistingMountSpec.mount_path": "/home",
    "ExistingMountSpec.nfs_export": "/export/home",
    "ExistingMountSpec.nfs_server": "nfs.grid.example.edu",
    "ExistingMountSpec.write_mbps": 20000,
    "ExpressCheckpointsSpec.zone": "us-east-1a",
    "FilestoreSpec.zone": "us-central1-a",
    "FsxLustreSpec.capacity_gib": 2400,
    "FsxLustreSpec.checkpoint_seconds": 300,
    "FsxLustreSpec.metadata_iops": 12000,
    "FsxLustreSpec.mount_path": "/lustre/scratch",
    "FsxLustreSpec.throughput_mbps": 4000,
    "FsxLustreSpec.throughput_mbps_per_tib": 250,
    "FsxLustreSpec.workload": "fusion-7b",
    "FsxLustreSpec.zone": "us-east-1a",
    "GcpCapacitySpec.queued_provisioning": True,
    "GcpCapacitySpec.reservation": "a3-mega-reservation",
    "GcpGpuPoolSpec.compact_placement": True,
    "GcpGpuPoolSpec.desired_nodes": 2,
    "GcpGpuPoolSpec.labels": {"lattice.dev/tier": "gold"},
    "GcpGpuPoolSpec.machine_type": "a3-megagpu-8g",
    "GcpGpuPoolSpec.workload": "fusion-70b-lora",
    "GcpGpuPoolSpec.zone": "us-central1-a",
    "GcpNetworkSpec.asn": 64700,
    "GcpNetworkSpec.cidr": "10.30.0.0/16",
    "GcpNetworkSpec.zones": ["us-central1-a", "us-central1-c"],
    "GcpSite.tags": {"project": "fusion"},
    "GkeSpec.master_authorized_cidrs": ["10.50.0.0/16"],
    "GkeSpec.rbac_security_group": "gke-security-groups@example.edu",
    "IkeSpec.dh_groups": [20],
    "IkeSpec.encryption": ["AES256-GCM-16"],
    "IkeSpec.integrity": ["SHA2-384"],
    "KubernetesAccessSpec.context": "hpc-admin@grid",
    "KubernetesAccessSpec.kubeconfig_secret": "beamlineKubeconfig",
    "KubernetesNetworkSpec.asn": 4200000100,
    "KubernetesNetworkSpec.cidr": "10.50.0.0/16",
    "KubernetesNetworkSpec.routed_cidrs": ["10.51.0.0/16"],
    "KubernetesSite.location": "campus data centre, building 7",
    "KubernetesSite.tags": {"instrument": "beamline-8id"},
    "LifecycleSpec.cold_after_days": 30,
    "LifecycleSpec.cold_class": "GLACIER_IR",
    "LifecycleSpec.expire_days": 365,
    "LinkSpec.hub": "aws-use1",
    "LinkSpec.inside_block": "169.254.42.64/26",
    "LinkSpec.sites": ["aws-use1", "gcp-usc1"],
    "LinkSpec.tunnel_size": "large",
    "LinkSpec.spokes": [{"site": "grid-hpc", "bandwidth_gbps": 10}, "edge-beamline"],
    "ManagedLustreSpec.capacity_gib": 9000,
    "ManagedLustreSpec.tier": 1000,
    "ManagedLustreSpec.zone": "us-central1-a",
    "ObjectLockSpec.locked": True,
    "ObjectLockSpec.mode": "COMPLIANCE",
    "ReadCacheSpec.size_gib": 64,
    "ScratchSpec.capacity_gib": 3500,
    "SpokeSpec.bandwidth_gbps": 10,
    "SpokeSpec.routing": "static",
    "SpokeSpec.tunnel_size": "standard",
    "TeamSpec.aws_role_arns": ["arn:aws:iam::123456789012:role/climate-ml"],
    "TeamSpec.cpu": {"aws-use1": 96},
    "TeamSpec.gcp_members": ["group:fusion-ml@example.edu"],
    "TeamSpec.groups": ["climate-ml"],
    "TeamSpec.memory_gib": {"grid-hpc": 512},
    "TeamSpec.namespace": "materials-sim",
    "TeamSpec.pod_security": "baseline",
    "TeamSpec.pod_security_reason": "multi-node training over InfiniBand RDMA (IPC_LOCK)",
    "TeamSpec.sites": ["grid-hpc", "aws-use1"],
    "TeamSpec.storage_gib": 2048,
    "TeamSpec.volume_claims": 20,
    "TpuSliceSpec.topology": "2x2x2",
    "VpnGatewaySpec.public_ips": ["192.0.2.10", "192.0.2.11"],
}


def json_schema() -> dict[str, Any]:
    """The schema of the ``lattice:spec`` object alone, for editors: sites chosen by ``provider``, examples."""
    schema = StackSpec.model_json_schema(mode="validation")
    schema = _select_by_discriminator(schema)
    defs = schema.get("$defs", {})
    for name, definition in [("StackSpec", schema), *defs.items()]:
        for field, prop in definition.get("properties", {}).items():
            if "examples" not in prop:
                example = _example(f"{name}.{field}", prop, defs)
                if example is not None:
                    prop["examples"] = [example]
    return schema


def _select_by_discriminator(node: Any) -> Any:
    """Pydantic writes a discriminated union as ``oneOf`` + OpenAPI's ``discriminator``, which JSON Schema
    validators (the YAML language server's among them) ignore: a typo in an AWS site then fails every branch and
    is reported as "does not match any of". ``if provider is X then X's schema`` makes them judge the site by
    its own provider and report the key that is wrong."""
    if isinstance(node, list):
        return [_select_by_discriminator(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _select_by_discriminator(value) for key, value in node.items()}
    if "discriminator" in node and "oneOf" in node:
        key = node["discriminator"]["propertyName"]
        mapping = node["discriminator"]["mapping"]
        rest = {k: v for k, v in node.items() if k not in {"discriminator", "oneOf"}}
        return {
            **rest,
            "type": "object",
            "required": [key],
            "properties": {key: {"enum": sorted(mapping), "description": f"Picks the kind: {', '.join(mapping)}."}},
            "allOf": [
                {"if": {"properties": {key: {"const": value}}, "required": [key]}, "then": {"$ref": ref}}
                for value, ref in mapping.items()
            ],
        }
    return node


def _example(key: str, prop: dict[str, Any], defs: dict[str, Any]) -> Any:
    """An example for one property: its own, else the table's, else its default, else its first allowed value,
    else one built from the object it holds (its required fields' examples)."""
    if prop.get("examples"):
        return prop["examples"][0]
    if key in EXAMPLES:
        return EXAMPLES[key]
    if prop.get("default") not in (None, [], {}):
        return prop["default"]
    if "const" in prop:
        return prop["const"]
    if "enum" in prop:
        return prop["enum"][0]
    ref = prop.get("$ref") or next((a["$ref"] for a in prop.get("anyOf", []) if "$ref" in a), None)
    if ref is not None:
        return _minimal(ref, defs)
    items = prop.get("items", {})
    if prop.get("type") == "array" and "$ref" in items:
        return [_minimal(items["$ref"], defs)]
    if prop.get("type") == "array" and "allOf" in items:  # sites: an example of the first kind
        return [_minimal(items["allOf"][0]["then"]["$ref"], defs)]
    return None


def _minimal(ref: str, defs: dict[str, Any]) -> dict[str, Any]:
    """The smallest object of a definition: its required fields, each with its example."""
    name = ref.rsplit("/", 1)[-1]
    definition = defs[name]
    return {
        field: _example(f"{name}.{field}", definition["properties"][field], defs)
        for field in definition.get("required", [])
    }


def stack_file_schema() -> dict[str, Any]:
    """The schema of a whole ``stacks/Pulumi.<env>.yaml`` file, spec nested under ``config``.

    Other config keys (``aws:region``, secrets in ``{secure: …}`` form) stay allowed, as
    Pulumi allows them; only ``lattice:spec`` is described precisely.
    """
    spec = json_schema()
    defs = spec.pop("$defs", {})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Lattice stack file",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": {SPEC_KEY: spec},
                "required": [SPEC_KEY],
            },
            "encryptionsalt": {"type": "string"},
            "secretsprovider": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "environment": {},
        },
        "required": ["config"],
        "$defs": defs,
    }
