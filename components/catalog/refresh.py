"""Regenerate the AWS instance-type snapshot from ``ec2.describe_instance_types``.

``lattice catalog refresh --region R`` calls ``main`` against the real API. The committed snapshot was made
offline from moto's bundled instance-type data (no cloud is reachable from CI), reproducibly with::

    python -m lattice.components.catalog.refresh --moto --region us-east-1

Which types: every type whose accelerator a Kubernetes pool can schedule — ``GpuInfo`` (NVIDIA GPUs, whole
devices) or ``NeuronInfo`` (Trainium, Inferentia), with or without EFA. Types with an accelerator Lattice cannot
schedule are listed under ``skipped`` with the reason, so a refresh says what it left out: fractional GPUs
(``GpuPartitionSize`` below 1, e.g. g6f: a slice of an L4 that the NVIDIA device plugin cannot offer as
``nvidia.com/gpu``) and accelerators known only from ``InferenceAcceleratorInfo`` (dl2q's Qualcomm AI100, which no
device plugin Lattice installs serves). FPGA types (``FpgaInfo``) are not accelerators Lattice pools.

Per type the snapshot keeps what components and the sizing engine ask for: the accelerator (``GpuInfo.Gpus`` or
``NeuronInfo.NeuronDevices``), the CPU architecture (the EKS AMI type depends on it), vCPUs and memory,
``NetworkInfo.EfaInfo.MaximumEfaInterfaces`` (0 for types without EFA), ``NetworkInfo.MaximumNetworkCards``, every
``NetworkInfo.NetworkCards[]`` entry and ``InstanceStorageInfo``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import boto3
import botocore
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from .aws import AWS_SNAPSHOT

MIB_PER_GIB = 1024
# NeuronInfo has no manufacturer or family field: the device name says which Neuron family it is.
NEURON_FAMILIES = {"Trainium": "trainium", "Inferentia": "inferentia"}
NEURON_MANUFACTURER = "AWS"


def _single_device(devices: list[dict[str, Any]], instance_type: str) -> dict[str, Any]:
    if len(devices) != 1:
        raise ValueError(
            f"{instance_type} reports {len(devices)} accelerator models; the catalog records one per type, "
            "so extend components/catalog before refreshing"
        )
    return devices[0]


def _accelerator(info: dict[str, Any]) -> dict[str, Any]:
    name = info["InstanceType"]
    if "GpuInfo" in info:
        device = _single_device(info["GpuInfo"]["Gpus"], name)
        kind, manufacturer = "gpu", device["Manufacturer"]
    else:
        device = _single_device(info["NeuronInfo"]["NeuronDevices"], name)
        family = next((prefix for prefix in NEURON_FAMILIES if device["Name"].startswith(prefix)), None)
        if family is None:
            raise ValueError(f"{name} has Neuron device '{device['Name']}'; add its family to NEURON_FAMILIES")
        kind, manufacturer = NEURON_FAMILIES[family], NEURON_MANUFACTURER
    return {
        "accelerator_kind": kind,
        "accelerator_manufacturer": manufacturer,
        "accelerator_name": device["Name"],
        "accelerator_count": device["Count"],
        "accelerator_memory_gib": device["MemoryInfo"]["SizeInMiB"] / MIB_PER_GIB,
        # Neuron devices hold several NeuronCores, which pods may request one by one.
        "cores_per_accelerator": device["CoreInfo"]["Count"] if kind != "gpu" else None,
    }


def _network_card(card: dict[str, Any]) -> dict[str, Any]:
    return {
        "index": card["NetworkCardIndex"],
        "baseline_bandwidth_gbps": card["BaselineBandwidthInGbps"],
        "peak_bandwidth_gbps": card["PeakBandwidthInGbps"],
        "maximum_network_interfaces": card["MaximumNetworkInterfaces"],
        "interface_types": sorted(card["InterfaceTypes"]),
    }


def _instance_store(storage: dict[str, Any] | None) -> dict[str, Any] | None:
    if storage is None:
        return None
    return {
        "disks": [{"count": d["Count"], "size_gb": d["SizeInGB"], "disk_type": d["Type"]} for d in storage["Disks"]],
        "total_size_gb": storage["TotalSizeInGB"],
        "nvme_support": storage["NvmeSupport"],
    }


def _architecture(info: dict[str, Any]) -> str:
    # Graviton GPU types (g5g) are arm64 only; every other accelerator type runs x86_64 (some also list i386).
    return "arm64" if "arm64" in info["ProcessorInfo"]["SupportedArchitectures"] else "x86_64"


def _record(info: dict[str, Any]) -> dict[str, Any]:
    network = info["NetworkInfo"]
    efa = network.get("EfaInfo") if network.get("EfaSupported", False) else None
    return {
        "name": info["InstanceType"],
        **_accelerator(info),
        "architecture": _architecture(info),
        "vcpus": info["VCpuInfo"]["DefaultVCpus"],
        "memory_gib": info["MemoryInfo"]["SizeInMiB"] / MIB_PER_GIB,
        "max_efa_interfaces": efa["MaximumEfaInterfaces"] if efa else 0,
        "maximum_network_cards": network["MaximumNetworkCards"],
        "network_cards": sorted((_network_card(card) for card in network["NetworkCards"]), key=lambda c: c["index"]),
        "instance_store": _instance_store(info.get("InstanceStorageInfo")),
    }


def _why_not_poolable(info: dict[str, Any]) -> str | None:
    """Why Lattice cannot pool this accelerator type, or None when it can (see the module docstring)."""
    if "GpuInfo" in info:
        partial = [gpu for gpu in info["GpuInfo"]["Gpus"] if gpu.get("GpuPartitionSize", 1.0) < 1.0]
        if partial:
            share = partial[0]["GpuPartitionSize"]
            return (
                f"a fractional GPU ({share:g} of one {partial[0]['Name']}): the NVIDIA device plugin offers whole "
                "GPUs only"
            )
        return None
    if "NeuronInfo" in info:
        return None
    accelerators = info["InferenceAcceleratorInfo"]["Accelerators"]
    names = ", ".join(sorted({a["Name"] for a in accelerators}))
    return f"{names} (InferenceAcceleratorInfo only): no device plugin Lattice installs serves it"


def build_aws_catalog(ec2_client: Any) -> dict[str, Any]:
    """Every GPU / Trainium / Inferentia type the client's region describes, normalised and sorted.

    ``skipped`` names the accelerator types Lattice cannot pool, with the reason.
    """
    records: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for page in ec2_client.get_paginator("describe_instance_types").paginate():
        for info in page["InstanceTypes"]:
            if not {"GpuInfo", "NeuronInfo", "InferenceAcceleratorInfo"} & set(info):
                continue
            reason = _why_not_poolable(info)
            if reason is None:
                records[info["InstanceType"]] = _record(info)
            else:
                skipped[info["InstanceType"]] = reason
    return {"instance_types": dict(sorted(records.items())), "skipped": dict(sorted(skipped.items()))}


def _snapshot(region: str, from_moto: bool) -> dict[str, Any]:
    if not from_moto:
        catalog = build_aws_catalog(boto3.session.Session(region_name=region).client("ec2"))
        source = f"describe_instance_types (AWS EC2 API, botocore {botocore.__version__}), {region}"
        return {"source": source, "generated_by": f"lattice catalog refresh --region {region}", **catalog}
    # moto is a development dependency: only this offline path needs it.
    import moto

    with moto.mock_aws():
        catalog = build_aws_catalog(boto3.session.Session(region_name=region).client("ec2"))
    return {
        "source": f"describe_instance_types via moto {moto.__version__} instance-type data, {region}",
        "generated_by": f"python -m lattice.components.catalog.refresh --moto --region {region}",
        **catalog,
    }


def build_aws_regions(session: Any, previous: dict[str, Any]) -> dict[str, Any]:
    """The regions and zones this account can use, from its own API; the others keep their previous entries.

    Letters differ per account in several regions (us-west-1 shows each account two of a, b, c), so a table
    read from the account that deploys is exactly what its stacks may name. Regions the account has not
    opted in to cannot be described: they keep what the previous table said, marked opt-in.
    """
    regions: dict[str, Any] = {}
    listed = session.client("ec2", region_name="us-east-1").describe_regions(AllRegions=True)["Regions"]
    for entry in listed:
        name = entry["RegionName"]
        if entry.get("OptInStatus") == "not-opted-in":
            regions[name] = {**previous.get(name, {"zones": []}), "opt_in_required": True}
            continue
        zones = session.client("ec2", region_name=name).describe_availability_zones(
            Filters=[{"Name": "zone-type", "Values": ["availability-zone"]}]
        )["AvailabilityZones"]
        regions[name] = {
            "zones": sorted(zone["ZoneName"] for zone in zones),
            "opt_in_required": entry.get("OptInStatus") == "opted-in",
        }
    return dict(sorted(regions.items()))


# Every failure here is the caller's to fix (credentials, permissions, a path), so it is the CLI's bad input.
EXIT_INPUT = 2


def refresh_regions(output: Path, session: Any = None) -> int:
    """Rewrite the AWS region table from the account's API; 0 on success, 2 with a one-line message."""
    from .regions import AWS_REGIONS_FILE

    previous = json.loads(AWS_REGIONS_FILE.read_text())["regions"] if AWS_REGIONS_FILE.exists() else {}
    try:
        regions = build_aws_regions(session or boto3.session.Session(), previous)
    except NoCredentialsError:
        print(
            "error: no AWS credentials for describe_regions; set AWS_PROFILE or AWS_ACCESS_KEY_ID/"
            "AWS_SECRET_ACCESS_KEY (or run `aws sso login`) and retry",
            file=sys.stderr,
        )
        return EXIT_INPUT
    except (ClientError, BotoCoreError) as error:
        print(f"error: describe_regions / describe_availability_zones failed: {error}", file=sys.stderr)
        return EXIT_INPUT
    document = {
        "source": f"describe_regions and describe_availability_zones of the deploying account (botocore "
        f"{botocore.__version__}); regions it has not opted in to keep their previous zones",
        "generated_by": "lattice catalog refresh-regions",
        "regions": regions,
    }
    if not _write(output, document):
        return EXIT_INPUT
    print(f"wrote {len(regions)} AWS regions to {output}")
    return 0


