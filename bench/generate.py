"""Stacks that replicate prod's sites, teams and links, for plans and checks at scale.

Copy *k* of ``stacks/Pulumi.prod.yaml`` renames every site (``aws-use1`` -> ``aws-use1-c3``) and team, and moves
every site-owned value to one of its own so the copies stay a valid stack together: private ranges to fresh
blocks of 10.0.0.0/8 (every address inside an old range — runner CIDRs, authorised networks, an NFS server —
keeps its offset in the new one), BGP ASNs to private 4-byte ASNs, VPN gateway addresses to fresh documentation
addresses, GCP projects and capacity reservations to their own IDs, inference endpoints to the copy's team and
sites, and link inside blocks to free /26s where the block derived from the new site names is taken. The generated
file is validated as ``lattice plan`` would.

    python -m bench.generate 20 out/bench   # writes out/bench/Pulumi.bench-c20.yaml
"""

from __future__ import annotations

import copy
import ipaddress
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from lattice.components.network.link_plan import BLOCKS, PROVIDER_ORDER, derived_block

ROOT = Path(__file__).resolve().parent.parent
PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
SPEC_KEY = "lattice:spec"
# Private 4-byte ASNs (RFC 6996), far from the 2-byte ones prod uses.
ASN_BASE = 4_200_010_000
# Fresh outside addresses for the grid and edge VPN gateways: RFC 5737's documentation ranges.
PUBLIC_RANGES = ("192.0.2.0/24", "203.0.113.0/24")


def generate(copies: int, source: Path = PROD) -> dict[str, Any]:
    """The stack document (``config`` mapping) holding ``copies`` renamed copies of ``source``'s spec."""
    document = yaml.safe_load(source.read_text())
    config = document["config"]
    spec = config[SPEC_KEY]
    ranges = _site_ranges(spec["sites"])
    blocks = _fresh_blocks(ranges, copies)
    addresses = _fresh_addresses()
    sites, teams, links = [], [], []
    for k in range(copies):
        renamed = {site["name"]: f"{site['name']}-c{k}" for site in spec["sites"]}
        moves = {old: next(blocks[old.prefixlen]) for old in ranges}
        for index, site in enumerate(spec["sites"]):
            sites.append(_copy_site(site, k, index, renamed=renamed, moves=moves, addresses=addresses))
        # A team without sites is on every grid and edge site of the stack: in a copy, on the copy's own.
        own = [renamed[site["name"]] for site in spec["sites"] if site["tier"] != "cloud"]
        teams.extend(_copy_team({"sites": own, **team}, k, renamed) for team in spec.get("teams", []))
        links.extend(_rename(copy.deepcopy(link), renamed) for link in spec.get("links", []))
    _pin_inside_blocks(links, {site["name"]: site["provider"] for site in sites})
    # The copies are independent hybrid stacks: one MultiKueue manager or one central metrics store would reach the
    # other copies' sites only over links the copies do not have, so copies queue and keep metrics per cluster.
    rest = {key: value for key, value in spec.items() if key not in ("multikueue", "observability")}
    config[SPEC_KEY] = {**rest, "sites": sites, "teams": teams, "links": links}
    return {"config": config}


def write(copies: int, directory: Path) -> Path:
    """Write the generated stack to ``directory/Pulumi.bench-c<copies>.yaml`` and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"Pulumi.bench-c{copies}.yaml"
    path.write_text(yaml.safe_dump(generate(copies), sort_keys=False, width=200))
    return path


# --- sites ---------------------------------------------------------------------------


def _site_ranges(sites: list[dict[str, Any]]) -> list[ipaddress.IPv4Network]:
    """Every range prod's sites own: their CIDRs and routed CIDRs."""
    out = []
    for site in sites:
        network = site["network"]
        out += [ipaddress.ip_network(c) for c in (network["cidr"], *network.get("routed_cidrs", []))]
    return out


def _fresh_blocks(ranges: list[ipaddress.IPv4Network], copies: int) -> dict[int, Iterator[ipaddress.IPv4Network]]:
    """Per prefix length, an iterator of distinct blocks of 10.0.0.0/8, none overlapping another's."""
    sixteens = ipaddress.ip_network("10.0.0.0/8").subnets(new_prefix=16)
    prefixes = sorted({r.prefixlen for r in ranges})
    if min(prefixes) < 16:
        raise ValueError("prod has a site range larger than a /16; widen the generator's blocks")

    def carve(prefix: int) -> Iterator[ipaddress.IPv4Network]:
        for sixteen in sixteens:
            yield from sixteen.subnets(new_prefix=prefix)
        raise ValueError(f"{copies} copies need more /16s of 10.0.0.0/8 than there are")

    return {prefix: carve(prefix) for prefix in prefixes}


