"""``lattice catalog``: the machines the hardware catalog knows, filtered, as a table a person reads; ``catalog
refresh`` / ``refresh-regions`` regenerate its AWS snapshot and region table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import UsageError, writable

if TYPE_CHECKING:  # imported by the verb, not by `lattice --help` (which only adds the filters)
    from rich.console import Console
    from rich.table import Table

    from lattice.components.catalog.listing import CatalogRow


def add_parser(verbs, stack_arguments) -> None:
    catalog = verbs.add_parser(
        "catalog", help="list the hardware catalog's machine types (filters below), or refresh it"
    )
    add_filters(catalog)
    catalog.set_defaults(handler=list_catalog)
    catalog_verbs = catalog.add_subparsers(dest="catalog_verb", required=False, metavar="VERB")
    refresh = catalog_verbs.add_parser("refresh", help="regenerate the AWS snapshot from describe_instance_types")
    refresh.add_argument("--region", required=True, help="AWS region to describe, e.g. us-east-1")
    refresh.add_argument("--output", type=Path, default=None, help="default: the committed snapshot")
    refresh.add_argument("--moto", action="store_true", help="describe moto's bundled data (offline)")
    refresh.set_defaults(handler=_catalog_refresh)
    regions = catalog_verbs.add_parser(
        "refresh-regions", help="rewrite the AWS region / zone table from your account's describe_regions"
    )
    regions.add_argument("--output", type=Path, default=None, help="default: the committed table")
    regions.set_defaults(handler=_catalog_refresh_regions)


def add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", choices=("aws", "gcp"), help="only this cloud's machines")
    parser.add_argument("--accelerator", metavar="NAME", help="only this accelerator, e.g. L4, A100, H100, v5p")
    parser.add_argument(
        "--min-memory", metavar="GIB", type=float, default=0, help="accelerators with at least this many GiB each"
    )
    parser.add_argument("--efa", action="store_true", help="only AWS types with EFA")
    parser.add_argument(
        "--gpu-nic", action="store_true", help="only GCP machines with a GPU-NIC fabric (TCPX, TCPXO, RDMA)"
    )
    parser.add_argument(
        "--min-fabric-gbps", metavar="GBPS", type=float, default=0, help="scale-out fabric (EFA / GPU NIC) of at least"
    )


def selected(args: argparse.Namespace) -> list[CatalogRow]:
    from lattice.components.catalog.listing import catalog_rows, select

    return select(
        catalog_rows(),
        provider=args.provider,
        accelerator=args.accelerator,
        min_memory_gib=args.min_memory,
        efa=args.efa,
        gpu_nic=args.gpu_nic,
        min_fabric_gbps=args.min_fabric_gbps,
    )


def render(rows: list[CatalogRow]) -> Table:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title=f"{len(rows)} machine types", title_justify="left")
    table.add_column("type", no_wrap=True)
    table.add_column("accelerators", min_width=12)
    table.add_column("GiB", justify="right")
    table.add_column("vCPU", justify="right")
    table.add_column("fabric", justify="right")  # "EFA 3,200" may wrap at 80 columns: the table still fits
    table.add_column("Gbps", justify="right")
    table.add_column("note", overflow="fold")
    for row in rows:
        fabric = f"{row.fabric} {row.fabric_gbps:,.0f}" if row.fabric_gbps else row.fabric or "—"
        table.add_row(
            row.name,
            row.accelerator_label,
            f"{row.memory_gib:,.3g}",
            str(row.vcpus) if row.vcpus is not None else "",
            fabric,
            f"{row.network_gbps:,.4g}" if row.network_gbps else "",
            row.note,
        )
    return table


def list_catalog(args: argparse.Namespace, out: Console) -> int:
    rows = selected(args)
    if not rows:
        raise UsageError(
            "lattice catalog: no machine type matches these filters; run `lattice catalog` without them to see "
            "every accelerator it knows"
        )
    from lattice.tables import print_table

    print_table(out, render(rows))
    out.print(
        "GiB: memory of each accelerator (TPU: per chip, count per host); fabric: scale-out Gbps (EFA, GPUDirect "
        "NICs; TPU slices: ICI); Gbps: every NIC of the machine; note: spot / flex-start-only shapes, N1 vCPU limits "
        "(attach with guest_accelerator), TPU topologies. `lattice size --machine-type TYPE` sizes a workload on one.",
        soft_wrap=False,
    )
    return 0


def _catalog_refresh(args: argparse.Namespace, out: Console) -> int:
    from lattice.components.catalog.aws import AWS_SNAPSHOT
    from lattice.components.catalog.refresh import main as refresh

    writable(args.output, "--output")
    return refresh(args.region, args.output or AWS_SNAPSHOT, from_moto=args.moto)


def _catalog_refresh_regions(args: argparse.Namespace, out: Console) -> int:
    from lattice.components.catalog.refresh import refresh_regions
    from lattice.components.catalog.regions import AWS_REGIONS_FILE

    writable(args.output, "--output")
    return refresh_regions(args.output or AWS_REGIONS_FILE)
