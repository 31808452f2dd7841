"""Rules of the stack spec for what a site adopts instead of creating (bring your own).

An existing VPC, cluster, key or organisation trail moves some checks from plan time to ``lattice preflight``
and ``lattice audit`` (they read the live account). What the stack file itself says is still checked here,
with the file, the key path and the fix, before anything is planned: every given subnet inside the site's
``cidr`` (links, overlap checks and team network policies route that range), one subnet per zone a pool runs
in (an EFA pool's zone above all), the route tables links and gateway endpoints need, a key of the site's
own region, and no setting that only a resource Lattice creates would honour.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from itertools import combinations

from .issues import Issue, ValidationContext, every_left_out_team, team_sites
from .model import AwsSite, GcpSite, StackSpec


def existing_network_fits(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from ..catalog import UnknownCatalogEntryError, aws_instance_type
    from ..network.links import transit_routes

    for i, site in enumerate(spec.sites):
        if not isinstance(site, AwsSite) or site.network.existing is None:
            continue
        existing, path = site.network.existing, f"sites[{i}].network.existing"
        vpc = ipaddress.ip_network(site.network.cidr)
        for zone in site.network.availability_zones:
            if zone not in existing.subnets:
                yield Issue(
                    f"{path}.subnets",
                    f"zone '{zone}' of network.availability_zones has no subnet; add "
                    f"'{zone}: {{id: subnet-…, cidr: …}}' (a private subnet of {existing.vpc_id} in that zone) or "
                    "remove the zone from availability_zones",
                )
        for zone, subnet in existing.subnets.items():
            if zone not in site.network.availability_zones:
                yield Issue(
                    f"{path}.subnets.{zone}",
                    f"zone '{zone}' is not in network.availability_zones "
                    f"({', '.join(site.network.availability_zones)}); list it there or remove this subnet",
                )
            if not ipaddress.ip_network(subnet.cidr).subnet_of(vpc):
                yield Issue(
                    f"{path}.subnets.{zone}.cidr",
                    f"{subnet.cidr} ({subnet.id}) lies outside the site's cidr {site.network.cidr}; set "
                    "network.cidr to the VPC range that holds every subnet, or name a subnet inside it",
                )
        for (zone_a, a), (zone_b, b) in combinations(existing.subnets.items(), 2):
            if a.id == b.id:
                yield Issue(
                    f"{path}.subnets.{zone_b}.id",
                    f"{b.id} is also the subnet of {zone_a}; a subnet lies in one zone: give each zone its own",
                )
            elif ipaddress.ip_network(a.cidr).overlaps(ipaddress.ip_network(b.cidr)):
                yield Issue(
                    f"{path}.subnets.{zone_b}.cidr",
                    f"{b.cidr} overlaps {a.cidr} of {zone_a}; subnets of one VPC never overlap: copy each subnet's "
                    "CIDR from `aws ec2 describe-subnets`",
                )
        for k, pool in enumerate(site.gpu_pools):
            try:
                efa = pool.uses_efa(aws_instance_type(pool.instance_type).supports_efa)
            except UnknownCatalogEntryError:
                continue  # reported by gpu_pools_are_valid
            for zone in pool.zones(site):
                if zone in existing.subnets or zone not in site.network.availability_zones:
                    continue  # a zone outside the site is reported by gpu_pools_are_valid
                kind = "an EFA pool, which sits in exactly one zone's subnet" if efa else "a GPU pool"
                yield Issue(
                    f"sites[{i}].gpu_pools[{k}].availability_zones",
                    f"'{pool.name}' is {kind}, and its zone '{zone}' has no subnet in network.existing.subnets; "
                    f"add a private subnet of {existing.vpc_id} in {zone} there, or move the pool to a zone with "
                    f"one ({', '.join(existing.subnets) or 'none'})",
                )
        routes = transit_routes(spec, site)
        needs = [
            why
            for why, needed in (
                ("links route linked sites through them", routes),
                ("nat: false puts the S3 gateway endpoint on them", not site.network.nat),
            )
            if needed
        ]
        if needs and not existing.route_table_ids:
            yield Issue(
                f"{path}.route_table_ids",
                f"list the route tables of the given subnets ({'; '.join(needs)}); `aws ec2 describe-route-tables "
                f"--filters Name=vpc-id,Values={existing.vpc_id}` shows them",
            )


def existing_cluster_fits(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for i, site in enumerate(spec.sites):
        if not isinstance(site, AwsSite):
            continue
        yield from _present_on_cluster(spec, i, site, ctx)
        if site.kubernetes.existing_cluster is None:
            continue
        path = f"sites[{i}].kubernetes"
        if site.network.existing is None:
            yield Issue(
                f"{path}.existing_cluster",
                f"cluster '{site.kubernetes.existing_cluster}' already lives in a VPC, and its node groups must "
                "join it there: set network.existing to that VPC and one private subnet per zone",
            )
        for key in ("endpoint_public_access", "public_access_cidrs"):
            if key in site.kubernetes.model_fields_set:
                yield Issue(
                    f"{path}.{key}",
                    f"the endpoint of existing cluster '{site.kubernetes.existing_cluster}' is its owner's setting, "
                    "which Lattice does not change; remove this key",
                )


def _present_on_cluster(spec: StackSpec, i: int, site: AwsSite, ctx: ValidationContext) -> Iterator[Issue]:
    """``kubernetes.present``: only on an existing cluster, and only what Lattice would otherwise create there."""
    from ..compute.eks_adoption import lattice_access_entries, lattice_addons

    present, path = site.kubernetes.present, f"sites[{i}].kubernetes.present"
    if site.kubernetes.existing_cluster is None:
        if present.addons or present.access_entries:
            yield Issue(
                path,
                "present lists what an existing cluster already has; Lattice creates this site's cluster and all of "
                "it: remove present, or set existing_cluster",
            )
        return
    needed = lattice_addons(spec, site)
    # The Pod Identity agent is needed where a team is on the site: that rests on every team's sites key, and on every
    # team left out for its shape errors.
    teams_here = (*every_left_out_team(ctx), *(p for j, t in enumerate(spec.teams) for p in team_sites(j, t, ctx)))
    for k, addon in enumerate(present.addons):
        if present.addons.index(addon) != k:
            yield Issue(f"{path}.addons[{k}]", f"'{addon}' is listed twice; list it once")
        elif addon not in needed:
            yield Issue(
                f"{path}.addons[{k}]",
                f"Lattice installs no {addon} on this site (it needs {', '.join(needed) or 'none'}), so there is "
                "nothing to use instead; remove it",
                depends_on=teams_here,
            )
    entries = lattice_access_entries(spec, site)
    for k, arn in enumerate(present.access_entries):
        if present.access_entries.index(arn) != k:
            yield Issue(f"{path}.access_entries[{k}]", f"{arn} is listed twice; list it once")
        elif arn not in entries:
            yield Issue(
                f"{path}.access_entries[{k}]",
                f"Lattice creates no access entry for {arn} on this site (it is in neither kubernetes.admin_role_arns "
                "nor the aws_role_arns of a team on the site); remove it",
                # a team's role counts where the team is: its sites key says where; and a team left out for its shape
                # errors may be the one whose role it is
                depends_on=(
                    *every_left_out_team(ctx),
                    *(
                        part
                        for j, t in enumerate(spec.teams)
                        if arn in t.aws_role_arns
                        for part in team_sites(j, t, ctx)
                    ),
                ),
            )


def existing_key_fits(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for i, site in enumerate(spec.sites):
        if not isinstance(site, AwsSite) or site.encryption.key_arn is None:
            continue
        path = f"sites[{i}].encryption"
        region = site.encryption.key_arn.split(":")[3]
        if region != site.region:
            yield Issue(
                f"{path}.key_arn",
                f"the key is in {region}, the site in {site.region}: EBS, FSx, EKS and CloudWatch Logs use a key "
                f"of their own region only; name a key (or a multi-Region replica) in {site.region}",
            )
        for key in ("key_rotation_days", "key_deletion_window_days"):
            if key in site.encryption.model_fields_set:
                yield Issue(
                    f"{path}.{key}",
                    "an existing key's rotation and deletion window are its owner's (`lattice audit` checks the "
                    "rotation); remove this key",
                )


def organization_trail_fits(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for i, site in enumerate(spec.sites):
        if site.audit.cloudtrail != "organization":
            continue
        if not isinstance(site, AwsSite):
            yield Issue(
                f"sites[{i}].audit.cloudtrail",
                "an organisation trail is an AWS setting; remove it here",
            )
        elif site.audit.data_events is not None:
            yield Issue(
                f"sites[{i}].audit.data_events",
                "data_events select what Lattice's own trail records; with cloudtrail: organization the "
                "organisation trail's event selectors decide: remove data_events, or ask its owner to add them",
            )


# Settings only a GKE control plane Lattice creates would honour.
CREATED_GKE_SETTINGS = ("release_channel", "private_endpoint", "master_authorized_cidrs", "rbac_security_group")


def shared_vpc_fits(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    shared_sites = {site.name for site in spec.sites if isinstance(site, GcpSite) and site.network.shared_vpc}
    for i, site in enumerate(spec.sites):
        if not isinstance(site, GcpSite) or site.network.shared_vpc is None:
            continue
        shared, path = site.network.shared_vpc, f"sites[{i}].network"
        if ipaddress.ip_network(shared.control_plane_cidr).prefixlen != 28:
            yield Issue(
                f"{path}.shared_vpc.control_plane_cidr",
                f"{shared.control_plane_cidr} is not a /28; GKE takes exactly a /28 for the control plane's private "
                "endpoint: ask the network team for an unused one",
            )
        if shared.pods_range == shared.services_range:
            yield Issue(
                f"{path}.shared_vpc.services_range",
                f"'{shared.services_range}' is also pods_range; GKE needs two secondary ranges of the subnetwork, "
                "one for Pods and one for Services",
            )
        if "nat" in site.network.model_fields_set:
            yield Issue(
                f"{path}.nat",
                f"egress of the Shared VPC {shared.network} is its owner's (Cloud NAT in {shared.host_project}); "
                "Lattice creates no router or NAT there: remove this key",
            )
        for kind in ("lustre", "filestore"):
            if getattr(site.storage, kind):
                yield Issue(
                    f"sites[{i}].storage.{kind}",
                    f"{kind} needs private services access on the site's network, which on a Shared VPC is a "
                    f"connection of the host project {shared.host_project} that Lattice does not make yet; remove "
                    f"{kind} here (buckets work), or run the site on a network of its own",
                )
    for k, link in enumerate(spec.links):
        for pair in link.pairs():
            ends = [end for end in pair[:2] if end in shared_sites]
            if ends:
                yield Issue(
                    f"links[{k}]",
                    f"site '{ends[0]}' is on a Shared VPC, whose HA VPN gateways and Cloud Routers belong to the "
                    "host project's network team; Lattice does not build links there yet: remove the link, and "
                    "have the host network reach the other site",
                )
                break


def host_gpu_nic_networks_fit(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    """A Shared VPC site's GPU NIC pools attach to networks of the host project (GKE refuses any other: see
    ``components/network/gcp_gpu_fabric.HostGpuFabric``), named per machine type, one per NIC the catalog gives."""
    from ..catalog import GpuDirect, UnknownCatalogEntryError, gcp_machine_type

    for i, site in enumerate(spec.sites):
        if not isinstance(site, GcpSite):
            continue
        shared = site.network.shared_vpc
        named = shared.gpu_nic_networks if shared is not None else {}
        used: dict[str, list[tuple[int, str]]] = {}  # machine type -> (pool index, zone)
        for k, pool in enumerate(site.gpu_pools):
            if not pool.machine_type:
                continue
            try:
                machine = gcp_machine_type(pool.machine_type, pool.attached_gpus)
            except UnknownCatalogEntryError:
                continue  # reported by gpu_pools_are_valid
            if machine.gpu_nic_count:
                used.setdefault(machine.name, []).append((k, pool.zone_in(site)))
        if shared is None:
            continue
        path = f"sites[{i}].network.shared_vpc.gpu_nic_networks"
        for machine_name, pools in used.items():
            if machine_name in named:
                continue
            machine = gcp_machine_type(machine_name)
            k = pools[0][0]
            yield Issue(
                f"sites[{i}].gpu_pools[{k}].machine_type",
                f"'{site.gpu_pools[k].name}' runs {machine_name}, whose {machine.gpu_nic_count} GPU NICs must attach "
                "to networks of the Shared VPC's host project (GKE attaches a Shared VPC node's NICs to no other "
                f"project's); name them under network.shared_vpc.gpu_nic_networks.{machine_name}.gpu_nics "
                "({network, subnetwork} each, in NIC order), or use a machine type without GPU NICs",
            )
        for machine_name, nics in named.items():
            where = f"{path}.{machine_name}"
            if machine_name not in used:
                yield Issue(
                    where,
                    f"no GPU pool of the site runs {machine_name} with GPU NICs ("
                    f"{', '.join(sorted(used)) or 'none does'}); name a machine type a pool uses, or remove the entry",
                )
                continue
            machine = gcp_machine_type(machine_name)
            yield from host_nic_issues(machine, nics, where, primary_network=shared.network)
            zones = sorted({zone for _, zone in used[machine_name]})
            if machine.gpudirect is GpuDirect.RDMA and len(zones) > 1:
                yield Issue(
                    where,
                    f"a RoCE network belongs to one zone (its network profile's), and {machine_name} pools run in "
                    f"{', '.join(zones)}: put them in one zone",
                )


def host_nic_issues(machine, nics, where: str, *, primary_network: str | None) -> Iterator[Issue]:
    """Networks named for a machine type's additional NICs (``HostGpuNicsSpec`` at ``where``) fit it: one per GPU
    NIC and per gVNIC beyond the first, an RDMA machine's GPU NICs on one RoCE network, every other NIC on a network
    of its own (the first gVNIC's is ``primary_network``, when known), every NIC on a subnetwork of its own."""
    from ..catalog import GpuDirect

    if len(nics.gpu_nics) != machine.gpu_nic_count:
        yield Issue(
            f"{where}.gpu_nics",
            f"{machine.name} has {machine.gpu_nic_count} GPU NICs, and {len(nics.gpu_nics)} networks are "
            f"named; name exactly {machine.gpu_nic_count}, one per NIC in NIC order",
        )
    extra = max(machine.gvnic_count - 1, 0)
    if len(nics.gvnics) != extra:
        yield Issue(
            f"{where}.gvnics",
            f"{machine.name} has {machine.gvnic_count} gVNIC(s), the first on the shared subnetwork; name "
            f"{extra} network(s) here for the others, not {len(nics.gvnics)}",
        )
    rdma = machine.gpudirect is GpuDirect.RDMA
    gpu_networks = {nic.network for nic in nics.gpu_nics}
    if rdma and len(gpu_networks) > 1:
        yield Issue(
            f"{where}.gpu_nics",
            f"{machine.name}'s GPU NICs are RDMA (RoCE): they attach to subnetworks of one RoCE network, "
            f"not {len(gpu_networks)} networks ({', '.join(sorted(gpu_networks))}); name that network for each",
        )
    # A VM's regular NICs each sit on a different VPC network (a RoCE network holds all its GPU NICs).
    regular = [nic.network for nic in nics.gvnics] + ([] if rdma else [nic.network for nic in nics.gpu_nics])
    seen = {primary_network: "the shared network (the first gVNIC's)"} if primary_network else {}
    for n, network in enumerate(regular):
        if network in seen:
            yield Issue(
                where,
                f"network '{network}' is named twice (also {seen[network]}); each NIC of a VM sits on a "
                "network of its own: name a distinct network for each",
            )
        seen.setdefault(network, f"NIC {n}")
    subnetworks = [nic.subnetwork for nic in [*nics.gvnics, *nics.gpu_nics]]
    if len(set(subnetworks)) != len(subnetworks):
        yield Issue(f"{where}", "a subnetwork is named twice; each NIC takes its own subnetwork")


def existing_gke_cluster_fits(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for i, site in enumerate(spec.sites):
        if not isinstance(site, GcpSite) or site.kubernetes.existing_cluster is None:
            continue
        path, cluster = f"sites[{i}].kubernetes", site.kubernetes.existing_cluster
        if site.network.shared_vpc is None:
            yield Issue(
                f"{path}.existing_cluster",
                f"cluster '{cluster}' already lives on a network, and its node pools join it there: set "
                "network.shared_vpc to that network's subnetwork and secondary ranges (host_project may be the "
                "site's own project)",
            )
        for key in CREATED_GKE_SETTINGS:
            if key in site.kubernetes.model_fields_set:
                yield Issue(
                    f"{path}.{key}",
                    f"{key} of existing cluster '{cluster}' is its owner's setting, which Lattice does not change; "
                    "remove this key",
                )


def existing_cloud_kms_key_fits(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for i, site in enumerate(spec.sites):
        if not isinstance(site, GcpSite):
            continue
        path = f"sites[{i}].encryption"
        if site.encryption.key_name is None:
            if "grant_iam" in site.encryption.model_fields_set:
                yield Issue(f"{path}.grant_iam", "grant_iam applies to an existing key (key_name); remove it")
            continue
        location = site.encryption.key_name.split("/")[3]
        if location != site.region:
            yield Issue(
                f"{path}.key_name",
                f"the key is in {location}, the site in {site.region}: GKE secrets encryption, Cloud Storage and "
                f"Cloud Logging need a key of the site's region; name a key of {site.region}",
            )
        for key in ("key_rotation_days", "key_ring_generation"):
            if key in site.encryption.model_fields_set:
                yield Issue(
                    f"{path}.{key}",
                    "an existing key's rotation and key ring are its owner's (`lattice audit` checks the rotation); "
                    "remove this key",
                )


def existing_buckets_are_distinct(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    seen: dict[str, str] = {}
    for i, site in enumerate(spec.sites):
        for k, bucket in enumerate(getattr(site.storage, "buckets", [])):
            if bucket.existing_bucket is None:
                continue
            where = f"sites[{i}].storage.buckets[{k}]"
            if bucket.existing_bucket in seen:
                yield Issue(
                    f"{where}.existing_bucket",
                    f"bucket '{bucket.existing_bucket}' is also adopted by {seen[bucket.existing_bucket]}; a bucket "
                    "has one owner in the stack: adopt it once",
                )
            seen.setdefault(bucket.existing_bucket, where)


def existing_file_systems_fit(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from ..catalog.storage import fsx_lustre_class

    seen: dict[str, str] = {}
    for i, site in enumerate(spec.sites):
        if not isinstance(site, AwsSite):
            continue
        for k, lustre in enumerate(site.storage.lustre):
            existing = lustre.existing_file_system
            if existing is None:
                continue
            where = f"sites[{i}].storage.lustre[{k}]"
            if existing.id in seen:
                yield Issue(
                    f"{where}.existing_file_system.id",
                    f"file system {existing.id} is also adopted by {seen[existing.id]}; adopt it once",
                )
            seen.setdefault(existing.id, where)
            if site.network.existing is None:
                yield Issue(
                    f"{where}.existing_file_system",
                    f"{existing.id} already lives in a VPC, and a file system cannot move to another subnet: set "
                    "network.existing to its VPC and subnets",
                )
            kind = fsx_lustre_class(lustre.deployment_type, lustre.storage_type)
            if kind is not None and kind.persistent and site.encryption.key_arn is None:
                yield Issue(
                    f"sites[{i}].encryption.key_arn",
                    f"storage.lustre '{lustre.name}' adopts {existing.id}, whose KMS key was fixed when it was "
                    "created; the site's new key would replace it: set encryption.key_arn to the key it uses (`aws "
                    f"fsx describe-file-systems --file-system-ids {existing.id} --query FileSystems[0].KmsKeyId`)",
                )
            if lustre.capacity_gib is None and lustre.storage_type != "INTELLIGENT_TIERING":
                yield Issue(
                    f"{where}.capacity_gib",
                    f"{existing.id} has a capacity, and a smaller planned one would replace it (FSx cannot shrink "
                    "a file system): set capacity_gib to its StorageCapacity (and throughput_mbps_per_tib to its "
                    "PerUnitStorageThroughput)",
                )


BROWNFIELD_VALIDATORS = (
    existing_network_fits,
    existing_cluster_fits,
    existing_key_fits,
    organization_trail_fits,
    shared_vpc_fits,
    host_gpu_nic_networks_fit,
    existing_gke_cluster_fits,
    existing_cloud_kms_key_fits,
    existing_buckets_are_distinct,
    existing_file_systems_fit,
)
