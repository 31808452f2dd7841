"""``lattice links``: what the cross-site links are, and each grid / edge gateway's configuration.

``links plan`` tabulates every pair: kind, routing, bandwidth asked and carried, tunnels, inside block.
``links render SITE`` writes the strongSwan / FRR configuration a grid or edge site's operator applies
(``components/network/peer_config.py``); it reads the configuration from the stack's outputs: after
``pulumi up``, from ``pulumi stack output --json --show-secrets > outputs.json`` (``--from-outputs``); without
it, from the offline plan, whose addresses and keys are the mock engine's placeholders. On stdout the
pre-shared keys are always redacted; only ``--output-dir`` writes them, into a file only its owner can read.
``links reach`` walks every network path the estate needs through the planned networks
(``components/flows/reachability.py``) and prints the matrix: each source and needed destination, delivered or the
hop that drops it (exit 1 when one is dropped).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lattice.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

# The files of a site's "vpn" output, with the mode each is written with.
FILES = {"swanctl.conf": 0o600, "frr.conf": 0o644, "xfrm-interfaces.sh": 0o755}
REDACTED_SWANCTL = "swanctl.redacted.conf"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
REACH_FORMATS = ("text", "json")
# What a needed path's destination is, in a matrix cell.
SHORT = {
    "eks-api": "EKS API (private endpoint)",
    "eks-public-api": "EKS API (public endpoint)",
    "gke-api": "GKE API (private endpoint)",
    "gke-dns-api": "GKE API (DNS endpoint)",
    "kubernetes-api": "Kubernetes API",
    "metrics-receiver": "metrics receiver",
    "amp-endpoint": "metrics workspace endpoint",
}


def add_parser(verbs, stack_arguments) -> None:
    links = verbs.add_parser("links", help="cross-site links: plan them, render a grid / edge gateway's config")
    link_verbs = links.add_subparsers(dest="links_verb", required=True, metavar="VERB")
    plan = link_verbs.add_parser("plan", help="tabulate the links: tunnels, capacity, inside addresses")
    stack_arguments(plan)
    plan.set_defaults(handler=_links_plan)
    render = link_verbs.add_parser(
        "render", help="a grid / edge site's strongSwan swanctl.conf, FRR frr.conf and interface script"
    )
    render.add_argument("site", help="the grid / edge site, e.g. grid-hpc")
    stack_arguments(render)
    render.add_argument(
        "--from-outputs",
        metavar="FILE",
        type=Path,
        help="the deployed stack's outputs: `pulumi stack output --json --show-secrets > FILE` (default: the "
        "offline plan, with placeholder addresses and keys)",
    )
    render.add_argument(
        "--gateway",
        metavar="IP",
        help="the gateway host (its outside address) when the site has two (network.vpn_gateway.public_ips)",
    )
    render.add_argument(
        "--output-dir",
        metavar="DIR",
        type=Path,
        help="write the files here (swanctl.conf, with the keys, mode 600); default: print them, keys redacted",
    )
    render.set_defaults(handler=_links_render)
    reach = link_verbs.add_parser(
        "reach",
        help="every network path the estate needs, walked hop by hop: delivered, or the hop that drops it",
    )
    stack_arguments(reach)
    reach.add_argument("--format", choices=REACH_FORMATS, default="text", help="output format (default: text)")
    reach.add_argument("--hops", action="store_true", help="text: print each path hop by hop, there and back")
    reach.set_defaults(handler=_links_reach)


def _links_plan(args: argparse.Namespace, out: Console) -> int:
    # Imported when the verb runs: building the CLI's parser (and `lattice --help`) loads none of this.
    from rich.table import Table

    from lattice.components.network.link_plan import link_plans
    from lattice.tables import print_note, print_table

    from .common import resolve_stack_file

    spec = resolve_stack_file(args).spec
    plans = link_plans(spec)
    if not plans:
        out.print("no links in this stack (links: [])")
        return 0
    table = Table(title=f"lattice links: {len(plans)} site pairs")
    for column in ("link", "kind", "routing", "asked Gbps", "carries Gbps", "tunnels", "tunnel", "inside block"):
        table.add_column(column)
    for plan in plans:
        table.add_row(
            plan.key,
            plan.kind,
            plan.routing,
            f"{plan.bandwidth_gbps:g}",
            f"{plan.capacity_gbps:g}",
            str(plan.tunnel_count),
            f"{'large' if plan.large else 'standard'} {plan.tunnel_gbps:g} Gbps"
            f" ({'pinned' if plan.size_pinned else 'derived: pin it'})"
            if plan.kind != "gcp-onprem"
            else f"Cloud VPN {plan.tunnel_gbps:g} Gbps",
            plan.inside_block,
        )
    print_table(out, table)
    print_note(out, "carries", "with any one tunnel down (one tunnel of each redundant pair counted)")
    if any(plan.kind != "gcp-onprem" for plan in plans):
        print_note(
            out,
            "tunnel",
            "an AWS tunnel's size is fixed when its VPN connection is created; changing it (tunnel_size, or a "
            "derived size crossing 1.25 Gbps) replaces the connection: new outside addresses, every peer gateway "
            "reconfigured (`lattice links render`)",
        )
    return 0


def _links_render(args: argparse.Namespace, out: Console) -> int:
    from lattice.components.network.link_plan import link_plans
    from lattice.components.spec import KubernetesSite
    from lattice.engine.plan import run_plan

    from .common import resolve_stack_file

    stack_file = resolve_stack_file(args)
    site = next((s for s in stack_file.spec.sites if s.name == args.site), None)
    linked = sorted({p.peer for p in link_plans(stack_file.spec) if p.kind != "aws-gcp"})
    if not isinstance(site, KubernetesSite) or args.site not in linked:
        raise UsageError(
            f"{stack_file.path}: '{args.site}' is not a linked grid / edge site; use one of: "
            f"{', '.join(linked) or '(none: the stack has no links to grid or edge sites)'}"
        )
    if args.from_outputs is not None:
        outputs = _read_outputs(args.from_outputs)
        source = str(args.from_outputs)
    else:
        outputs = run_plan(stack_file).revealed_outputs
        source = "the offline plan"
        print(
            f"lattice links render: from {source}: outside addresses and keys are placeholders; after `pulumi up`, "
            "render from `pulumi stack output --json --show-secrets` with --from-outputs",
            file=sys.stderr,
        )
    files = _vpn_files(outputs, args.site, source, args.gateway)
    if args.output_dir is None:
        for name in ("swanctl.conf", "frr.conf", "xfrm-interfaces.sh"):
            text = files[REDACTED_SWANCTL] if name == "swanctl.conf" else files[name]
            sys.stdout.write(f"### {name}{' (keys redacted: --output-dir writes them)' * (name == 'swanctl.conf')}\n")
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return 0
    try:
        args.output_dir.mkdir(parents=True, exist_ok=True)
        for name, mode in FILES.items():
            _write(args.output_dir / name, files[name], mode)
            out.print(f"wrote {args.output_dir / name} (mode {mode:o})")
    except OSError as exc:
        raise UsageError(f"{args.output_dir}: cannot write the configuration ({exc.strerror}); choose another "
                         "--output-dir") from None  # fmt: skip
    return 0


def _write(path: Path, text: str, mode: int) -> None:
    """Write a file that has its final mode from its first byte: a temporary file created with the mode (no
    other process can open it in between), then renamed over the target."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(descriptor, mode)  # the umask may have narrowed it; never widened
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _read_outputs(path: Path) -> dict[str, Any]:
    try:
        outputs = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(
            f"{path}: cannot read the stack outputs ({exc}); write them with "
            "`pulumi stack output --json --show-secrets > FILE`"
        ) from None
    if not isinstance(outputs, dict):
        raise UsageError(f"{path}: not the JSON object `pulumi stack output --json` writes")
    return outputs


