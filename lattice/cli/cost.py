"""``lattice cost`` (what the stack costs, and what a change costs) and ``lattice pricing`` (the snapshot).

``lattice cost --stack S`` prices the offline plan (``lattice/cost/report.py``): per site and resource, the month at the
pools' minimum, desired and maximum nodes, the total, the assumptions it made and what it could not price.
``--base PLAN.json`` prints instead the monthly change against a base branch's plan (``lattice plan --json``),
per resource: the pull-request workflow puts it beside the policy verdict. ``--by team`` adds the chargeback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lattice.errors import UsageError, writable, write_output

from .common import read_plan

if TYPE_CHECKING:
    from rich.console import Console

    from lattice.cost.report import CostChange, CostReport

COST_FORMATS = ("text", "json", "markdown")
WIDTH = 80  # every text report reads at 80 columns


def add_parser(verbs, stack_arguments) -> None:
    cost = verbs.add_parser("cost", help="what the stack costs a month (per site, pool, file system, link)")
    stack_arguments(cost)
    cost.add_argument("--plan", metavar="FILE", type=Path, help="price a plan saved by `lattice plan --json`")
    cost.add_argument(
        "--base",
        metavar="PLAN.json",
        type=Path,
        help="print the monthly change against this base plan (`lattice plan --json` of the base branch)",
    )
    cost.add_argument("--format", choices=COST_FORMATS, default="text", help="output format (default: text)")
    cost.add_argument("--by", choices=("team",), help="team: attribute each site's costs by GPU quota share")
    cost.add_argument("--output", metavar="FILE", type=Path, help="write the report to FILE instead of stdout")
    cost.set_defaults(handler=_cost)

    pricing = verbs.add_parser("pricing", help="the pricing snapshot: list its rows, or refresh them from the APIs")
    pricing.set_defaults(handler=_pricing_list)
    pricing_verbs = pricing.add_subparsers(dest="pricing_verb", required=False, metavar="VERB")
    refresh = pricing_verbs.add_parser(
        "refresh",
        help="read the planned machines' and FSx for Lustre rates again: AWS Price List API, spot history, "
        "Cloud Billing Catalog",
    )
    refresh.add_argument("--output", type=Path, default=None, help="default: the committed snapshot")
    refresh.add_argument("--skip-gcp", action="store_true", help="refresh the AWS rows only (no API key needed)")
    refresh.add_argument(
        "--regions",
        metavar="all|R1,R2",
        help="read these regions whether a stack plans them or not (default: the stacks' regions and machines): in "
        "each AWS commercial region its system node types, every catalog GPU / Trainium / Inferentia type it sells, "
        "FSx for Lustre storage and the NAT gateway's hour and per-GB rates; in each GCP region Filestore (every "
        "tier) and Managed Lustre. `all` asks the Price List API 3 queries per AWS region (EC2 types in one ANY_OF "
        "batch, FSx, NAT: about 100-140 get_products calls of up to 100 products for the 34 regions) and the "
        "Cloud Billing Catalog the same ten or so calls as the default; spot history is read only for the stacks' "
        "pools",
    )
    refresh.add_argument(
        "--catalogs",
        action="store_true",
        help="rebuild the generated layer (every region) from the pinned public catalogs, printing what changed",
    )
    refresh.add_argument(
        "--gcp-calculator",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of the GCP pricing calculator's pricing.yml at the pinned commit (default: "
        "download it)",
    )
    refresh.add_argument(
        "--gcp-tpu",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of anycloud-sh/catalog's gcp/vms.csv at the pinned commit (default: download it)",
    )
    refresh.add_argument(
        "--aws-on-demand",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of tsaol/aws-gpu's data/all_gpu_instances.js at the pinned commit (default: "
        "download it)",
    )
    refresh.add_argument(
        "--aws-spot",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of tsaol/aws-gpu's data/gpu_instances_raw.json at the pinned commit (default: "
        "download it)",
    )
    refresh.add_argument(
        "--aws-services",
        metavar="DIR",
        type=Path,
        help="with --catalogs: a copy of QuinnyPig/aws-price-watcher's processed/ folder (its <service>.json feeds) at "
        "the pinned commit, with the repository's raw/fsx.json beside it in DIR/../raw/ (default: download them)",
    )
    refresh.add_argument(
        "--aws-ebs",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of yeo/ec2.shop's data/ebs/ebs.json at the pinned commit (default: download it)",
    )
    refresh.add_argument(
        "--aws-price-list",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of xbill9/zombiescan's src/zombiescan/pricing/table.json (the AWS Price List "
        "API's rates per region) at the pinned commit (default: download it)",
    )
    refresh.add_argument(
        "--gcp-filestore",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of xbill9/zombiescan-azure's src/zombiescan/pricing/table.json (the Cloud "
        "Billing Catalog's Filestore rates per region) at the pinned commit (default: download it)",
    )
    refresh.add_argument(
        "--aws-nat-feed",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of lamngockhuong/aws-price's lib/data/pricing/natgateway.json (the NAT "
        "gateway pricing feed) at the pinned commit (default: download it)",
    )
    refresh.add_argument(
        "--aws-ec2-feed",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of lamngockhuong/aws-price's lib/data/pricing/ec2-transformed.json (the EC2 "
        "pricing feed, one entry per location and type) at the pinned commit (default: download it)",
    )
    refresh.add_argument(
        "--aws-ec2-fork",
        metavar="FILE",
        type=Path,
        help="with --catalogs: a copy of v0rts/aws-price-watcher's processed/ec2.json (the EC2 pricing feed as "
        "aws-price-watcher's processor writes it, polled until 2025-11-20) at the pinned commit (default: download it)",
    )
    refresh.add_argument(
        "--uniform-rates",
        metavar="FILE",
        type=Path,
        help="with --catalogs: the rates providers publish once for every region, each quoting its page "
        "(default: components/catalog/data/pricing-uniform.json)",
    )
    refresh.set_defaults(handler=_pricing_refresh)


def _cost(args: argparse.Namespace, out: Console) -> int:
    from lattice.cost.report import by_team, cost_changes, cost_report

    from .common import progress, resolve_stack_file, warn

    writable(args.output, "--output")
    stack_file = resolve_stack_file(args)
    base = read_plan(args.base, "--base") if args.base is not None else None
    if args.plan is not None:
        plan = read_plan(args.plan, "--plan")
    else:
        from lattice.engine.plan import run_plan

        warn(stack_file)
        with progress(f"planning {stack_file.path.name} under the mock engine…"):
            plan = run_plan(stack_file).to_dict()
    report = cost_report(plan, stack_file.spec)
    teams = by_team(report, stack_file.spec) if args.by == "team" else None
    if base is not None:
        changes = cost_changes(cost_report(base, stack_file.spec), report)
        text = render_changes(args.format, report, changes, args.base)
    else:
        text = render_report(args.format, report, teams)
    if args.output is not None:
        write_output(args.output, text, "--output")
        out.print(f"{args.format} cost report written to {args.output}")
    else:
        sys.stdout.write(text)
        if args.format == "text" and base is None:
            sys.stdout.write(serving_prices(stack_file.spec))
    for resource_type in report.unclassified:  # a type Lattice does not know how to price: say so, never hide it
        print(
            f"lattice cost: {resource_type} is neither priced nor known to be free; please report it", file=sys.stderr
        )
    return 0


def serving_prices(spec) -> str:
    """Under the text report: each inference endpoint's price per million generated tokens (lattice size --serve's
    arithmetic: its pool's GPU-hour rate over the throughput its entry states), or why it has none."""
    import textwrap

    from lattice.size.serve import cost_line, endpoint_rows

    rows = endpoint_rows(spec)
    if not rows:
        return ""
    lines = ["", *textwrap.wrap("Inference endpoints, per million generated tokens (at inference[].tokens_per_second):",
                                WIDTH)]  # fmt: skip
    for row in rows:
        lines += textwrap.wrap(
            f"{row.endpoint}: {cost_line(row)}",
            WIDTH,
            initial_indent="  ",
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(lines) + "\n"


# --- rendering ------------------------------------------------------------------------------------------------------


def _usd(value: float) -> str:
    return f"${value:,.0f}"


def _columns(values: tuple[float, float, float] | None) -> list[str]:
    return ["—", "—", "—"] if values is None else [_usd(v) for v in values]


def _header(report: CostReport) -> str:
    return (
        f"lattice cost: stack {report.stack} ({report.environment}), USD a month of {report.hours_per_month} h, at the "
        f"pools' min / desired / max nodes; prices from the pricing snapshot of {report.snapshot_date}"
    )


def render_report(fmt: str, report: CostReport, teams: dict[str, tuple[float, float, float]] | None = None) -> str:
    if fmt == "json":
        return json.dumps(report_json(report, teams), indent=2) + "\n"
    if fmt == "markdown":
        return _markdown(report, teams)
    return _text(report, teams)


def report_json(report: CostReport, teams=None) -> dict[str, Any]:
    from lattice.cost.report import CHARGEBACK_METHOD

    hours = report.hours_per_month
    document: dict[str, Any] = {
        "stack": report.stack,
        "environment": report.environment,
        "currency": "USD",
        "hours_per_month": hours,
        "snapshot_date": report.snapshot_date,
        "columns": ["min", "desired", "max"],
        "rows": [
            {
                "site": row.site,
                "component": row.component,
                "resource": row.resource,
                "type": row.type,
                "kind": row.kind,
                "item": row.item,
                "hourly": list(row.hourly) if row.hourly is not None else None,
                "monthly": list(row.monthly(hours)) if row.hourly is not None else None,
                "unpriced": row.unpriced,
                "charged": list(row.charged),
                "prepaid": row.prepaid or None,
                "tags": row.tags,
                "prices": [
                    {
                        "key": p.key,
                        "region": p.region,
                        "usd": p.usd,
                        "unit": p.unit,
                        "source": p.source,
                        "as_of": p.as_of,
                    }
                    for p in row.prices
                ],
            }
            for row in report.rows
        ],
        "total": {"hourly": list(report.total_hourly()), "monthly": list(report.total_monthly())},
        "unpriced": len(report.unpriced),
        "budget": report.budget_verdict(),
        "assumptions": report.assumptions,
        "free": report.free,
        "unclassified": report.unclassified,
    }
    if teams is not None:
        document["by_team"] = {"method": CHARGEBACK_METHOD, "monthly": {k: list(v) for k, v in teams.items()}}
    return document


NUMBER_WIDTH = 11  # "$12,345,678" and a space


def _line(label: str, values: list[str], indent: int = 0) -> list[str]:
    """``label`` then the three figures right-aligned to column 80; a label too long for that keeps its own line
    (identifiers are never cut)."""
    figures = "".join(value.rjust(NUMBER_WIDTH) for value in values)
    room = WIDTH - len(figures)
    label = " " * indent + label
    if len(label) <= room - 1:
        return [label.ljust(room) + figures]
    return [label, " " * room + figures]


def _wrapped(text: str, indent: int) -> list[str]:
    import textwrap

    return textwrap.wrap(
        text, WIDTH, initial_indent=" " * indent, subsequent_indent=" " * indent, break_on_hyphens=False
    )


def _text(report: CostReport, teams) -> str:
    from lattice.cost.report import CHARGEBACK_METHOD

    lines = _wrapped(_header(report), 0)
    lines += ["", *_line("", ["min", "desired", "max"]), "─" * WIDTH]
    for site, rows in report.by_site().items():
        lines += _line(site, _columns(report.total_monthly(rows)))
        for row in rows:
            lines += _line(row.resource, _columns(row.monthly(report.hours_per_month)), indent=2)
            lines += _wrapped(f"not priced: {row.unpriced}" if row.unpriced else row.item, 4)
        lines.append("")
    lines.append("─" * WIDTH)
    lines += _line("total a month", _columns(report.total_monthly()))
    lines += _line("total an hour", [f"${v:,.2f}" for v in report.total_hourly()])
    lines.append("")
    if report.unpriced:
        lines += _wrapped(
            f"{len(report.unpriced)} row(s) not priced, not in the total: the reason is under each (`lattice "
            "pricing` lists the snapshot's rows with their sources; `lattice pricing refresh --regions all` reads "
            "the EC2, FSx for Lustre, NAT gateway, Filestore and Managed Lustre rows of every region).",
            0,
        )
    if report.budget_verdict():
        lines += _wrapped(f"{report.budget_verdict()}.", 0)
    lines.append("Assumptions (the spec's cost_assumptions, or the defaults):")
    for assumption in report.assumptions or ["none"]:
        lines += _wrapped(f"- {assumption}", 2)
    lines += _wrapped(
        f"Not billed on their own: {len(report.free)} resource types (--format json lists each with the reason).", 0
    )
    if teams is not None:
        lines += ["", *_wrapped(f"By team: {CHARGEBACK_METHOD}.", 0), *_line("", ["min", "desired", "max"])]
        for name, monthly in teams.items():
            lines += _line(name, _columns(monthly), indent=2)
    return "\n".join(lines) + "\n"


def _markdown(report: CostReport, teams) -> str:
    from lattice.cost.report import CHARGEBACK_METHOD

    lines = [f"### lattice cost: stack {report.stack}", "", _header(report) + ".", ""]
    lines += ["| site | resource | what is priced | min | desired | max |", "|---|---|---|--:|--:|--:|"]
    for row in report.rows:
        what = f"**not priced**: {row.unpriced}" if row.unpriced else row.item
        cells = _columns(row.monthly(report.hours_per_month))
        lines.append(f"| {row.site} | `{row.resource}` | {what.replace('|', '/')} | {' | '.join(cells)} |")
    lines.append(f"| **total** | | | {' | '.join(f'**{c}**' for c in _columns(report.total_monthly()))} |")
    lines += ["", f"{len(report.unpriced)} row(s) not priced, not in the total."]
    if report.budget_verdict():
        lines += ["", f"**{report.budget_verdict()}.**"]
    lines += ["", "Assumptions:", ""]
    lines += [f"- {assumption}" for assumption in report.assumptions] or ["- none"]
    if teams is not None:
        lines += ["", f"By team ({CHARGEBACK_METHOD}):", "", "| team | min | desired | max |", "|---|--:|--:|--:|"]
        lines += [f"| {name} | {' | '.join(_columns(monthly))} |" for name, monthly in teams.items()]
    return "\n".join(lines) + "\n\n"


def render_changes(fmt: str, report: CostReport, changes: list[CostChange], base: Path) -> str:
    total = tuple(sum(change.delta[i] for change in changes) for i in range(3))
    if fmt == "json":
        document = {
            "stack": report.stack,
            "base": str(base),
            "snapshot_date": report.snapshot_date,
            "columns": ["min", "desired", "max"],
            "changes": [
                {
                    "site": c.site,
                    "resource": c.resource,
                    "type": c.type,
                    "change": c.change,
                    "monthly_before": list(c.before) if c.before else None,
                    "monthly_after": list(c.after) if c.after else None,
                    "monthly_delta": list(c.delta),
                }
                for c in changes
            ],
            "monthly_delta": list(total),
        }
        return json.dumps(document, indent=2) + "\n"
    unpriced = [
        c for c in changes if (c.before is None and c.change != "added") or (c.after is None and c.change != "removed")
    ]
    if fmt == "markdown":
        lines = [
            f"### lattice cost: change against the base plan, stack {report.stack}",
            "",
            f"USD a month at the pools' min / desired / max nodes (pricing snapshot of {report.snapshot_date}).",
            "",
        ]
        if not changes:
            return "\n".join([*lines, "No change in cost.", "", ""])
        lines += ["| resource | change | min | desired | max |", "|---|---|--:|--:|--:|"]
        lines += [f"| `{c.resource}` | {c.change} | {' | '.join(_signed(v) for v in c.delta)} |" for c in changes]
        lines.append(f"| **total** | | {' | '.join(f'**{_signed(v)}**' for v in total)} |")
        if unpriced:
            lines += ["", f"{len(unpriced)} changed resource(s) unpriced on one side: their delta is not counted."]
        return "\n".join(lines) + "\n\n"
    lines = [*_wrapped(_header(report), 0), "", *_wrapped(f"Monthly change against {base}:", 0)]
    lines += _line("", ["min", "desired", "max"])
    for c in changes:
        lines += _line(c.resource, [_signed(v) for v in c.delta], indent=2)
        lines += _wrapped(f"{c.change} ({c.site}, {c.type})", 4)
    lines += ["─" * WIDTH, *_line("total", [_signed(v) for v in total])]
    if not changes:
        lines.append("No change in cost.")
    if unpriced:
        lines += _wrapped(f"{len(unpriced)} changed resource(s) unpriced on one side: their delta is not counted.", 0)
    return "\n".join(lines) + "\n"


def _signed(value: float) -> str:
    return f"{'+' if value > 0 else '−' if value < 0 else '±'}${abs(value):,.0f}"


# --- lattice pricing ----------------------------------------------------------------------------------------------


def _pricing_list(args: argparse.Namespace, out: Console) -> int:
    from lattice.components.catalog.pricing import pricing_snapshot

    snapshot = pricing_snapshot()
    lines = _wrapped(
        f"pricing snapshot of {snapshot.date} (components/catalog/data/pricing.json): USD per unit, each row with "
        "its source and the date it was read; `lattice pricing refresh` reads the machine rows again (`--regions all`: "
        "in every region)",
        0,
    )
    place = None
    for price in snapshot.rows():
        if (price.cloud, price.region) != place:
            place = (price.cloud, price.region)
            lines += ["", f"{price.cloud} {price.region}"]
        if price.usd is not None:
            figure = f"${price.usd:,.4g} / {price.unit}"
        elif price.usd_low is not None:
            figure = f"${price.usd_low:,.4g}–{price.usd_high:,.4g} / {price.unit}"
        else:
            figure = "not priced"
        label = f"  {price.key}"
        if len(label) + len(figure) + 1 <= WIDTH:
            lines.append(label + figure.rjust(WIDTH - len(label)))
        else:
            lines += [label, figure.rjust(WIDTH)]
        lines += _wrapped(f"{price.source}, {price.as_of}", 4)
        if price.valid_until:
            stale = ": stale" if price.stale_on(snapshot.date) else ""
            lines += _wrapped(f"published as holding until {price.valid_until}{stale}", 4)
        if price.missing:
            lines += _wrapped(f"not priced: {price.missing}", 4)
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _pricing_refresh(args: argparse.Namespace, out: Console) -> int:
    from lattice.components.catalog.pricing import PRICING_SNAPSHOT
    from lattice.components.catalog.pricing_refresh import planned_machines, refresh, region_scope
    from lattice.components.spec import load_stack_file

    from .common import STACKS_DIR

    writable(args.output, "--output")
    for flag in (
        "gcp_calculator",
        "gcp_tpu",
        "aws_on_demand",
        "aws_spot",
        "aws_services",
        "aws_ebs",
        "aws_price_list",
        "gcp_filestore",
        "aws_nat_feed",
        "aws_ec2_feed",
        "aws_ec2_fork",
        "uniform_rates",
    ):
        if getattr(args, flag) is not None and not args.catalogs:
            option = "--" + flag.replace("_", "-")
            raise UsageError(f"lattice pricing refresh: {option} is read by --catalogs; add it")
    if args.catalogs and args.regions is not None:
        raise UsageError(
            "lattice pricing refresh: --regions is not read by --catalogs (the layer covers every region its "
            "catalogs price); drop one of them"
        )
    if args.catalogs:
        from lattice.components.catalog.pricing_catalogs import CATALOG_LAYER, UNIFORM_RATES, refresh_layer

        return refresh_layer(
            args.output or CATALOG_LAYER,
            gcp_calculator_file=args.gcp_calculator,
            gcp_tpu_file=args.gcp_tpu,
            aws_on_demand_file=args.aws_on_demand,
            aws_spot_file=args.aws_spot,
            uniform_file=args.uniform_rates or UNIFORM_RATES,
            aws_services_dir=args.aws_services,
            aws_ebs_file=args.aws_ebs,
            aws_price_list_file=args.aws_price_list,
            gcp_filestore_file=args.gcp_filestore,
            aws_nat_feed_file=args.aws_nat_feed,
            aws_ec2_feed_file=args.aws_ec2_feed,
            aws_ec2_fork_file=args.aws_ec2_fork,
        )
    regions = _refresh_regions(args.regions) if args.regions is not None else None
    specs = [load_stack_file(path).spec for path in sorted(STACKS_DIR.glob("Pulumi.*.yaml"))]
    machines = planned_machines(specs)
    return refresh(
        args.output or PRICING_SNAPSHOT,
        machines if regions is None else region_scope(machines, regions),
        gcp_api_key=os.environ.get("GOOGLE_API_KEY"),
        skip_gcp=args.skip_gcp,
    )


def _refresh_regions(text: str) -> list[str]:
    """``--regions``' value: ``all``, or region names separated by commas, each one Lattice knows."""
    from lattice.components.catalog.pricing_refresh import known_regions

    aws, gcp = known_regions()
    if text.strip() == "all":
        return [*aws, *gcp]
    named = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in named if name not in {*aws, *gcp}]
    if unknown or not named:
        raise UsageError(
            f"lattice pricing refresh: --regions {text}: "
            + (f"{', '.join(unknown)} is not a region Lattice prices" if unknown else "names no region")
            + f"; name `all` or regions separated by commas from AWS ({', '.join(aws)}) or GCP ({', '.join(gcp)})"
        )
    return named


