"""Serving: every ``inference`` entry of the stack, built on its sites once they exist (``HybridStack``).

For each entry: its ``InferenceEndpoint`` on the serving site, and, where the weights are on another site, their
``WeightsExport`` on that one (both in the team's namespaces, through each site's Kubernetes provider). What each
entry is sized to and how its weights travel is ``endpoints.py``; the validators have refused what cannot be built.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ..spec import KubernetesSite, StackSpec
from ..spec.link_validators import routed_networks
from ..tagging import TagContext
from .endpoints import endpoint_plan, endpoints, weights_route
from .inference_endpoint import InferenceEndpoint, InferenceEndpointArgs
from .weights_export import WeightsExport, WeightsExportArgs


def pool_labels(site, pool_name: str) -> dict[str, str]:
    """The node labels that select a pool's nodes (what its Kueue flavor names)."""
    pool = next(p for p in site.gpu_pools if p.name == pool_name)
    if isinstance(site, KubernetesSite):
        return dict(pool.node_selector) or {"lattice.dev/pool": pool.name}
    return {"lattice.dev/pool": pool.name}


@dataclass
class ServingArgs:
    spec: StackSpec
    sites: dict  # name -> the built site component
    tags: dict[str, TagContext]  # per site


class Serving(pulumi.ComponentResource):
    endpoints: dict[str, InferenceEndpoint]  # "<site>/<entry>"
    exports: dict[str, WeightsExport]

    def __init__(self, name: str, args: ServingArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:serving:Serving", name, None, opts)
        from ..scheduling.one_queue import provider

        spec = args.spec
        teams = {team.name: team for team in spec.teams}
        sites = {site.name: site for site in spec.sites}
        self.endpoints, self.exports = {}, {}
        for site, entry in endpoints(spec):
            built = args.sites[site.name]
            team = teams[entry.team]
            workloads = built.workloads
            plan = endpoint_plan(site, entry)
            route = weights_route(spec, site, entry)
            key = f"{site.name}-{entry.name}"
            labels = args.tags[site.name].for_component("InferenceEndpoint").k8s_labels({"team": team.name})
            serving_deps = [
                workloads.teams[team.name].namespace,
                *([workloads.metrics.release] if workloads.metrics is not None else []),
                *([workloads.addons.keda] if workloads.addons is not None and workloads.addons.keda else []),
            ]
            endpoint_args = InferenceEndpointArgs(
                entry=entry,
                plan=plan,
                namespace=workloads.teams[team.name].namespace.metadata.name,
                uid=team.uid,
                gid=team.gid,
                environment=spec.environment,
                labels=labels,
                pool_labels=pool_labels(site, entry.pool),
                quota_gpus=team.quota_for(site.name),
                depends_on=serving_deps,
            )
            if route.local:
                endpoint_args.local_claim = entry.weights.mount
                if workloads.storage is not None:
                    endpoint_args.depends_on.append(workloads.storage.claims[(team.name, entry.weights.mount)])
            else:
                source = sites[entry.weights.site]
                held = args.sites[source.name].workloads
                export = WeightsExport(
                    f"{entry.weights.site}-{entry.name}-weights",
                    WeightsExportArgs(
                        entry=entry.name,
                        namespace=held.teams[team.name].namespace.metadata.name,
                        claim=entry.weights.mount,
                        path=entry.weights.path,
                        address=entry.weights.address,
                        client_ranges=tuple(str(net) for net in routed_networks(site)),
                        uid=team.uid,
                        gid=team.gid,
                        labels=args.tags[source.name].for_component("WeightsExport").k8s_labels({"team": team.name}),
                        depends_on=[
                            held.teams[team.name].namespace,
                            *([held.storage.claims[(team.name, entry.weights.mount)]] if held.storage else []),
                        ],
                    ),
                    opts=pulumi.ResourceOptions(parent=self, providers=[provider(args.sites[source.name])]),
                )
                self.exports[key] = export
                endpoint_args.export_address = entry.weights.address
                endpoint_args.export_password = export.password
                endpoint_args.carried_gbps = route.carried_gbps
                endpoint_args.depends_on.append(export.service)
            self.endpoints[key] = InferenceEndpoint(
                key, endpoint_args, opts=pulumi.ResourceOptions(parent=self, providers=[provider(built)])
            )
        self.register_outputs({"endpoints": sorted(self.endpoints)})
