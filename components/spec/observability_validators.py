"""Rules of the ``observability`` keys: the central metrics store's site and address, and a link from every other
site to it. Each yields an Issue: the key path and a message saying what to do."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from .issues import Issue, ValidationContext, every_left_out_site, resting_on, site_names, unknown_site
from .link_validators import routed_networks
from .model import AwsSite, KubernetesSite, StackSpec
from .scheduling_validators import OVER_LINKS

PROVIDER_NAMES = {"aws": "an AWS", "gcp": "a GCP", "kubernetes": "a grid or edge"}


def observability_issues(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    central = spec.observability.central
    if central is None:
        return
    # Without a named site the store is on the first grid site, which may be one left out for its shape errors.
    chosen = every_left_out_site(ctx) if central.site is None else ()
    yield from resting_on(chosen, _central_store(spec, site_names(spec, ctx)))


def _central_store(spec: StackSpec, known: list[str]) -> Iterator[Issue]:
    from ..network.link_plan import linked_ranges
    from ..observability.central import central_site

    central = spec.observability.central
    names = [site.name for site in spec.sites]
    if central.site is not None and central.site not in names:
        yield unknown_site("observability.central.site", central.site, known)
        return
    if central.managed is not None:
        yield from managed_store_issues(spec)
        return
    site = central_site(spec)
    if site is None:
        yield Issue("observability.central.site", "the stack has no grid site to default to; name the central site")
        return
    if not isinstance(site, KubernetesSite):
        yield Issue(
            "observability.central.site",
            f"'{site.name}' is {PROVIDER_NAMES[site.provider]} site; Lattice runs the central store on a grid or "
            "edge cluster (provider: kubernetes), which keeps every site's series on the institution's hardware: "
            "name one, or set managed: amp to store them in an Amazon Managed Service for Prometheus workspace there",
        )
        return
    if central.address is None:
        yield Issue(
            "observability.central.address",
            f"required: the IPv4 address of the receiver on '{site.name}' that every other site writes to (an "
            "address of the site's network that its MetalLB or load balancer assigns)",
        )
        return
    address = ipaddress.ip_address(central.address)
    if not any(address in network for network in routed_networks(site)):
        ranges = ", ".join(str(network) for network in routed_networks(site))
        yield Issue(
            "observability.central.address",
            f"{central.address} is outside '{site.name}' ({ranges}); give the receiver an address of the site's "
            "network, which its links route",
        )
        return
    for index, other in enumerate(spec.sites):
        if other.name == site.name:
            continue
        if not any(address in ipaddress.ip_network(net) for net in linked_ranges(spec, other)):
            yield Issue(
                f"sites[{index}]",
                f"'{other.name}' has no link reaching the central metrics store at {central.address} on "
                f"'{site.name}', so its metrics could not be sent there; add a link between '{other.name}' and "
                f"'{site.name}' (links), or both to one AWS hub, or remove observability.central",
                depends_on=OVER_LINKS,
            )


def managed_store_issues(spec: StackSpec) -> Iterator[Issue]:
    """``observability.central.managed: amp``: an AWS site holds the workspace, and every other site reaches its
    interface endpoint (addresses of that site's VPC) over the stack's links."""
    from ..network.link_plan import linked_ranges

    central = spec.observability.central
    if central.site is None:
        aws = [site.name for site in spec.sites if isinstance(site, AwsSite)]
        yield Issue(
            "observability.central.site",
            "managed: amp needs the AWS site whose account and region hold the workspace; name it"
            + (f" (one of: {', '.join(aws)})" if aws else ", and the stack has no AWS site: add one or remove managed"),
        )
        return
    site = next(s for s in spec.sites if s.name == central.site)
    if not isinstance(site, AwsSite):
        kind = PROVIDER_NAMES.get(site.provider, "a grid or edge")
        yield Issue(
            "observability.central.site",
            f"'{site.name}' is {kind} site; an Amazon Managed Service for Prometheus workspace lives in an AWS "
            "account and region: name an AWS site, or remove managed to keep the store on a grid or edge cluster",
        )
        return
    if central.address is not None:
        yield Issue(
            "observability.central.address",
            f"the workspace has no address of Lattice's choosing: senders reach it through an interface endpoint in "
            f"'{site.name}''s VPC; remove address",
        )
    if "storage_gib" in central.model_fields_set:
        yield Issue(
            "observability.central.storage_gib",
            "the workspace has no volume to size (Amazon Managed Service for Prometheus bills what it stores); "
            "remove storage_gib",
        )
    vpc = ipaddress.ip_network(site.network.cidr)
    for index, other in enumerate(spec.sites):
        if other.name == site.name:
            continue
        if not any(vpc.subnet_of(ipaddress.ip_network(net)) for net in linked_ranges(spec, other)):
            yield Issue(
                f"sites[{index}]",
                f"'{other.name}' has no link reaching the metrics workspace's endpoint in '{site.name}' ({vpc}), so "
                f"its metrics could not be sent there; add a link between '{other.name}' and '{site.name}' (links), "
                "or both to one AWS hub, or remove observability.central",
                depends_on=OVER_LINKS,
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