def _write(output: Path, document: dict[str, Any]) -> bool:
    try:
        output.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        print(f"error: --output {output}: cannot write it ({exc.strerror}); choose a writable path", file=sys.stderr)
        return False
    return True


def main(region: str, output: Path, *, from_moto: bool = False) -> int:
    """Write the snapshot for ``region`` to ``output``; 0 on success, 2 with a one-line message on failure."""
    try:
        document = _snapshot(region, from_moto)
    except NoCredentialsError:
        print(
            f"error: no AWS credentials for describe_instance_types in {region}; "
            "set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or run `aws sso login`) and retry",
            file=sys.stderr,
        )
        return EXIT_INPUT
    except ClientError as error:
        print(f"error: describe_instance_types in {region} was refused: {error}", file=sys.stderr)
        return EXIT_INPUT
    except BotoCoreError as error:
        print(f"error: describe_instance_types in {region} failed: {error}", file=sys.stderr)
        return EXIT_INPUT
    if not _write(output, document):
        return EXIT_INPUT
    efa = sum(1 for record in document["instance_types"].values() if record["max_efa_interfaces"])
    print(
        f"wrote {len(document['instance_types'])} accelerator instance types ({efa} with EFA) to {output}; "
        f"skipped {len(document['skipped'])} Lattice cannot pool (listed under 'skipped')"
    )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", required=True)
    parser.add_argument("--output", type=Path, default=AWS_SNAPSHOT)
    parser.add_argument("--moto", action="store_true", help="describe moto's bundled data instead of the real API")
    arguments = parser.parse_args()
    sys.exit(main(arguments.region, arguments.output, from_moto=arguments.moto))
