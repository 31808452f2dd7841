"""Slurm on a grid / edge site (``sites[].slurm``, ``gpu_pools[].scheduler``): what the spec alone cannot say.

- A pool whose ``scheduler`` is slurm needs the site's ``slurm`` key (its database and directory), and a ``slurm``
  key needs a pool to run on.
- A Slurm pool's GPU model must be one the catalog knows: Slurm's ``Gres=gpu:<type>:<count>`` takes its type from
  there (components/catalog/accelerators.py ``slurm_gres_type``), never from auto-detection.
- A site's Slurm pools share one GPU shape: gres.conf names no nodes (Slurm's node names are the Kubernetes nodes'
  names, which Lattice does not know), so one explicit line must fit every Slurm node.
- The secrets (database password, directory bind password) are set, as secrets.
- ``login_from`` / ``rest_from`` name other sites reached over the stack's links.
- Slinky v1.2.1 needs Kubernetes 1.29 or newer (its charts' ``kubeVersion``).
- No inference endpoint on a Slurm pool: its pods could never land there.
- The login and slurmrestd addresses lie in the site's routed ranges and are taken by nothing else; unset where
  users or REST clients need them, a warning.
- A Slurm pool declares its host (CPUs, memory), which its per-GPU job defaults come from; without one it plans with a
  small fallback and a warning.
"""

from __future__ import annotations

from collections.abc import Iterator

from .issues import Issue, unknown_site
from .model import KubernetesSite, StackSpec
from .scheduling_validators import OVER_LINKS


def slurm_issues(spec: StackSpec, config_keys: frozenset[str], secret_keys: frozenset[str], knows_config: bool):
    from ..catalog.accelerators import slurm_gres_type

    names = [site.name for site in spec.sites]
    for i, site in enumerate(spec.sites):
        if not isinstance(site, KubernetesSite):
            continue
        path = f"sites[{i}]"
        slurm_pools = [(j, pool) for j, pool in enumerate(site.gpu_pools) if pool.scheduler == "slurm"]
        slurm_names = {pool.name for _, pool in slurm_pools}
        for e, entry in enumerate(site.inference):
            if entry.pool in slurm_names:
                yield Issue(
                    f"{path}.inference[{e}].pool",
                    f"pool '{entry.pool}' is Slurm's (scheduler: slurm): slurmd holds its GPUs and Slinky's worker "
                    "taint keeps other pods off its nodes, so the endpoint would never start; serve from a Kueue pool",
                )
        if site.slurm is None:
            for j, pool in slurm_pools:
                yield Issue(
                    f"{path}.gpu_pools[{j}].scheduler",
                    f"pool '{pool.name}' is Slurm's, but site '{site.name}' has no `slurm` key; add {path}.slurm "
                    "(accounting database, directory) or set scheduler: kueue",
                )
            continue
        if not slurm_pools:
            yield Issue(
                f"{path}.slurm",
                f"site '{site.name}' sets up Slurm, but none of its gpu_pools has scheduler: slurm; set it on the "
                "pool Slurm owns, or remove the slurm key",
            )
        shapes: dict[tuple[str, int], str] = {}
        for j, pool in slurm_pools:
            gres = slurm_gres_type(pool.gpu_model)
            if gres is None:
                yield Issue(
                    f"{path}.gpu_pools[{j}].gpu_model",
                    f"'{pool.gpu_model}' is no NVIDIA GPU the catalog knows, and Slurm's Gres=gpu:<type>:<count> takes "
                    "its type from the catalog; name the model as `lattice catalog` lists it (e.g. H100-80GB)",
                )
                continue
            shapes.setdefault((gres, pool.gpus_per_node), pool.name)
        yield from _host_issues(path, slurm_pools)
        yield from _address_issues(spec, i, site)
        if len(shapes) > 1:
            listed = ", ".join(f"'{name}' gpu:{gres}:{count}" for (gres, count), name in shapes.items())
            yield Issue(
                f"{path}.gpu_pools",
                f"site '{site.name}' gives Slurm pools of different GPU shapes ({listed}); gres.conf names no nodes "
                "(Slurm's node names are the Kubernetes nodes'), so its one explicit line must fit every Slurm node: "
                "keep one shape under Slurm, or set scheduler: kueue on the others",
            )
        version = site.kubernetes.version
        if version is not None and tuple(int(p) for p in version.split(".")) < (1, 29):
            yield Issue(
                f"{path}.kubernetes.version",
                f"Slinky v1.2.1 needs Kubernetes 1.29 or newer (its charts' kubeVersion); '{site.name}' runs {version}",
            )
        secrets = {
            f"{path}.slurm.accounting.password_secret": site.slurm.accounting.password_secret,
            f"{path}.slurm.directory.bind_password_secret": site.slurm.directory.bind_password_secret,
        }
        if knows_config:
            for where, key in secrets.items():
                full = f"lattice:{key}"
                fix = f"run `pulumi config set --secret {full} <password>`"
                if full not in config_keys:
                    yield Issue(where, f"config key '{full}' is not set in this stack; {fix}")
                elif full not in secret_keys:
                    yield Issue(where, f"config key '{full}' holds a password in plain text; {fix} to encrypt it")
        reached = _linked(spec, site.name)
        for key in ("login_from", "rest_from"):
            for k, name in enumerate(getattr(site.slurm, key)):
                where = f"{path}.slurm.{key}[{k}]"
                other = next((s for s in spec.sites if s.name == name), None)
                if other is None:
                    # a site left out for its shape errors is no unknown one (components/spec/issues.py)
                    yield unknown_site(where, name, sorted(names))
                elif name == site.name:
                    yield Issue(
                        where, f"'{name}' is the Slurm site itself, whose own network always reaches it; remove it"
                    )
                elif name not in reached:
                    yield Issue(
                        where,
                        f"'{name}' has no link to '{site.name}' (directly or through an AWS hub), so its clients "
                        "never reach Slurm there; link the two sites or remove it",
                        depends_on=OVER_LINKS,
                    )