def _vpn_files(outputs: dict[str, Any], site: str, source: str, gateway: str | None) -> dict[str, str]:
    sites = outputs.get("sites")
    gateways = (sites.get(site) or {}).get("vpn") if isinstance(sites, dict) else None
    if not isinstance(gateways, dict) or not gateways:
        raise UsageError(
            f"{source}: no VPN configuration for '{site}' (outputs sites.{site}.vpn); was the stack applied with "
            "its links?"
        )
    if gateway is None and len(gateways) > 1:
        raise UsageError(
            f"'{site}' has {len(gateways)} gateway hosts, each with its own tunnels; choose one with --gateway: "
            f"{', '.join(sorted(gateways))}"
        )
    if gateway is not None and gateway not in gateways:
        raise UsageError(f"'{gateway}' is not a gateway of '{site}'; use one of: {', '.join(sorted(gateways))}")
    vpn = gateways[gateway] if gateway is not None else next(iter(gateways.values()))
    if not isinstance(vpn, dict):
        raise UsageError(f"{source}: sites.{site}.vpn holds no configuration files; re-run `pulumi up`")
    secret = vpn.get("swanctl.conf")
    if not isinstance(secret, str) or secret == "[secret]" or (isinstance(secret, dict) and SECRET_SIG in secret):
        raise UsageError(
            f"{source}: the swanctl.conf output is still encrypted; write the outputs with "
            "`pulumi stack output --json --show-secrets`"
        )
    missing = [name for name in (*FILES, REDACTED_SWANCTL) if not isinstance(vpn.get(name), str)]
    if missing:
        raise UsageError(f"{source}: sites.{site}.vpn lacks {', '.join(missing)}; re-run `pulumi up` with this Lattice")
    return vpn


