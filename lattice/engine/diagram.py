"""A picture of the hybrid estate a stack plans: sites by tier, their clusters, GPU pools, storage tiers and links.

``estate(spec, plan)`` reads what the plan built — the stack's ``sites`` and ``links`` outputs, which the
components export (each site's tier, cluster, storage tiers and GPU pools as they were wired; each link's kind,
routing, tunnels and capacity from ``components/network/link_plan.py``) — and the validated spec that plan ran
(pool sizes and accelerator types). ``mermaid(estate)`` draws it as a Mermaid flowchart (GitHub, the docs and
the pull request's job summary render it), ``dot(estate)`` as Graphviz DOT, which ``dot -Tsvg`` turns into SVG;
``draw(stack_file, fmt)`` plans a stack file and draws it in one of the three (``lattice diagram``).

Node IDs are derived from the names by an injective escape (``-`` becomes ``_2d``, ``.`` ``_2e``, ``_`` ``_5f``),
so ``grid-hpc`` and ``grid_hpc`` never collide and no name can form a Mermaid keyword or break the syntax; labels
are quoted and their quotes, ``#``, ``<``, ``>`` and ``&`` written as Mermaid entity codes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

from lattice.errors import UsageError

TIERS = ("grid", "cloud", "edge")
PROVIDER_NAMES = {"aws": "AWS", "gcp": "GCP", "kubernetes": "Kubernetes"}
STORAGE_KINDS = {"nvme": "NVMe", "lustre": "Lustre", "nfs": "NFS", "gpfs": "GPFS", "object": "object"}
FABRICS = {"infiniband": "InfiniBand", "roce": "RoCE", "ethernet": "Ethernet"}
LINK_KINDS = {
    "aws-onprem": "AWS Site-to-Site VPN",
    "aws-gcp": "AWS VPN to GCP HA VPN",
    "gcp-onprem": "GCP HA VPN",
}


@dataclass(frozen=True)
class Pool:
    name: str
    machine: str  # "p5.48xlarge", "8 × H100-80GB", "TPU v5p 2x2x2"
    min_nodes: int
    max_nodes: int
    fabric: str  # "EFA", "InfiniBand 3200 Gbps", "GPUDirect-TCPXO", "" (none)
    scheduler: str = "kueue"  # a grid / edge pool's gpu_pools[].scheduler: kueue or slurm


@dataclass(frozen=True)
class Storage:
    name: str
    kind: str
    capacity_gib: float | None
    write_mbps: float | None
    mount: str  # mount path, or the object store's scheme


@dataclass(frozen=True)
class Site:
    name: str
    tier: str
    provider: str
    where: str  # region, or location for a Kubernetes site
    cluster: str
    pools: tuple[Pool, ...]
    storage: tuple[Storage, ...]


@dataclass(frozen=True)
class Link:
    name: str  # the plan's key, "<cloud>--<peer>"
    a: str
    b: str
    kind: str
    routing: str
    tunnels: int
    bandwidth_gbps: float
    capacity_gbps: float


@dataclass(frozen=True)
class Estate:
    environment: str
    sites: tuple[Site, ...]
    links: tuple[Link, ...]


def estate(spec, plan) -> Estate:
    """The estate of ``plan`` (a ``lattice.engine.plan.Plan`` of ``spec``), in the spec's site order."""
    outputs = plan.outputs.get("sites") or {}
    sites = []
    for site in spec.sites:
        out = outputs.get(site.name)
        if out is None:  # a site the plan did not build (cannot happen for a plan of this spec)
            raise ValueError(f"the plan has no site {site.name!r}: plan and spec differ")
        sites.append(
            Site(
                name=site.name,
                tier=out["tier"],
                provider=out["provider"],
                where=getattr(site, "region", None) or getattr(site, "location", None) or "",
                cluster=_cluster(site, out),
                pools=tuple(_pool(site, pool, out) for pool in site.gpu_pools),
                storage=_storage(out.get("storage") or {}),
            )
        )
    links = []
    for key, link in (plan.outputs.get("links") or {}).items():
        a, _, b = key.partition("--")
        links.append(
            Link(
                name=key,
                a=a,
                b=b,
                kind=link["kind"],
                routing=link["routing"],
                tunnels=link["tunnels"],
                bandwidth_gbps=link["bandwidth_gbps"],
                capacity_gbps=link["capacity_gbps"],
            )
        )
    return Estate(environment=spec.environment, sites=tuple(sites), links=tuple(links))


def _storage(tiers: dict[str, dict[str, Any]]) -> tuple[Storage, ...]:
    """A site's storage tiers, fastest kind first (NVMe, Lustre, NFS, GPFS, object), then by name."""
    order = list(STORAGE_KINDS)
    drawn = (
        Storage(
            name=name,
            kind=tier["kind"],
            capacity_gib=tier.get("capacity_gib"),
            write_mbps=tier.get("write_mbps"),
            mount=tier.get("mount_path") or _scheme(tier),
        )
        for name, tier in tiers.items()
    )
    return tuple(sorted(drawn, key=lambda s: (order.index(s.kind) if s.kind in order else len(order), s.name)))


