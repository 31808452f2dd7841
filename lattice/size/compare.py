"""One training run on every pool of a stack that can run it: ``lattice size … --tokens N --stack S``.

Each GPU pool of the stack, at its maximum nodes, is sized for the workload (``sizing.fits``: memory, precision);
a pool that can run it gets the run's wall clock (the same tokens per second per GPU everywhere: the one
throughput the user gave, stated as the assumption), GPU-hours, compute cost on the pool's own capacity type
(``lattice.cost.report.run_cost``, what ``lattice size`` prints for one machine; grid and edge pools at their site's
``cost.gpu_hour``) and the checkpoints' cost: the kept checkpoints in the site's object storage and the Lustre
sized for them through the run (cloud sites; a grid's own file systems have no price Lattice knows). The time
lost to saves comes from the Lustre sized for the pool (cloud) or the site's Lustre / GPFS mount's write rate
(grid); it is in the compute cost. The cheapest (compute + checkpoints) and the fastest (wall clock) are marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lattice.components import sizing


@dataclass(frozen=True)
class PoolRun:
    site: str
    pool: str
    hardware: str  # catalog machine type, or a grid pool's GPU model
    capacity: str  # the capacity type the run is priced at
    nodes: int
    gpus: int
    problem: str | None = None  # why the pool cannot run the workload
    hours: sizing.RunHours | None = None
    compute_usd: float | None = None
    checkpoint_usd: float | None = None
    unpriced: tuple[str, ...] = ()  # what is missing from the snapshot / the spec

    @property
    def capable(self) -> bool:
        return self.problem is None

    @property
    def total_usd(self) -> float | None:
        if self.compute_usd is None:
            return None
        return self.compute_usd + (self.checkpoint_usd or 0.0)


def _cloud_lustre(workload: sizing.Workload, machine: Any, nodes: int) -> sizing.LustreChoice | None:
    """The Lustre ``lattice size`` sizes by default for the checkpoints: FSx PERSISTENT_2 (TCP clients) on AWS,
    Managed Lustre on GCP; None where no configuration meets the budget."""
    from lattice.components.catalog import AwsInstanceType
    from lattice.components.catalog.storage import fsx_client_gbps
    from lattice.components.sizing import MB_PER_GBIT
    from lattice.components.standards import CHECKPOINT_TARGET_SECONDS

    budget = workload.target_checkpoint_seconds or CHECKPOINT_TARGET_SECONDS
    try:
        if isinstance(machine, AwsInstanceType):
            return sizing.lustre_for_checkpoints(
                workload,
                service="fsx",
                budget_seconds=budget,
                client_mbps=nodes * fsx_client_gbps(machine, efa_client=False) * MB_PER_GBIT,
            )
        return sizing.lustre_for_checkpoints(workload, service="managed-lustre", budget_seconds=budget)
    except ValueError:
        return None


def _grid_overhead(workload: sizing.Workload, site: Any) -> tuple[float, str | None]:
    """The share of a grid run lost to saves at the fastest parallel file system the site declares."""
    rates = [m.write_mbps for m in site.storage.mounts if m.kind in ("lustre", "gpfs") and m.write_mbps]
    if not rates:
        return 0.0, f"{site.name} declares no Lustre / GPFS write_mbps: saves not counted"
    save = sizing.checkpoint_bytes(workload) / (max(rates) * 1e6)
    return sizing.checkpoint_overhead_fraction(save, workload.checkpoint_interval_minutes), None


def compare_pools(
    spec: Any, workload: sizing.Workload, tokens: float, tokens_per_second_per_gpu: float, *, kept: int
) -> list[PoolRun]:
    """Every GPU pool of ``spec`` for one run of ``tokens``, in spec order."""
    from lattice.components.catalog import UnknownCatalogEntryError, aws_instance_type, gcp_machine_type
    from lattice.components.spec import AwsSite, GcpSite, KubernetesSite
    from lattice.cost.report import run_cost

    runs: list[PoolRun] = []
    for site in spec.sites:
        for pool in site.gpu_pools:
            nodes = pool.max_nodes
            if isinstance(site, KubernetesSite):
                gpus = pool.gpus_per_node * nodes
                base = PoolRun(site.name, pool.name, pool.gpu_model, "recharge", nodes, gpus)
                shape = sizing.Pool(
                    name=pool.name,
                    accelerator_memory_gib=pool.gpu_memory_gib,
                    accelerators_per_node=pool.gpus_per_node,
                    nodes=nodes,
                    scale_out_bandwidth_gbps=pool.fabric_bandwidth_gbps,
                )
                report = sizing.fits(workload, shape)
                if not report.fits:
                    runs.append(_replace(base, problem="; ".join(report.problems)))
                    continue
                overhead, note = _grid_overhead(workload, site)
                hours = sizing.run_hours(tokens, tokens_per_second_per_gpu, shape, overhead)
                unpriced = (note,) if note else ()
                if site.cost is None:
                    unpriced += (f"sites[{site.name}].cost.gpu_hour is not set",)
                    runs.append(_replace(base, hours=hours, unpriced=unpriced))
                else:
                    compute = hours.gpu_hours * site.cost.gpu_hour
                    runs.append(_replace(base, hours=hours, compute_usd=compute, unpriced=unpriced))
                continue
            if isinstance(site, GcpSite) and pool.tpu is not None:
                base = PoolRun(site.name, pool.name, f"TPU {pool.tpu.type} {pool.tpu.topology}", "", nodes, 0)
                runs.append(_replace(base, problem="a TPU slice: lattice size sizes GPU memory only"))
                continue
            try:
                if isinstance(site, AwsSite):
                    machine = aws_instance_type(pool.instance_type)
                else:
                    guest = pool.guest_accelerator
                    machine = gcp_machine_type(pool.machine_type, (guest.type, guest.count) if guest else None)
            except UnknownCatalogEntryError as exc:
                runs.append(PoolRun(site.name, pool.name, "?", "", nodes, 0, problem=str(exc)))
                continue
            shape = sizing.Pool.of(machine, nodes)
            capacity = pool.capacity.type
            base = PoolRun(site.name, pool.name, machine.name, capacity, nodes, shape.accelerators)
            report = sizing.fits(workload, shape)
            if not report.fits:
                runs.append(_replace(base, problem="; ".join(report.problems)))
                continue
            lustre = _cloud_lustre(workload, machine, nodes)
            overhead = lustre.overhead_fraction if lustre is not None else 0.0
            hours = sizing.run_hours(tokens, tokens_per_second_per_gpu, shape, overhead)
            cloud = "aws" if isinstance(site, AwsSite) else "gcp"
            cost = run_cost(
                machine.name,
                cloud,
                site.region,
                capacity,
                hours,
                nodes=nodes,
                checkpoint_bytes=report.checkpoint_bytes,
                kept=kept,
                lustre=lustre,
            )
            unpriced = tuple(
                price.key
                for price, value in (
                    (cost.rate, cost.compute_usd),
                    (cost.object_storage, cost.checkpoint_storage_usd),
                    (cost.lustre, cost.lustre_usd),
                )
                if price is not None and value is None
            )
            if lustre is None:
                unpriced += ("no Lustre meets the checkpoint budget: saves not counted",)
            checkpoints = [v for v in (cost.checkpoint_storage_usd, cost.lustre_usd) if v is not None]
            runs.append(
                _replace(
                    base,
                    hours=hours,
                    compute_usd=cost.compute_usd,
                    checkpoint_usd=sum(checkpoints) if checkpoints else None,
                    unpriced=unpriced,
                )
            )
    return runs


def _replace(run: PoolRun, **changes: Any) -> PoolRun:
    from dataclasses import replace

    return replace(run, **changes)


def cheapest_and_fastest(runs: list[PoolRun]) -> tuple[PoolRun | None, PoolRun | None]:
    """The capable pool with the lowest priced total (compute priced), and the one with the shortest wall clock."""
    priced = [run for run in runs if run.capable and run.total_usd is not None]
    timed = [run for run in runs if run.capable and run.hours is not None]
    cheapest = min(priced, key=lambda run: run.total_usd) if priced else None  # type: ignore[arg-type,return-value]
    fastest = min(timed, key=lambda run: run.hours.wall_clock_hours) if timed else None  # type: ignore[union-attr]
    return cheapest, fastest