def _address_issues(spec: StackSpec, index: int, site: KubernetesSite) -> Iterator[Issue]:
    """The login and slurmrestd LoadBalancer addresses: inside the site's routed ranges (as the central metrics
    store's address), each its own, and a warning where users or REST clients are left without one."""
    import ipaddress

    from .link_validators import routed_networks

    path = f"sites[{index}].slurm"
    central = spec.observability.central
    taken = {central.address: "observability.central.address"} if central and central.address else {}
    for i, other in enumerate(spec.sites):
        for j, entry in enumerate(other.inference):
            if entry.weights.address is not None:
                taken.setdefault(entry.weights.address, f"sites[{i}].inference[{j}].weights.address")
    networks = routed_networks(site)
    for key, what, needed in (
        ("login_address", "the login pods' ssh", True),
        ("rest_address", "slurmrestd", bool(site.slurm.rest_from)),
    ):
        address = getattr(site.slurm, key)
        where = f"{path}.{key}"
        if address is None:
            if needed:
                yield Issue(
                    where,
                    f"no address for {what} on '{site.name}': its LoadBalancer Service takes whatever the site's "
                    "load balancer picks, so Lattice cannot print where to connect, and the reachability model "
                    "assumes the site's network reaches it; name an address inside "
                    f"{', '.join(map(str, networks))} that the site's MetalLB or load balancer assigns",
                    warning=True,
                )
            continue
        if not any(ipaddress.ip_address(address) in network for network in networks):
            yield Issue(
                where,
                f"{address} is outside '{site.name}' ({', '.join(map(str, networks))}); give {what} an address of "
                "the site's network, which its links route",
            )
        elif address in taken:
            yield Issue(where, f"{address} is already {taken[address]}'s; give {what} an address of its own")
        taken.setdefault(address, where)


def _host_issues(path: str, slurm_pools) -> Iterator[Issue]:
    """A Slurm pool's per-GPU job defaults come from its host (components/scheduling/slurm_config.py): undeclared,
    a small fallback and a warning; declared, it must hold a CPU per GPU."""
    from ..standards import SLURM_FALLBACK_MEM_GIB_PER_GPU

    for j, pool in slurm_pools:
        where = f"{path}.gpu_pools[{j}]"
        if pool.host is None:
            yield Issue(
                f"{where}.host",
                f"pool '{pool.name}' is Slurm's but declares no host, so Lattice cannot size Slurm's per-GPU job "
                f"defaults from its nodes: a job that names no --mem gets {SLURM_FALLBACK_MEM_GIB_PER_GPU} GiB per "
                "GPU (DefMemPerGPU) and one CPU per task, and one that needs more must ask; add host: {cpus: "
                "<threads per node>, memory_gib: <GiB per node>}",
                warning=True,
            )
        elif pool.host.cpus < pool.gpus_per_node:
            yield Issue(
                f"{where}.host.cpus",
                f"pool '{pool.name}' gives each node {pool.host.cpus} CPUs for {pool.gpus_per_node} GPUs, and Slurm "
                "gives every GPU job at least one CPU per GPU; give the node's logical CPUs (`nproc` on it)",
            )


def _linked(spec: StackSpec, name: str) -> set[str]:
    """Sites ``name`` reaches over the stack's links: linked ones, and through an AWS site's transit gateway (which
    routes between its attachments) every other site linked to it — as components/network/link_plan.py linked_ranges."""
    from .model import AwsSite

    pairs = {frozenset((a, b)) for link in spec.links for a, b, *_ in link.pairs() if a != b}
    sites = {site.name: site for site in spec.sites}

    def peers(site: str) -> set[str]:
        return {other for pair in pairs if site in pair for other in pair if other != site}

    reached = set()
    for other in peers(name):
        reached |= {other, *(peers(other) if isinstance(sites.get(other), AwsSite) else ())}
    reached.discard(name)
    return reached


def slurm_issue_list(spec: StackSpec, ctx) -> Iterator[Issue]:
    yield from slurm_issues(spec, ctx.config_keys, ctx.secret_config_keys, ctx.knows_config)
