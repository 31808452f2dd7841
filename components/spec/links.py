"""The ``links`` key of a stack: IPsec VPN between sites, hub-and-spoke or in explicit pairs.

Shape only, as in ``model.py``; which pairs Lattice can build, ASNs, bandwidth against tunnels and the inside
addresses are checked by ``link_validators.py`` against the whole stack. Every number a component needs comes
from here (or ``components/standards.py`` as a default here).

A link entry is either a pair (``sites: [a, b]``) or a hub with spokes (``hub: a, spokes: [b, c]``, each
spoke a name or ``{site, bandwidth_gbps, routing, inside_block}``); both expand to site pairs, and a pair's
resources are named after its two sites, never a position in the list.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from ..standards import (
    VPN_DEFAULT_BANDWIDTH_GBPS,
    VPN_DH_GROUPS_STRONG,
    VPN_ENCRYPTION_STRONG,
    VPN_INTEGRITY_STRONG,
    VPN_MEAN_PACKET_BYTES,
)
from .types import SiteName

Routing = Literal["bgp", "static"]
TunnelSize = Literal["standard", "large"]
TUNNEL_SIZE_DESCRIPTION = (
    "AWS tunnel size, fixed when the VPN connection is created: standard (1.25 Gbps a tunnel) or large (5 Gbps; "
    "transit gateway only). Changing it replaces the connection: new outside addresses, and every peer gateway "
    "reconfigured (terraform-provider-aws marks tunnel_bandwidth ForceNew). Default: large above 1.25 Gbps; pin "
    "it once the link exists, so raising bandwidth_gbps adds tunnel pairs instead of replacing it."
)
# The strong set (components/standards.py): a link may offer fewer of these, never anything else.
Encryption = Literal["AES256-GCM-16"]
Integrity = Literal["SHA2-384", "SHA2-512"]
DhGroup = Literal[20, 21]


def _inside_block(value: str) -> str:
    try:
        block = ipaddress.ip_network(value, strict=True)
    except ValueError:
        raise ValueError(
            f"'{value}' is not a /26 network with its host bits zero; write it like 169.254.42.64/26"
        ) from None
    if block.version != 4 or block.prefixlen != 26 or not block.subnet_of(ipaddress.ip_network("169.254.0.0/16")):
        raise ValueError(f"'{value}' is not a /26 of 169.254.0.0/16; write it like 169.254.42.64/26")
    return str(block)


InsideBlock = Annotated[
    str,
    AfterValidator(_inside_block),
    Field(
        description="A /26 of 169.254.0.0/16 for this link's tunnel inside addresses (pins it; default: derived "
        "from the two site names)."
    ),
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _unique(values: list) -> list:
    twice = sorted({str(v) for v in values if values.count(v) > 1})
    if twice:
        raise ValueError(f"{', '.join(twice)} listed more than once; list each value once")
    return values


class IkeSpec(Strict):
    """IKEv2 proposals both tunnel phases use; the defaults are the strongest every peer here accepts.

    Only tightening is possible: every value offered must be among the strong ones, so a link can drop SHA2-384
    for SHA2-512 or DH 20 for 21, never add AES128, SHA1 or DH 2. Links to GCP take exactly one value per role
    (Cloud VPN fails to rekey when the AWS side offers several).
    """

    encryption: Annotated[list[Encryption], AfterValidator(_unique)] = Field(
        default_factory=lambda: list(VPN_ENCRYPTION_STRONG[:1]), min_length=1, description="Phase 1 and 2 ciphers."
    )
    integrity: Annotated[list[Integrity], AfterValidator(_unique)] = Field(
        default_factory=lambda: list(VPN_INTEGRITY_STRONG[:1]), min_length=1, description="Phase 1 and 2 integrity."
    )
    dh_groups: Annotated[list[DhGroup], AfterValidator(_unique)] = Field(
        default_factory=lambda: list(VPN_DH_GROUPS_STRONG[:1]), min_length=1, description="Phase 1 and 2 DH groups."
    )
    phase1_lifetime_seconds: int = Field(
        28_800, description="IKE SA lifetime in seconds.", examples=[28800], ge=900, le=28_800
    )
    phase2_lifetime_seconds: int = Field(
        3_600, description="IPsec (child) SA lifetime in seconds.", examples=[3600], ge=900, le=3_600
    )


class AdmitSpec(Strict):
    """Traffic a link's far end may start towards the cloud end's nodes and pods."""

    protocol: Literal["tcp", "udp", "icmp", "all"] = Field("tcp", description="IP protocol admitted.", examples=["tcp"])
    ports: Annotated[str, Field(pattern=r"^\d{1,5}(-\d{1,5})?$")] | int | None = Field(
        None, description="A port or range ('8000-8100'); tcp and udp only."
    )

    @model_validator(mode="after")
    def _ports_fit(self) -> AdmitSpec:
        if (self.ports is not None) != (self.protocol in ("tcp", "udp")):
            raise ValueError("tcp and udp take ports (a port or 'from-to'); icmp and all take none")
        low, _, high = str(self.ports or "0").partition("-")
        if self.ports is not None and not 1 <= int(low) <= int(high or low) <= 65_535:
            raise ValueError(f"'{self.ports}' is not a port range within 1-65535")
        return self

    @property
    def port_range(self) -> tuple[int, int] | None:
        if self.ports is None:
            return None
        low, _, high = str(self.ports).partition("-")
        return int(low), int(high or low)


class SpokeSpec(Strict):
    site: SiteName = Field(description="The spoke site joined to the hub.", examples=["grid-hpc"])
    bandwidth_gbps: float | None = Field(None, gt=0, description="Default: the hub entry's bandwidth_gbps.")
    routing: Routing | None = Field(None, description="Default: the hub entry's routing.")
    inside_block: InsideBlock | None = Field(
        None,
        description="A /26 of 169.254.0.0/16 for this spoke's tunnel inside addresses (pins it; default: derived "
        "from the two site names).",
        examples=["169.254.42.64/26"],
    )
    tunnel_size: TunnelSize | None = Field(None, description="Default: the hub entry's. " + TUNNEL_SIZE_DESCRIPTION)


# A spoke is written as a site name or as an object; both are read as a SpokeSpec, so errors have one path.
Spoke = Annotated[
    SpokeSpec,
    BeforeValidator(lambda v: {"site": v} if isinstance(v, str) else v, json_schema_input_type=SiteName | SpokeSpec),
]


class LinkSpec(Strict):
    """One link entry: a pair of sites, or a hub site with its spokes."""

    sites: list[SiteName] | None = Field(
        None, min_length=2, max_length=2, description="The two sites of a point-to-point link."
    )
    hub: SiteName | None = Field(None, description="A cloud site every spoke links to (AWS: its transit gateway).")
    spokes: list[Spoke] = Field(
        default_factory=list, description="Sites linked to the hub: names, or {site, bandwidth_gbps, routing, …}."
    )
    bandwidth_gbps: float = Field(
        VPN_DEFAULT_BANDWIDTH_GBPS,
        gt=0,
        description="Traffic the link must carry (both directions together); Lattice builds the tunnels for it.",
    )
    routing: Routing = Field(
        "bgp", description="bgp (dynamic, ECMP across tunnels) or static (AWS <-> grid / edge only, one tunnel)."
    )
    ike: IkeSpec = Field(
        description="IKE / IPsec proposals; a link may only narrow the defaults.", default_factory=IkeSpec
    )
    admit: list[AdmitSpec] = Field(
        default_factory=list,
        description="What the far end may start towards the cloud end's nodes and pods (security group / "
        "firewall rules from its ranges). Default: nothing — replies to what the cloud starts always pass.",
    )
    mean_packet_bytes: int = Field(
        VPN_MEAN_PACKET_BYTES,
        ge=64,
        le=1_460,
        description="Average packet size, which turns Cloud VPN's 250,000 packets/s per tunnel into Gbps.",
    )
    inside_block: InsideBlock | None = Field(None, description="Pairs only; spokes set their own.")
    tunnel_size: TunnelSize | None = Field(None, description=TUNNEL_SIZE_DESCRIPTION)

    @model_validator(mode="after")
    def _pair_or_hub(self) -> LinkSpec:
        if (self.sites is None) == (self.hub is None):
            raise ValueError(
                "a link is either a pair (sites: [a, b]) or a hub with spokes (hub: a, spokes: [b, c]); set one"
            )
        if self.hub is not None and not self.spokes:
            raise ValueError("a hub link needs spokes: [site, ...]")
        if self.sites is not None and self.spokes:
            raise ValueError("spokes go with hub, not with sites; write a hub link or a pair")
        if self.hub is not None and self.inside_block is not None:
            raise ValueError("a hub link pins inside blocks per spoke: spokes: [{site: b, inside_block: ...}]")
        return self

    def tunnel_sizes(self) -> list[TunnelSize | None]:
        """The pinned AWS tunnel size of each pair ``pairs()`` makes, in the same order (None: derived)."""
        if self.sites is not None:
            return [self.tunnel_size]
        return [spoke.tunnel_size or self.tunnel_size for spoke in self.spokes]

    def pairs(self) -> list[tuple[str, str, float, Routing, str | None, str]]:
        """(site, site, bandwidth, routing, pinned inside block, key path) for each pair this entry makes."""
        if self.sites is not None:
            return [(self.sites[0], self.sites[1], self.bandwidth_gbps, self.routing, self.inside_block, "")]
        out = []
        for k, spec in enumerate(self.spokes):
            out.append(
                (
                    self.hub,
                    spec.site,
                    spec.bandwidth_gbps or self.bandwidth_gbps,
                    spec.routing or self.routing,
                    spec.inside_block,
                    f".spokes[{k}]",
                )
            )
        return out