def _fresh_addresses() -> Iterator[str]:
    for block in PUBLIC_RANGES:
        yield from (str(host) for host in ipaddress.ip_network(block).hosts())


def _copy_site(
    site: dict[str, Any],
    k: int,
    index: int,
    *,
    renamed: dict[str, str],
    moves: dict[ipaddress.IPv4Network, ipaddress.IPv4Network],
    addresses: Iterator[str],
) -> dict[str, Any]:
    out = _move_addresses(copy.deepcopy(site), moves)
    out["name"] = renamed[site["name"]]
    network = out["network"]
    if "asn" in network:
        network["asn"] = ASN_BASE + 100 * k + index
    if "vpn_gateway" in network:
        network["vpn_gateway"]["public_ips"] = [next(addresses) for _ in network["vpn_gateway"]["public_ips"]]
    if "project" in out:
        out["project"] = f"{site['project']}-c{k}"
    for pool in out.get("gpu_pools", []):
        reservation = pool.get("capacity", {}).get("reservation_id")
        if reservation:
            pool["capacity"]["reservation_id"] = f"{reservation[:-6]}{k:06x}"
    for entry in out.get("inference", []):  # the copy's own team, weights on the copy's own site
        entry["team"] = f"{entry['team']}-c{k}"
        entry["weights"]["site"] = renamed[entry["weights"]["site"]]
    if "slurm" in out:  # the sites Slurm's clients come from, renamed with the copy
        for key in ("login_from", "rest_from"):
            if key in out["slurm"]:
                out["slurm"][key] = _rename(out["slurm"][key], renamed)
    return out


def _move_addresses(value: Any, moves: dict[ipaddress.IPv4Network, ipaddress.IPv4Network]) -> Any:
    """Every address or network inside an old site range, at the same offset in its new range."""
    if isinstance(value, dict):
        return {key: _move_addresses(item, moves) for key, item in value.items()}
    if isinstance(value, list):
        return [_move_addresses(item, moves) for item in value]
    if not isinstance(value, str) or not value[:1].isdigit():
        return value
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        return value
    for old, new in moves.items():
        if network.subnet_of(old):
            offset = int(network.network_address) - int(old.network_address)
            moved = ipaddress.ip_address(int(new.network_address) + offset)
            return f"{moved}/{network.prefixlen}" if "/" in value else str(moved)
    return value


# --- teams and links -------------------------------------------------------------------


def _copy_team(team: dict[str, Any], k: int, renamed: dict[str, str]) -> dict[str, Any]:
    out = _rename(copy.deepcopy(team), renamed)
    out["name"] = f"{team['name']}-c{k}"
    if "namespace" in out:
        out["namespace"] = f"{team['namespace']}-c{k}"
    # A cloud identity maps to one team (one EKS access entry per role): each copy's team gets its own.
    out["aws_role_arns"] = [f"{arn}-c{k}" for arn in team.get("aws_role_arns", [])]
    out["gcp_members"] = [member.replace("@", f"-c{k}@", 1) for member in team.get("gcp_members", [])]
    return {key: value for key, value in out.items() if value or key in team}


def _rename(value: Any, renamed: dict[str, str]) -> Any:
    """Site names as values, list items or per-site mapping keys, renamed."""
    if isinstance(value, dict):
        return {renamed.get(key, key): _rename(item, renamed) for key, item in value.items()}
    if isinstance(value, list):
        return [_rename(item, renamed) for item in value]
    if isinstance(value, str):
        return renamed.get(value, value)
    return value


def _pairs(link: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(site, site, where its inside block is pinned) for each pair of a link entry; spokes become objects."""
    if "sites" in link:
        yield link["sites"][0], link["sites"][1], link
        return
    link["spokes"] = [{"site": spoke} if isinstance(spoke, str) else spoke for spoke in link["spokes"]]
    for spoke in link["spokes"]:
        yield link["hub"], spoke["site"], spoke


def _pin_inside_blocks(links: list[dict[str, Any]], providers: dict[str, str]) -> None:
    """Pin a free /26 wherever two pairs' name-derived inside blocks collide (copies multiply the pairs)."""
    pairs = []
    for link in links:
        for a, b, holder in _pairs(link):
            cloud, peer = sorted((a, b), key=lambda name: PROVIDER_ORDER[providers[name]])
            pairs.append((str(derived_block(cloud, peer)), holder))
    derived = {block for block, _ in pairs}
    free = (str(block) for block in BLOCKS if str(block) not in derived)
    taken: set[str] = set()
    for block, holder in pairs:
        if "inside_block" in holder:
            raise ValueError("prod pins an inside block; the generator would copy it into every copy")
        pinned = next(free) if block in taken else None
        if pinned is not None:
            holder["inside_block"] = pinned
        taken.add(pinned or block)


def main(argv: list[str]) -> int:
    copies, directory = int(argv[0]), Path(argv[1])
    print(write(copies, directory))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