def _links_reach(args: argparse.Namespace, out: Console) -> int:
    from rich.table import Table

    from lattice.components.flows.reachability import needed_paths
    from lattice.engine.plan import run_plan
    from lattice.tables import print_note, print_table

    from .common import EXIT_VIOLATIONS, resolve_stack_file

    stack_file = resolve_stack_file(args)
    plan = run_plan(stack_file)
    needs = needed_paths(plan, stack_file.spec)
    dropped = [need for need in needs if not need.path.delivered]
    if args.format == "json":
        document = {
            "stack": plan.stack,
            "needed": len(needs),
            "delivered": len(needs) - len(dropped),
            "dropped": len(dropped),
            "paths": [_need_json(need) for need in needs],
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
        return EXIT_VIOLATIONS if dropped else 0
    if not needs:
        out.print(f"no network path to walk in stack '{plan.stack}'")
        return 0
    table = Table(title=f"{plan.stack}: {len(needs)} needed paths, {len(dropped)} dropped")
    for column in ("need", "from", "to", "path"):
        table.add_column(column)
    for need in needs:
        path = need.path
        assumed = len(path.assumptions)
        verdict = (f"delivered{f', {assumed} assumed' if assumed else ''}" if path.delivered
                   else f"dropped{' (return)' * path.dropped_on_return} at {path.dropped_at.where}")  # fmt: skip
        table.add_row(need.kind, _source(need), _destination(need.destination), verdict)
    print_table(out, table)
    if args.hops:
        for need in needs:
            out.print()
            print_note(out, need.kind, f"{_source(need)} → {_destination(need.destination)}: {need.why} ({need.key})")
            for hop in need.path.hops:
                print_note(out, "  >" if hop.passes else "  X", f"{hop}{' (assumed)' * hop.assumed}")
            for hop in need.path.return_hops:
                print_note(out, "  <" if hop.passes else "  X", f"{hop}{' (assumed)' * hop.assumed}")
    print_note(
        out,
        "assumed",
        "hops outside the plan (a grid or edge site's own network, the internet): stated, not proven; --hops "
        "prints every hop",
    )
    for need in dropped:
        print_note(out, "dropped", f"{_source(need)} → {_destination(need.destination)}: {need.path.dropped_at}; "
                   f"needed because {need.why} ({need.key})")  # fmt: skip
    return EXIT_VIOLATIONS if dropped else 0


def _source(need) -> str:
    return f"{need.source_site} {need.source}" if need.source_site else "the internet"


def _destination(endpoint) -> str:
    what = SHORT.get(endpoint.kind, endpoint.what or endpoint.kind)
    port = f":{endpoint.port}" if endpoint.port is not None else ""
    return f"{endpoint.site} {what}{port}"


def _hop_json(hop) -> dict[str, Any]:
    from lattice.components.flows.reachability import SOURCES

    return {
        "where": hop.where,
        "what": hop.what,
        "decision": hop.decision,
        "passes": hop.passes,
        "assumed": hop.assumed,
        "source": SOURCES.get(hop.source, hop.source),
    }


def _need_json(need) -> dict[str, Any]:
    destination = need.destination
    path = need.path
    return {
        "kind": need.kind,
        "source_site": need.source_site,
        "source": need.source,
        "destination": {
            "site": destination.site,
            "kind": destination.kind,
            "address": destination.address,
            "port": destination.port,
            "protocol": destination.protocol,
            "what": destination.what,
            "server": destination.server,
            "namespace": destination.namespace,
            "resource": destination.resource,
        },
        "why": need.why,
        "key": need.key,
        "delivered": path.delivered,
        "verdict": path.verdict(),
        "dropped_at": _hop_json(path.dropped_at) if path.dropped_at is not None else None,
        "hops": [_hop_json(hop) for hop in path.hops],
        "return_hops": [_hop_json(hop) for hop in path.return_hops],
    }