def _cluster(site, out: dict[str, Any]) -> str:
    if site.provider == "aws":
        return f"EKS {site.kubernetes.version or ''}".rstrip() + (
            f" (existing {site.kubernetes.existing_cluster})" if site.kubernetes.existing_cluster else ""
        )
    if site.provider == "gcp":
        return f"GKE {site.kubernetes.release_channel} channel"
    access = site.kubernetes
    how = f"context {access.context}" if access.context else f"kubeconfig secret {access.kubeconfig_secret}"
    return f"Kubernetes {access.version or ''}".rstrip() + f", {how}"


def _pool(site, pool, out: dict[str, Any]) -> Pool:
    wired = (out.get("gpu_pools") or {}).get(pool.name, {})
    if site.provider == "aws":
        machine = pool.instance_type
        fabric = f"EFA {wired['efa_bandwidth_gbps']:g} Gbps" if wired.get("efa") else ""
    elif site.provider == "gcp":
        if pool.tpu is not None:
            machine, fabric = f"TPU {pool.tpu.type} {pool.tpu.topology}", "ICI"
        else:
            from lattice.components.catalog.gcp import gcp_machine_type

            accelerator = pool.guest_accelerator
            catalog = gcp_machine_type(
                pool.machine_type, (accelerator.type, accelerator.count) if accelerator else None
            )
            machine = pool.machine_type + (f" + {accelerator.count} × {accelerator.type}" if accelerator else "")
            # The plan wires the GPU NICs (gpu_nics) only where the machine has GPUDirect Lattice installs.
            fabric = f"GPUDirect-{catalog.gpudirect.value.upper()}" if wired.get("gpu_nics") else ""
    else:
        machine = f"{pool.gpus_per_node} × {pool.gpu_model}"
        fabric = f"{FABRICS[pool.fabric]} {pool.fabric_bandwidth_gbps:g} Gbps"
    return Pool(pool.name, machine, pool.min_nodes, pool.max_nodes, fabric, getattr(pool, "scheduler", "kueue"))


def _scheme(tier: dict[str, Any]) -> str:
    uri = (tier.get("pod") or {}).get("uri")
    return uri.split("://", 1)[0] + "://" if isinstance(uri, str) and "://" in uri else ""


# --- identifiers and labels -------------------------------------------------------------------------------------


def node_id(*parts: str) -> str:
    """A Mermaid / DOT identifier for a thing named by ``parts``: letters and digits kept, every other character
    ``_xx`` (its code point in hex), parts joined by ``__`` (which no escaped part contains): injective."""
    return "__".join(
        re.sub(r"[^A-Za-z0-9]", lambda m: "".join(f"_{b:02x}" for b in m.group().encode()), p) for p in parts
    )


_ENTITIES = {"&": "#amp;", '"': "#quot;", "#": "#35;", "<": "#lt;", ">": "#gt;"}


def mermaid_text(text: str) -> str:
    """``text`` inside a quoted Mermaid label: the characters that end or mark up a label as entity codes."""
    return re.sub(r'[&"#<>]', lambda m: _ENTITIES[m.group()], text)


def _label(*lines: str) -> str:
    return "<br/>".join(mermaid_text(line) for line in lines if line)


def _nodes(low: int, high: int) -> str:
    return f"{low}–{high} nodes" if low != high else f"{high} node{'s' if high != 1 else ''}"


def _gib(gib: float) -> str:
    if gib >= 1024 * 1024:
        return f"{gib / 1024 / 1024:,.3g} PiB"
    if gib >= 1024:
        return f"{gib / 1024:,.3g} TiB"
    return f"{gib:,.0f} GiB"


def pool_lines(pool: Pool) -> tuple[str, ...]:
    return (
        f"{'TPU' if pool.machine.startswith('TPU') else 'GPU'} pool {pool.name}",
        f"{pool.machine} × {_nodes(pool.min_nodes, pool.max_nodes)}",
        pool.fabric,
        *(["Slurm partition (sbatch)"] if pool.scheduler == "slurm" else []),
    )


def storage_lines(tier: Storage) -> tuple[str, ...]:
    figures = ", ".join(
        figure
        for figure in (
            _gib(tier.capacity_gib) if tier.capacity_gib else "",
            f"{tier.write_mbps / 1000:,.3g} GB/s write" if tier.write_mbps else "",
        )
        if figure
    )
    return (f"{STORAGE_KINDS.get(tier.kind, tier.kind)} {tier.name}", tier.mount, figures)


def link_lines(link: Link) -> tuple[str, ...]:
    return (
        link.name,
        f"{LINK_KINDS.get(link.kind, link.kind)}, {link.routing.upper() if link.routing == 'bgp' else link.routing}",
        f"{link.tunnels} tunnels, {link.bandwidth_gbps:g} Gbps asked, {link.capacity_gbps:g} carried",
    )


