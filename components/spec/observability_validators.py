"""Rules of the ``observability`` keys: the central metrics store's site and address, and a link from every other
site to it. Each yields (key path, message saying what to do)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from .link_validators import routed_networks
from .model import KubernetesSite, StackSpec

PROVIDER_NAMES = {"aws": "an AWS", "gcp": "a GCP"}


def observability_issues(spec: StackSpec) -> Iterator[tuple[str, str]]:
    from components.network.links import linked_ranges
    from components.observability.federation import central_site

    central = spec.observability.central
    if central is None:
        return
    names = [site.name for site in spec.sites]
    if central.site is not None and central.site not in names:
        yield "observability.central.site", f"unknown site '{central.site}'; use one of: {', '.join(names)}"
        return
    site = central_site(spec)
    if site is None:
        yield "observability.central.site", "the stack has no grid site to default to; name the central site"
        return
    if not isinstance(site, KubernetesSite):
        yield (
            "observability.central.site",
            f"'{site.name}' is {PROVIDER_NAMES[site.provider]} site; Lattice runs the central store on a grid or "
            "edge cluster (provider: kubernetes), which keeps every site's series on the institution's hardware: "
            "name one",
        )
        return
    address = ipaddress.ip_address(central.address)
    if not any(address in network for network in routed_networks(site)):
        ranges = ", ".join(str(network) for network in routed_networks(site))
        yield (
            "observability.central.address",
            f"{central.address} is outside '{site.name}' ({ranges}); give the receiver an address of the site's "
            "network, which its links route",
        )
        return
    for index, other in enumerate(spec.sites):
        if other.name == site.name:
            continue
        if not any(address in ipaddress.ip_network(net) for net in linked_ranges(spec, other)):
            yield (
                f"sites[{index}]",
                f"'{other.name}' has no link reaching the central metrics store at {central.address} on "
                f"'{site.name}', so its metrics could not be sent there; add a link between '{other.name}' and "
                f"'{site.name}' (links), or both to one AWS hub, or remove observability.central",
            )


def receiver_issues(spec: StackSpec, config_keys: frozenset[str], secret_keys: frozenset[str], knows_config: bool):
    """``observability.receivers``: unique names, and every secret they name set as a secret config value."""
    seen: dict[str, int] = {}
    for index, receiver in enumerate(spec.observability.receivers):
        path = f"observability.receivers[{index}]"
        if receiver.name in seen:
            yield (
                f"{path}.name",
                f"receiver name '{receiver.name}' is already used by observability.receivers[{seen[receiver.name]}]; "
                "give every receiver its own name",
            )
        seen.setdefault(receiver.name, index)
        if not knows_config:
            continue
        for field_path, key in receiver.secret_keys().items():
            full = f"lattice:{key}"
            fix = f"run `pulumi config set --secret {full}`"
            if full not in config_keys:
                yield f"{path}.{field_path}", f"config key '{full}' is not set in this stack; {fix}"
            elif full not in secret_keys:
                yield (
                    f"{path}.{field_path}",
                    f"config key '{full}' holds a credential in plain text; {fix} to encrypt it",
                )