# --- lattice size … --tokens: the run in money -----------------------------------------------------------------------


def add_run_cost_arguments(size) -> None:
    size.add_argument(
        "--capacity",
        choices=("on-demand", "spot", "capacity-block", "flex-start", "reservation"),
        default="on-demand",
        help="with --tokens: the capacity type the run is priced at (default: on-demand)",
    )
    size.add_argument(
        "--region", default=None, help="with --tokens: the region priced (default: us-east-1, GCP us-central1)"
    )
    size.add_argument(
        "--checkpoints-kept",
        type=int,
        default=2,
        help="with --tokens: checkpoints kept in object storage through the run (default 2)",
    )


def run_cost_rows(table, args: argparse.Namespace, machine, pool, hours, *, checkpoint_bytes: float, lustre) -> None:
    """The run's money rows under ``lattice size``'s GPU-hours: compute, time lost to saves, checkpoint storage."""
    from lattice.components.catalog import AwsInstanceType
    from lattice.cost.report import run_cost

    cloud = "aws" if isinstance(machine, AwsInstanceType) else "gcp"
    region = args.region or ("us-east-1" if cloud == "aws" else "us-central1")
    cost = run_cost(
        machine.name,
        cloud,
        region,
        args.capacity,
        hours,
        nodes=pool.nodes,
        checkpoint_bytes=checkpoint_bytes,
        kept=args.checkpoints_kept,
        lustre=lustre,
    )

    def money(value: float | None, price) -> str:
        return f"${value:,.0f}" if value is not None else f"not priced: {price.key}: {price.missing}"

    rate = f"${cost.rate.usd:,.4g}/node-hour" if cost.rate.usd is not None else "no rate"
    table.add_row(
        f"  compute ({args.capacity}, {region}, {rate})",
        f"{cost.node_hours:,.1f} node-hours = {money(cost.compute_usd, cost.rate)}",
    )
    table.add_row(
        "  of which lost to checkpoint saves",
        f"{cost.lost_node_hours:,.1f} node-hours = {money(cost.lost_usd, cost.rate)}",
    )
    table.add_row(
        f"  checkpoints kept ({args.checkpoints_kept} × {checkpoint_bytes / 1e9:,.0f} GB, object storage)",
        money(cost.checkpoint_storage_usd, cost.object_storage),
    )
    if cost.lustre is not None:
        table.add_row(
            f"  the sized Lustre through the run ({cost.lustre_gib:,.0f} GiB)", money(cost.lustre_usd, cost.lustre)
        )
    unpriced = [
        price
        for price, value in (
            (cost.rate, cost.compute_usd),
            (cost.object_storage, cost.checkpoint_storage_usd),
            (cost.lustre, cost.lustre_usd),
        )
        if price is not None and value is None
    ]
    suffix = f" + {len(unpriced)} not priced" if unpriced else ""
    table.add_row(
        f"  the run (pricing snapshot of {cost.rate.as_of if cost.rate.usd is not None else 'unknown'})",
        f"${cost.total_usd:,.0f}{suffix}",
    )