def site_title(site: Site) -> str:
    return f"{site.name} ({PROVIDER_NAMES.get(site.provider, site.provider)}{', ' + site.where if site.where else ''})"


def _tiers(estate: Estate) -> list[tuple[str, list[Site]]]:
    tiers = [(tier, [s for s in estate.sites if s.tier == tier]) for tier in TIERS]
    others = sorted({s.tier for s in estate.sites} - set(TIERS))
    return [(t, sites) for t, sites in tiers + [(t, [s for s in estate.sites if s.tier == t]) for t in others] if sites]


# --- Mermaid ----------------------------------------------------------------------------------------------------


def mermaid(estate: Estate) -> str:
    """The estate as a Mermaid flowchart: a subgraph per tier, one per site inside it holding its cluster, pools
    and storage tiers; a labelled edge per link between the two sites' clusters."""
    lines = [
        f"%% lattice diagram: the {estate.environment} stack's sites, pools, storage tiers and links",
        "flowchart LR",
    ]
    for tier, sites in _tiers(estate):
        lines.append(f'  subgraph {node_id("tier", tier)}["{mermaid_text(tier + " tier")}"]')
        lines.append("    direction TB")
        for site in sites:
            lines.append(f'    subgraph {node_id("site", site.name)}["{mermaid_text(site_title(site))}"]')
            lines.append(f'      {node_id("cluster", site.name)}["{_label(site.cluster)}"]')
            for pool in site.pools:
                lines.append(f'      {node_id("pool", site.name, pool.name)}["{_label(*pool_lines(pool))}"]')
            for tier_ in site.storage:
                lines.append(f'      {node_id("storage", site.name, tier_.name)}[("{_label(*storage_lines(tier_))}")]')
            lines.append("    end")
        lines.append("  end")
    for link in estate.links:
        lines.append(f'  {node_id("cluster", link.a)} <-->|"{_label(*link_lines(link))}"| {node_id("cluster", link.b)}')
    return "\n".join(lines) + "\n"


# --- Graphviz ---------------------------------------------------------------------------------------------------


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_label(*lines: str) -> str:
    return _dot_string("\n".join(line for line in lines if line)).replace("\n", "\\n")


def dot(estate: Estate) -> str:
    """The same picture in Graphviz DOT (clusters for tiers and sites), for ``dot -Tsvg``."""
    lines = [
        f"// lattice diagram: the {estate.environment} stack",
        f"graph {node_id('lattice', estate.environment)} {{",
        "  rankdir=LR; compound=true; fontname=Helvetica;",
        "  node [shape=box, style=rounded, fontname=Helvetica, fontsize=10];",
        "  edge [fontname=Helvetica, fontsize=9];",
    ]
    for tier, sites in _tiers(estate):
        lines.append(f"  subgraph cluster_{node_id('tier', tier)} {{ label={_dot_string(tier + ' tier')};")
        for site in sites:
            lines.append(f"    subgraph cluster_{node_id('site', site.name)} {{ label={_dot_string(site_title(site))};")
            lines.append(f"      {node_id('cluster', site.name)} [label={_dot_label(site.cluster)}, style=bold];")
            for pool in site.pools:
                lines.append(f"      {node_id('pool', site.name, pool.name)} [label={_dot_label(*pool_lines(pool))}];")
            for tier_ in site.storage:
                lines.append(
                    f"      {node_id('storage', site.name, tier_.name)} "
                    f"[label={_dot_label(*storage_lines(tier_))}, shape=cylinder, style=solid];"
                )
            lines.append("    }")
        lines.append("  }")
    for link in estate.links:
        lines.append(
            f"  {node_id('cluster', link.a)} -- {node_id('cluster', link.b)} [label={_dot_label(*link_lines(link))}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- drawn from a stack file ------------------------------------------------------------------------------------


def draw(stack_file, fmt: str, plan=None) -> str:
    """The diagram of ``stack_file``'s offline plan (``plan``, when it has been run already) in ``fmt``."""
    from .plan import run_plan

    drawn = estate(stack_file.spec, plan if plan is not None else run_plan(stack_file))
    if fmt == "mermaid":
        return mermaid(drawn)
    if fmt == "dot":
        return dot(drawn)
    return svg(dot(drawn))


def svg(dot_text: str) -> str:
    executable = shutil.which("dot")
    if executable is None:
        raise UsageError(
            "lattice diagram --format svg: needs Graphviz's `dot` on the PATH (Debian: apt-get install graphviz); "
            "or use --format mermaid"
        )
    result = subprocess.run(
        [executable, "-Tsvg"], input=dot_text, capture_output=True, text=True, check=False, timeout=120
    )
    if result.returncode != 0:
        raise RuntimeError(f"dot -Tsvg exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout
