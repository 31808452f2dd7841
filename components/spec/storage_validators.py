"""Cross-field rules of ``sites[].storage``, checked against the storage catalog.

A size or combination the cloud would reject at apply time is an error here, naming the nearest values
that work. A hand-sized Lustre file system that misses its workload's checkpoint budget is a warning in dev
and an error in prod. A file system sized from its workload is a warning everywhere, printing the sized values
to pin once it exists (a later workload change would otherwise replace it).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING

from ..catalog.storage import (
    EFA_CAPACITY_STEP,
    EFA_RECOMMENDED_ABOVE_MBPS,
    FILESTORE_TIERS,
    INTELLIGENT_TIERING_METADATA_IOPS,
    INTELLIGENT_TIERING_THROUGHPUT,
    MANAGED_LUSTRE_TIERS,
    MAX_DATA_REPOSITORY_ASSOCIATIONS,
    METADATA_IOPS,
    READ_CACHE_GIB_PER_4000_MBPS,
    fsx_efa_client,
    fsx_lustre_class,
)
from ..standards import CHECKPOINT_TARGET_SECONDS
from .issues import Issue, ValidationContext, absent_workload, team_sites
from .model import AwsGpuPoolSpec, AwsSite, GcpSite, KubernetesSite, StackSpec
from .storage import GCS_COLD_CLASSES, S3_COLD_CLASSES, FsxLustreSpec, ManagedLustreSpec

if TYPE_CHECKING:
    from ..storage.sizing import LustreSize

S3_BUCKET_NAME_MAX = 63
GCS_BUCKET_NAME_MAX = 63
ACCOUNT_ID_LENGTH = 12
# S3 refuses lifecycle transitions to STANDARD_IA before an object is 30 days old (ONEZONE_IA likewise; not offered).
S3_MIN_DAYS_BEFORE = {"STANDARD_IA": 30}
# FSx's NoSquashNids takes at most 64 NIDs or NID ranges (FSx API Reference, LustreRootSquashConfiguration).
MAX_NO_SQUASH_NIDS = 64
# Each Managed Lustre instance needs a contiguous /24 of the private services range (Google's VPC page).
LUSTRE_INSTANCE_PREFIX = 24
# <base>--<az id>--x-s3, where an AZ ID is like use1-az4 (up to 9 characters, e.g. apse2-az3).
EXPRESS_SUFFIX_MAX = len("--") + 9 + len("--x-s3")


def storage_issues(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    stack = ctx.stack
    workloads = {w.name: w for w in spec.workloads}
    prod = spec.environment == "prod"

    def teams_on(site) -> list[str]:
        return [team.name for team in spec.teams if team.on(site)]

    # Which teams are on a site is what their sites keys say: a verdict over them rests on those keys.
    team_keys = tuple(part for k, team in enumerate(spec.teams) for part in team_sites(k, team, ctx))

    for i, site in enumerate(spec.sites):
        base = f"sites[{i}].storage"
        yield from _unique_names(site, base)
        if isinstance(site, AwsSite):
            log_bucket = f"{stack}-{site.name}-access-logs"
            if site.storage.buckets and len(log_bucket) > S3_BUCKET_NAME_MAX - ACCOUNT_ID_LENGTH - 1:
                yield Issue(f"{base}.buckets", _too_long("access-log bucket (with the account ID)", S3_BUCKET_NAME_MAX))
            zones = ", ".join(site.network.availability_zones)
            for j, lustre in enumerate(site.storage.lustre):
                if lustre.zone is not None and lustre.zone not in site.network.availability_zones:
                    yield Issue(
                        f"{base}.lustre[{j}].zone", f"zone '{lustre.zone}' is not one of the site's zones ({zones})"
                    )
                yield from _fsx(site, lustre, f"{base}.lustre[{j}]", workloads, prod)
                yield from _writers_in_its_zone(site, i, lustre, f"{base}.lustre[{j}]")
                yield from _admin_clients(site, lustre, f"{base}.lustre[{j}]", teams_on(site), team_keys)
                yield from _unreached_repositories(lustre, f"{base}.lustre[{j}]", teams_on(site), team_keys)
            for j, express in enumerate(site.storage.express_checkpoints):
                path = f"{base}.express_checkpoints[{j}]"
                if express.zone not in site.network.availability_zones:
                    yield Issue(f"{path}.zone", f"zone '{express.zone}' is not one of the site's zones ({zones})")
                if len(f"{stack}-{site.name}-{express.name}") > S3_BUCKET_NAME_MAX - EXPRESS_SUFFIX_MAX:
                    yield Issue(f"{path}.name", _too_long("directory bucket", S3_BUCKET_NAME_MAX - EXPRESS_SUFFIX_MAX))
            yield from _buckets(site, base, stack, cloud="aws")
        elif isinstance(site, GcpSite):
            yield from _private_services_room(site, base)
            if site.storage.buckets and len(f"{site.project}-{stack}-access-logs") > GCS_BUCKET_NAME_MAX:
                yield Issue(f"{base}.buckets", _too_long("usage-log bucket (project and stack)", GCS_BUCKET_NAME_MAX))
            filesystems: dict[str, int] = {}
            for j, lustre in enumerate(site.storage.lustre):
                yield from _managed_lustre(site, lustre, f"{base}.lustre[{j}]", workloads, prod)
                yield from _admin_clients(site, lustre, f"{base}.lustre[{j}]", teams_on(site), team_keys)
                first = filesystems.setdefault(lustre.filesystem, j)
                if first != j:
                    yield Issue(
                        f"{base}.lustre[{j}].name",
                        f"'{lustre.name}' and '{site.storage.lustre[first].name}' (lustre[{first}]) both become the "
                        f"Managed Lustre file system name '{lustre.filesystem}' (its first 8 letters and digits), and "
                        "GKE's Lustre driver mounts one file system of a name per node; rename one so they differ "
                        "within 8 letters and digits",
                    )
            for j, share in enumerate(site.storage.filestore):
                path = f"{base}.filestore[{j}]"
                tier = FILESTORE_TIERS[share.tier]
                if not tier.valid(share.capacity_gib):
                    yield Issue(
                        f"{path}.capacity_gib",
                        f"{share.capacity_gib:,} GiB is not a {share.tier} Filestore size; {share.tier} takes "
                        f"{tier.describe()}",
                    )
                if share.zone is not None and tier.regional:
                    yield Issue(
                        f"{path}.zone",
                        f"a {share.tier} share lives in the region ({site.region}), not in a zone; remove zone, or "
                        "choose a zonal tier (ZONAL, BASIC_HDD, BASIC_SSD, HIGH_SCALE_SSD)",
                    )
                elif share.zone is not None and share.zone not in site.network.zones:
                    yield Issue(f"{path}.zone", f"zone '{share.zone}' is not one of the site's zones")
            yield from _buckets(site, base, stack, cloud="gcp")
        elif isinstance(site, KubernetesSite):
            paths: dict[str, int] = {}
            for j, mount in enumerate(site.storage.mounts):
                if mount.path in paths:
                    yield Issue(
                        f"{base}.mounts[{j}].mount_path",
                        f"{mount.path} is already the mount path of mounts[{paths[mount.path]}]; give each its own",
                    )
                paths.setdefault(mount.path, j)


def checkpoint_writers(site: AwsSite, lustre: FsxLustreSpec) -> list:
    """The site's pools that write checkpoints to the file system: those training its workload, or, for a file
    system sized by hand, every pool that trains one (a pool names the workload it is sized for). Pools that train
    nothing (inference) are not counted."""
    return [
        pool
        for pool in site.gpu_pools
        if pool.workload is not None and (lustre.workload is None or pool.workload == lustre.workload)
    ]


def _writers_in_its_zone(site: AwsSite, i: int, lustre: FsxLustreSpec, path: str) -> Iterator[Issue]:
    """An FSx for Lustre file system lives in one zone; a pool whose nodes write checkpoints to it from another
    sends every save (and restore) across zones, data transfer charged in both directions, with the hop's latency."""
    zone = lustre.zone or site.network.availability_zones[0]
    for pool in checkpoint_writers(site, lustre):
        elsewhere = [z for z in pool.zones(site) if z != zone]
        if not elsewhere:
            continue
        some = "all its nodes" if len(elsewhere) == len(pool.zones(site)) else "part of its nodes"
        yield Issue(
            f"{path}.zone",
            f"file system '{lustre.name}' is in {zone}{'' if lustre.zone else ' (the first zone: zone is unset)'}, "
            f"and pool '{pool.name}', which writes {pool.workload}'s checkpoints to it, has {some} in "
            f"{', '.join(elsewhere)}: every save and restore crosses zones, as cross-zone data transfer charged in "
            f"both directions; put the file system in the pool's zone (zone: {elsewhere[0]}; FSx fixes a file "
            "system's zone at creation, so for an existing one that is a new file system) or the pool in its zone",
            warning=True,
            depends_on=(f"sites[{i}].gpu_pools",),
        )


def system_node_ranges(site: AwsSite | GcpSite) -> list[str]:
    """The address ranges the site's system nodes take: on AWS the private subnets of every zone (the system node
    group spans them), on GCP the GKE nodes range. The accelerator pools' nodes take addresses from the same ones."""
    from ..network.cidr import aws_zone_subnets, gke_ranges

    if isinstance(site, AwsSite):
        return [zone.private for zone in aws_zone_subnets(site.network.cidr, site.network.availability_zones)]
    return [gke_ranges(site.network.cidr).nodes]


def admin_client_ranges(site: AwsSite | GcpSite, lustre: FsxLustreSpec | ManagedLustreSpec) -> list[str]:
    """The clients a Lustre file system does not root-squash: the spec's admin_clients, else the system nodes'."""
    return list(lustre.admin_clients) if lustre.admin_clients is not None else system_node_ranges(site)


def _admin_clients(site, lustre, path: str, teams: list[str], team_keys: tuple[str, ...]) -> Iterator[Issue]:
    """Root squash needs a client it spares, or no one can create and chown the teams' directories (``teams``, the
    site's, as the keys ``team_keys`` say)."""
    import ipaddress

    if lustre.root_squash is None:
        return
    ranges = admin_client_ranges(site, lustre)
    if not ranges:
        yield Issue(
            f"{path}.admin_clients",
            f"root squash ({lustre.root_squash}) with no admin client: root on every client is squashed, so nothing "
            "can create or chown the teams' directories and the file system is read-only in practice; remove "
            "admin_clients (the system nodes' ranges are then spared, where Lattice's directory Job runs), list "
            "your admin hosts' ranges, or set root_squash: null",
        )
        return
    if isinstance(lustre, FsxLustreSpec) and len(ranges) > MAX_NO_SQUASH_NIDS:
        yield Issue(
            f"{path}.admin_clients",
            f"FSx spares at most {MAX_NO_SQUASH_NIDS} client ranges from root squash (NoSquashNids); list fewer",
        )
    system = [ipaddress.ip_network(cidr) for cidr in system_node_ranges(site)]
    spared = [ipaddress.ip_network(cidr) for cidr in ranges]
    missing = [str(block) for block in system if not any(block.subnet_of(other) for other in spared)]
    if teams and missing:
        yield Issue(
            f"{path}.admin_clients",
            f"the system nodes' range(s) {', '.join(missing)} are not spared from root squash, but Lattice creates "
            f"the directories of {', '.join(teams)} from there (a Job on the system nodes, as root); add them to "
            "admin_clients or remove admin_clients",
            depends_on=team_keys,
        )


def _unreached_repositories(
    lustre: FsxLustreSpec, path: str, teams: list[str], team_keys: tuple[str, ...]
) -> Iterator[Issue]:
    """A team's claim mounts its own directory /<team>: a repository linked elsewhere is out of its pods' reach."""
    for k, repository in enumerate(lustre.durability.repositories):
        if not teams or any(_nested(repository.path, f"/{team}") for team in teams):
            continue
        team = teams[0]
        purpose = repository.path.rstrip("/").rsplit("/", 1)[-1] or "datasets"
        yield Issue(
            f"{path}.durability.repositories[{k}].path",
            f"{repository.path} is outside every team's directory, and a team's claim mounts only /<team>: its pods "
            "neither see what this association imports nor have what they write exported; link the teams' "
            f"directories instead, one association each, e.g. {{bucket: {repository.bucket}, path: "
            f"/{team}/{purpose}, prefix: {team}/}} (the team's prefix, which its role reaches)",
            warning=True,
            depends_on=team_keys,
        )


def _too_long(kind: str, limit: int) -> str:
    return f"the {kind} name would pass {limit} characters with the stack and site names; shorten the name"


def _private_services_room(site: GcpSite, base: str) -> Iterator[Issue]:
    """Each Managed Lustre instance takes a /24 of the site's private-services block (cidr.GkeRanges)."""
    import ipaddress

    from ..network.cidr import gke_ranges

    block = ipaddress.ip_network(gke_ranges(site.network.cidr).private_services)
    room = 2 ** max(0, LUSTRE_INSTANCE_PREFIX - block.prefixlen)
    if len(site.storage.lustre) > room:
        yield Issue(
            f"{base}.lustre",
            f"the site's private-services block {block} holds {room} Managed Lustre instance(s) of a "
            f"/{LUSTRE_INSTANCE_PREFIX} each; use fewer instances or a larger site network",
        )


def _unique_names(site, base: str) -> Iterator[Issue]:
    """Storage names become resource names and keys of the site's storage outputs, next to the node scratch tiers."""
    storage = site.storage
    keys = ("lustre", "filestore", "buckets", "express_checkpoints", "mounts")
    groups = [(key, getattr(storage, key)) for key in keys if hasattr(storage, key)]
    # The implicit tiers: each cloud pool's NVMe scratch (<pool>-scratch), a grid / edge site's node scratch.
    if isinstance(site, KubernetesSite):
        reserved = {"scratch": "the site's node scratch tier"} if storage.scratch is not None else {}
    else:
        reserved = {f"{pool.name}-scratch": f"pool '{pool.name}''s node scratch tier" for pool in site.gpu_pools}
    seen: dict[str, str] = {}
    for key, entries in groups:
        for j, entry in enumerate(entries):
            where = f"{key}[{j}]"
            if entry.name in reserved:
                yield Issue(
                    f"{base}.{where}.name",
                    f"'{entry.name}' is the name of {reserved[entry.name]} in the site's storage outputs; "
                    "give this one another name",
                )
            elif entry.name in seen:
                yield Issue(
                    f"{base}.{where}.name",
                    f"'{entry.name}' already names {seen[entry.name]}; storage names become resource names, so "
                    "give each its own",
                )
            seen.setdefault(entry.name, where)


def _nearest(steps, capacity: int) -> str:
    below, above = steps.nearest(capacity)
    options = " or ".join(f"{c:,}" for c in (below, above) if c is not None)
    return f"nearest valid: {options} GiB" if options else "no size near it is valid"


def _fsx(site: AwsSite, lustre: FsxLustreSpec, path: str, workloads, prod: bool) -> Iterator[Issue]:
    kind = fsx_lustre_class(lustre.deployment_type, lustre.storage_type)
    if kind is None:
        allowed = {"HDD": "PERSISTENT_1", "INTELLIGENT_TIERING": "PERSISTENT_2"}[lustre.storage_type]
        yield Issue(
            f"{path}.storage_type",
            f"{lustre.storage_type} storage exists only on {allowed} file systems; set deployment_type: {allowed} "
            "or storage_type: SSD",
        )
        return
    if prod and not kind.persistent:
        yield Issue(
            f"{path}.deployment_type",
            f"{lustre.deployment_type} keeps no second copy: one failed server loses data, and it cannot be "
            "backed up; use PERSISTENT_2 in prod (scratch file systems are for dev)",
        )
    workload = workloads.get(lustre.workload) if lustre.workload else None
    if lustre.workload is not None and workload is None:
        yield Issue(
            f"{path}.workload",
            f"unknown workload '{lustre.workload}'; use one of: {', '.join(workloads) or 'none defined'}",
            depends_on=(absent_workload(lustre.workload),),  # a workload left out for its shape errors
        )
    tiered = kind.storage_type == "INTELLIGENT_TIERING"
    size = None
    if tiered:
        yield from _intelligent_tiering(lustre, path)
    else:
        for key in ("throughput_mbps", "read_cache"):
            if getattr(lustre, key) is not None:
                yield Issue(f"{path}.{key}", f"{key} applies to INTELLIGENT_TIERING only; remove it")
        # A file system naming a workload is sized from it: an unknown (or left-out) one is that key's error alone.
        yield from _fsx_size(lustre, kind, path, lustre.workload is not None)
        tier = lustre.throughput_mbps_per_tib
        # Only a valid class, tier and EFA choice can be sized; the wrong one is reported on its own key.
        if (tier is None or tier in kind.per_unit_throughputs) and not (lustre.efa and not kind.efa):
            size = yield from _sized(lustre, workload, path)
    if (
        size is not None
        and workload is not None
        and (lustre.capacity_gib is None or (kind.per_unit_throughputs and lustre.throughput_mbps_per_tib is None))
    ):
        sized = f"capacity_gib: {size.capacity_gib}"
        if kind.per_unit_throughputs:
            sized += f", throughput_mbps_per_tib: {size.per_unit}"
        fixed_tier = ", nor change an EFA-enabled one's throughput tier," if lustre.efa else ""
        yield _pin(path, workload.name, sized, f"FSx cannot shrink a file system{fixed_tier} in place")
    if kind.efa and lustre.efa:
        yield from _efa_clients(site.gpu_pools, path)
    elif kind.efa and size is not None and size.write_mbps > EFA_RECOMMENDED_ABOVE_MBPS:
        yield Issue(
            f"{path}.efa",
            f"the file system serves {size.write_mbps:,.0f} MB/s; AWS recommends EFA above "
            f"{EFA_RECOMMENDED_ABOVE_MBPS:,} MB/s (10 GB/s) for per-client throughput: set efa: true (PERSISTENT_2, "
            "fixed at creation)",
            warning=True,
        )
    if lustre.metadata_iops is not None:
        if not kind.metadata_configuration:
            yield Issue(f"{path}.metadata_iops", "metadata IOPS can be provisioned on PERSISTENT_2 only; remove it")
        elif lustre.metadata_iops not in (INTELLIGENT_TIERING_METADATA_IOPS if tiered else METADATA_IOPS):
            allowed = (
                "6,000 or 12,000" if tiered else "1,500, 3,000, 6,000, 12,000 or multiples of 12,000 up to 192,000"
            )
            yield Issue(
                f"{path}.metadata_iops", f"{lustre.metadata_iops:,} is not a metadata IOPS FSx accepts; use {allowed}"
            )
    if lustre.efa and not kind.efa:
        yield Issue(f"{path}.efa", "EFA-enabled file systems are PERSISTENT_2 only (set at creation); remove efa")
    yield from _durability(lustre, kind, path, {b.name for b in site.storage.buckets}, prod)


def _fsx_size(lustre: FsxLustreSpec, kind, path: str, sized_by_workload: bool) -> Iterator[Issue]:
    tiers = kind.per_unit_throughputs
    tier = lustre.throughput_mbps_per_tib
    if tier is not None and not tiers:
        yield Issue(
            f"{path}.throughput_mbps_per_tib",
            f"{kind.deployment_type} has a fixed throughput ({kind.fixed_write_mbps_per_tib} MB/s/TiB written); "
            "remove it",
        )
        return
    if tier is not None and tier not in tiers:
        yield Issue(
            f"{path}.throughput_mbps_per_tib",
            f"{tier} MB/s/TiB is not a {kind.key} tier; use one of {', '.join(str(t) for t in tiers)}",
        )
        return
    if lustre.efa and tier is not None and tier not in EFA_CAPACITY_STEP:
        return  # reported as not PERSISTENT_2 above
    missing = [key for key, value in (("capacity_gib", lustre.capacity_gib), ("throughput_mbps_per_tib", tier))
               if value is None and (key == "capacity_gib" or tiers)]  # fmt: skip
    if missing and not sized_by_workload:
        for key in missing:
            yield Issue(f"{path}.{key}", f"set {key}, or name a workload to size the file system for its checkpoints")
        return
    if lustre.capacity_gib is None or (tiers and tier is None):
        return  # sized from the workload
    steps = kind.capacity_steps(tier, lustre.efa and kind.efa)
    if not steps.valid(lustre.capacity_gib):
        efa = " EFA-enabled" if lustre.efa else ""
        at_tier = f" at {tier} MB/s/TiB" if lustre.efa or kind.storage_type == "HDD" else ""
        never_grows = "" if kind.can_grow else "; SCRATCH_1 can never grow, so size it for good"
        yield Issue(
            f"{path}.capacity_gib",
            f"{lustre.capacity_gib:,} GiB is not a{efa} {kind.key} size ({steps.describe()}{at_tier}); "
            f"{_nearest(steps, lustre.capacity_gib)}{never_grows}",
        )


def _sized(lustre: FsxLustreSpec | ManagedLustreSpec, workload, path: str) -> Generator[Issue, None, LustreSize | None]:
    """The size the components will build (given, or sized from the workload); an issue if a workload cannot size it.

    None where no size follows from the spec (values missing without a workload are reported on their keys).
    """
    from ..storage.sizing import fsx_size, managed_lustre_size

    size = fsx_size if isinstance(lustre, FsxLustreSpec) else managed_lustre_size
    try:
        return size(lustre, workload)
    except ValueError as exc:
        if workload is not None:
            yield Issue(f"{path}.workload", f"cannot size for '{workload.name}': {exc}")
        return None


def _pin(path: str, workload: str, sized: str, limit: str) -> Issue:
    """A file system sized from its workload: the size is a creation-time choice the user should then pin."""
    return Issue(
        f"{path}.workload",
        f"sized for '{workload}' at plan time to {sized}; once it exists, pin these values in the stack file: a "
        f"later change to the workload would resize it, and {limit}, so Pulumi would replace it (protect refuses "
        "that in prod; elsewhere its data would be lost)",
        warning=True,
    )


def _efa_clients(pools: list[AwsGpuPoolSpec], path: str) -> Iterator[Issue]:
    """EFA pools whose type FSx does not take as an EFA client (trn2): they mount over TCP instead."""
    from ..catalog import UnknownCatalogEntryError, aws_instance_type

    for pool in pools:
        try:
            instance = aws_instance_type(pool.instance_type)
        except UnknownCatalogEntryError:
            continue  # reported on the pool
        if pool.uses_efa(instance.supports_efa) and not fsx_efa_client(instance.name):
            yield Issue(
                f"{path}.efa",
                f"pool '{pool.name}' ({instance.name}) cannot be an EFA client of an FSx file system (AWS excludes "
                f"{instance.name.split('.')[0]}); its fabric group is left out of this file system's EFA clients, "
                "so it mounts through the cluster security group over TCP",
                warning=True,
            )


def _intelligent_tiering(lustre: FsxLustreSpec, path: str) -> Iterator[Issue]:
    if lustre.capacity_gib is not None or lustre.throughput_mbps_per_tib is not None:
        key = "capacity_gib" if lustre.capacity_gib is not None else "throughput_mbps_per_tib"
        yield Issue(
            f"{path}.{key}",
            "Intelligent-Tiering storage is elastic and its throughput is provisioned in MB/s: remove "
            f"{key} and set throughput_mbps",
        )
    if lustre.throughput_mbps is None:
        yield Issue(
            f"{path}.throughput_mbps", "Intelligent-Tiering needs throughput_mbps: 4,000 or a multiple of 4,000"
        )
    elif not INTELLIGENT_TIERING_THROUGHPUT.valid(lustre.throughput_mbps):
        nearest = _nearest(INTELLIGENT_TIERING_THROUGHPUT, lustre.throughput_mbps).replace(" GiB", " MB/s")
        yield Issue(
            f"{path}.throughput_mbps",
            f"{lustre.throughput_mbps:,} MB/s is not an Intelligent-Tiering throughput (multiples of 4,000 MB/s "
            f"up to 2,000,000); {nearest}",
        )
    cache = lustre.read_cache
    if cache is not None and (cache.sizing_mode == "USER_PROVISIONED") != (cache.size_gib is not None):
        yield Issue(f"{path}.read_cache.size_gib", "size_gib goes with sizing_mode USER_PROVISIONED, and only with it")
    elif cache is not None and cache.size_gib is not None and lustre.throughput_mbps:
        low, high = (bound * lustre.throughput_mbps // 4_000 for bound in READ_CACHE_GIB_PER_4000_MBPS)
        if not low <= cache.size_gib <= high:
            yield Issue(
                f"{path}.read_cache.size_gib",
                f"a user-provisioned read cache takes 32-131,072 GiB per 4,000 MB/s: {low:,}-{high:,} GiB here",
            )
    if lustre.durability.repositories:
        yield Issue(
            f"{path}.durability.repositories",
            "Intelligent-Tiering file systems cannot link to S3 data repositories; use backups, or PERSISTENT_2 SSD",
        )


def _durability(lustre: FsxLustreSpec, kind, path: str, buckets: set[str], prod: bool) -> Iterator[Issue]:
    durability = lustre.durability
    where = f"{path}.durability"
    if durability.repositories and durability.backups is not None:
        yield Issue(
            where,
            "choose one: a file system linked to S3 keeps its durable copy in S3, and FSx does not back up a "
            "file system with data repository associations; remove backups or repositories",
        )
    if durability.backups is not None and not kind.persistent:
        yield Issue(f"{where}.backups", f"{lustre.deployment_type} file systems cannot be backed up; remove backups")
    # EFA-enabled file systems may be linked: the FSx API Reference names the file systems data repository
    # associations are not supported on, "Intelligent-Tiering and scratch_1 file systems" (DataRepositoryAssociation),
    # and EFA is a PERSISTENT_2 SSD option on Lustre 2.15.
    if durability.repositories and not kind.data_repositories and kind.storage_type != "INTELLIGENT_TIERING":
        yield Issue(
            f"{where}.repositories", f"{lustre.deployment_type} cannot link to S3; use SCRATCH_2 or PERSISTENT_2"
        )
    if len(durability.repositories) > MAX_DATA_REPOSITORY_ASSOCIATIONS:
        yield Issue(
            f"{where}.repositories", f"a file system takes at most {MAX_DATA_REPOSITORY_ASSOCIATIONS} repositories"
        )
    if prod and kind.persistent and not durability.repositories and durability.backups is None:
        yield Issue(
            where,
            "a prod file system needs a durable copy: link it to this site's buckets (repositories) or keep "
            "automatic backups (backups: {retention_days: 14})",
        )
    paths: list[str] = []
    for k, repository in enumerate(durability.repositories):
        earlier = durability.repositories[:k]
        if repository.bucket not in buckets:
            yield Issue(
                f"{where}.repositories[{k}].bucket",
                f"unknown bucket '{repository.bucket}'; use one of this site's buckets: "
                f"{', '.join(sorted(buckets)) or 'none'}",
            )
        clash = next((p for p in paths if _nested(p, repository.path)), None)
        if clash is not None:
            yield Issue(
                f"{where}.repositories[{k}].path",
                f"{repository.path} overlaps {clash}: repository paths of one file system may not nest; use "
                "sibling directories",
            )
        else:
            named = next((m for m, other in enumerate(earlier) if other.slug == repository.slug), None)
            if named is not None:
                yield Issue(
                    f"{where}.repositories[{k}].path",
                    f"{repository.path} and {earlier[named].path} (repositories[{named}]) both name the association "
                    f"'repo-{repository.slug}' ('/' becomes '-' in resource names); rename one of the directories",
                )
        paths.append(repository.path)
        # FSx: each association of a file system needs its own bucket or a prefix that does not nest in another's.
        shared = next(
            (m for m, other in enumerate(earlier)
             if other.bucket == repository.bucket and _nested(f"/{other.prefix}", f"/{repository.prefix}")),
            None,
        )  # fmt: skip
        if shared is not None:
            yield Issue(
                f"{where}.repositories[{k}].prefix",
                f"s3://{repository.bucket}/{repository.prefix} overlaps repositories[{shared}] "
                f"(s3://{earlier[shared].bucket}/{earlier[shared].prefix}): the associations of one file system "
                "need distinct buckets or prefixes that do not nest; give each its own prefix",
            )


def _nested(a: str, b: str) -> bool:
    a, b = a.rstrip("/") + "/", b.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


def _managed_lustre(site: GcpSite, lustre: ManagedLustreSpec, path: str, workloads, prod: bool) -> Iterator[Issue]:
    if lustre.cmek:
        yield Issue(
            f"{path}.cmek",
            'a CMEK-protected Managed Lustre instance cannot be mounted from GKE ("CMEK-protected Managed Lustre '
            "instances cannot be used with Google Kubernetes Engine or Cluster Toolkit. They can only be accessed "
            'from Compute Engine clients", docs.cloud.google.com/managed-lustre/docs/cmek), and Lattice serves '
            "every instance to the site's GKE pods; remove cmek (the instance uses Google-default encryption)",
        )
    if lustre.zone is not None and lustre.zone not in site.network.zones:
        yield Issue(
            f"{path}.zone", f"zone '{lustre.zone}' is not one of the site's zones ({', '.join(site.network.zones)})"
        )
    if lustre.workload is not None and lustre.workload not in workloads:
        yield Issue(
            f"{path}.workload",
            f"unknown workload '{lustre.workload}'; use one of: {', '.join(workloads) or 'none defined'}",
            depends_on=(absent_workload(lustre.workload),),  # a workload left out for its shape errors
        )
    workload = workloads.get(lustre.workload) if lustre.workload else None
    size = yield from _sized(lustre, workload, path)
    if size is not None and workload is not None and (lustre.tier is None or lustre.capacity_gib is None):
        yield _pin(
            path,
            workload.name,
            f"tier: {size.tier}, capacity_gib: {size.capacity_gib}",
            "Managed Lustre cannot shrink an instance or change its tier in place",
        )
    if lustre.tier is None or lustre.capacity_gib is None:
        if lustre.workload is None:
            for key in ("tier", "capacity_gib"):
                if getattr(lustre, key) is None:
                    yield Issue(
                        f"{path}.{key}", f"set {key}, or name a workload to size the instance for its checkpoints"
                    )
        return
    tier = MANAGED_LUSTRE_TIERS[lustre.tier]
    if not tier.valid(lustre.capacity_gib):
        yield Issue(
            f"{path}.capacity_gib",
            f"{lustre.capacity_gib:,} GiB is not a Managed Lustre size at tier {lustre.tier} ({tier.describe()}); "
            f"{_nearest(tier, lustre.capacity_gib)}",
        )


def _buckets(site, base: str, stack: str, cloud: str) -> Iterator[Issue]:
    for j, bucket in enumerate(site.storage.buckets):
        path = f"{base}.buckets[{j}]"
        classes = S3_COLD_CLASSES if cloud == "aws" else GCS_COLD_CLASSES
        cold = bucket.lifecycle.cold_class
        if cold is not None and cold not in classes:
            yield Issue(
                f"{path}.lifecycle.cold_class",
                f"{cold} is not a {'S3' if cloud == 'aws' else 'GCS'} class; use one of {', '.join(classes)}",
            )
        cold_after, expire = bucket.cold_after(), bucket.lifecycle.expire_days
        if cold_after is not None and expire is not None and expire <= cold_after:
            yield Issue(
                f"{path}.lifecycle.expire_days",
                f"objects would expire after {expire} days, before they move to the cold class after {cold_after}; "
                "set expire_days above cold_after_days (or lower cold_after_days)",
            )
        if cloud == "aws":
            minimum = S3_MIN_DAYS_BEFORE.get(cold) if cold is not None else None
            if cold_after is not None and minimum is not None and cold_after < minimum:
                yield Issue(
                    f"{path}.lifecycle.cold_after_days",
                    f"S3 moves objects to {cold} only after at least {minimum} days; set cold_after_days to "
                    f"{minimum} or more, or choose GLACIER_IR or INTELLIGENT_TIERING",
                )
            if bucket.hierarchical_namespace:
                yield Issue(
                    f"{path}.hierarchical_namespace",
                    "hierarchical namespaces are a Cloud Storage feature; remove it on an AWS site",
                )
            if bucket.soft_delete_days is not None:
                yield Issue(
                    f"{path}.soft_delete_days",
                    "soft delete is a Cloud Storage feature (S3 keeps old versions instead); remove it",
                )
            if bucket.immutable is not None and bucket.immutable.locked is not None:
                yield Issue(
                    f"{path}.immutable.locked",
                    "S3 Object Lock needs no lock step (COMPLIANCE mode is final); remove locked",
                )
            if len(f"{stack}-{site.name}-{bucket.name}") > S3_BUCKET_NAME_MAX - ACCOUNT_ID_LENGTH - 1:
                yield Issue(f"{path}.name", _too_long("S3 bucket (with the account ID)", S3_BUCKET_NAME_MAX))
        else:
            if bucket.soft_delete_days is not None and 0 < bucket.soft_delete_days < 7:
                yield Issue(
                    f"{path}.soft_delete_days",
                    f"{bucket.soft_delete_days} is not a soft-delete period GCS accepts; use 0 (off) or 7-90 days",
                )
            if bucket.hierarchical_namespace and bucket.lock is not None:
                why = "immutable" if bucket.immutable is not None else "purpose audit (immutable by default)"
                yield Issue(
                    f"{path}.hierarchical_namespace",
                    f"Cloud Storage refuses a retention policy on a hierarchical-namespace bucket, and this bucket is "
                    f"{why}; remove hierarchical_namespace, or keep write-once data in a bucket without it",
                )
            elif bucket.hierarchical_namespace and bucket.soft_delete == 0:
                yield Issue(
                    f"{path}.soft_delete_days",
                    "a hierarchical-namespace bucket cannot be versioned, so soft delete is its only way back from a "
                    "deletion; keep soft_delete_days at 7-90",
                )
            if bucket.immutable is not None and bucket.immutable.mode == "GOVERNANCE":
                yield Issue(
                    f"{path}.immutable.mode",
                    "GCS retention has no governance mode; use COMPLIANCE (lock it with locked: true)",
                )
            if len(f"{site.project}-{stack}-{bucket.name}") > GCS_BUCKET_NAME_MAX:
                yield Issue(
                    f"{path}.name", _too_long("Cloud Storage bucket (with the project ID)", GCS_BUCKET_NAME_MAX)
                )


def checkpoint_budget(spec: StackSpec) -> Iterator[Issue]:
    """A hand-sized Lustre file system that cannot save its workload's checkpoint in time."""
    from .. import sizing
    from ..catalog.storage import MANAGED_LUSTRE_TIERS as TIERS

    workloads = {w.name: w for w in spec.workloads}
    prod = spec.environment == "prod"
    for i, site in enumerate(spec.sites):
        for j, lustre in enumerate(getattr(site.storage, "lustre", [])):
            workload = workloads.get(lustre.workload) if lustre.workload else None
            if workload is None:
                continue
            if isinstance(lustre, FsxLustreSpec):
                kind = fsx_lustre_class(lustre.deployment_type, lustre.storage_type)
                if kind is None or (lustre.capacity_gib is None and kind.storage_type != "INTELLIGENT_TIERING"):
                    continue
                if kind.per_unit_throughputs and lustre.throughput_mbps_per_tib is None:
                    continue
                write = (lustre.throughput_mbps if kind.storage_type == "INTELLIGENT_TIERING"
                         else kind.write_mbps(lustre.capacity_gib, lustre.throughput_mbps_per_tib))  # fmt: skip
            else:
                if lustre.tier is None or lustre.capacity_gib is None:
                    continue
                write = TIERS[lustre.tier].write_mbps(lustre.capacity_gib)
            if not write:
                continue
            budget = lustre.checkpoint_seconds or workload.target_checkpoint_seconds or CHECKPOINT_TARGET_SECONDS
            job = workload.job()
            needed = sizing.checkpoint_write_mbps(job, budget)
            if write < needed:
                seconds = sizing.checkpoint_bytes(job) / (write * sizing.MB)
                yield Issue(
                    f"sites[{i}].storage.lustre[{j}]",
                    f"writes {write:,.0f} MB/s: a {sizing.checkpoint_bytes(job) / sizing.GB:,.0f} GB checkpoint of "
                    f"'{workload.name}' takes {seconds:,.0f} s, over the {budget:g} s budget ({needed:,.0f} MB/s "
                    "needed); raise the capacity or throughput tier, or leave them out to have Lattice size them",
                    warning=not prod,
                )
