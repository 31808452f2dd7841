"""HybridStack: one component that builds every site of a stack spec by tier and provider.

It is one of Lattice's public components (``components/package``): any Pulumi program builds a whole estate with
``HybridStackInputs`` (the spec document a stack file holds under ``lattice:spec``, and the secret values it names),
the stack-file program with ``HybridStackArgs``; its type token is ``lattice:index:HybridStack`` either way. No
``from __future__ import annotations`` here: Pulumi's analyzer reads the schema from the evaluated annotations.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import pulumi

from .network.links import CrossSiteLinks, CrossSiteLinksArgs, linked_ranges, transit_routes, vpn_gateway_count
from .observability.federation import MetricsFederation, build_order, grafana_views
from .observability.receivers import resolve as resolve_receivers
from .package.inputs import children_wait
from .scheduling.one_queue import OneQueue, OneQueueArgs
from .scheduling.routes import manager_site, routes, site_teams, worker_sites
from .sites.existing_cluster_site import ExistingClusterSite, ExistingClusterSiteArgs
from .spec import AwsSite, GcpSite, KubernetesSite, StackSpec
from .spec.link_validators import routed_networks
from .tagging import TagContext

TOKEN = "lattice:index:HybridStack"


@dataclass
class HybridStackArgs:
    spec: StackSpec
    stack: str
    # Reads a secret config value by key; under `pulumi up` this is pulumi.Config.require_secret.
    secret: Callable[[str], pulumi.Output[str]] | None = None


class HybridStackInputs(TypedDict):
    """The public inputs of HybridStack: a whole estate from its spec document."""

    spec: str
    """The stack spec document: what a stack file holds under lattice:spec (environment, owner, sites, links, teams,
    workloads, ...), as YAML or JSON text. Validated as a stack file is: every problem at once, each at its key path."""
    secrets: NotRequired[dict[str, pulumi.Input[str]]]
    """The secret values the spec names by config key (e.g. a receiver's key, Slurm's database password); each is
    kept a Pulumi secret."""


def args_from_inputs(inputs: dict[str, Any]) -> HybridStackArgs:
    """The spec document parsed and validated as the stack-file program does it (``__main__.py``)."""
    import yaml
    from pulumi import InputPropertiesError

    from .spec import SpecError, ValidationContext, parse_spec

    stack = pulumi.get_stack()
    text = inputs["spec"]
    try:
        raw = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        problem = str(exc).replace("\n", " ")
        raise InputPropertiesError(
            f"{TOKEN}: spec is not YAML or JSON", [{"property_path": "spec", "reason": problem}]
        ) from None
    try:
        spec = parse_spec(raw, source="spec", ctx=ValidationContext(knows_config=False, stack=stack))
    except SpecError as error:
        errors = [{"property_path": f"spec.{issue.path}", "reason": issue.message} for issue in error.issues]
        raise InputPropertiesError(f"{TOKEN}: {error}", errors) from None
    given = dict(inputs.get("secrets") or {})

    def secret(key: str) -> pulumi.Output[str]:
        if key not in given:
            raise InputPropertiesError(
                f"{TOKEN}: the spec needs the secret {key}",
                [{"property_path": f"secrets.{key}", "reason": f"the spec names the secret {key}; give its value"}],
            )
        return pulumi.Output.secret(given[key])

    return HybridStackArgs(spec=spec, stack=stack, secret=secret)


class HybridStack(pulumi.ComponentResource):
    """Every site of a stack spec, by tier and provider (AWS and GCP cloud sites, grid and edge clusters), the
    cross-site links, the metrics federation and the one queue across sites: what a stack file builds."""

    environment: pulumi.Output[str]
    """The spec's environment."""
    site_outputs: pulumi.Output[dict[str, Any]]
    """Per site, what the stack file exports under sites: its cluster's name and endpoint, network and key IDs,
    namespaces, GPU pools and storage, and for a grid or edge site its gateway hosts' VPN files (swanctl.conf a
    secret)."""
    link_summary: pulumi.Output[dict[str, Any]]
    """Per link: kind, routing, bandwidth asked and carried, tunnels, inside ranges."""

    # Read by the stack-file program and lattice (not part of the schema): sites (name -> the site's component),
    # links, outputs, routes, receivers, metrics. The cloud sites' modules are imported only for a stack that has
    # one (components/sdk.py).

    def __init__(self, name: str, args: HybridStackInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file program's ``HybridStackArgs``."""
        if not isinstance(args, HybridStackArgs):
            args = args_from_inputs(args)
            opts = children_wait(opts)
        super().__init__(TOKEN, name, None, opts)
        spec = args.spec
        stack_tags = TagContext(
            stack=args.stack,
            environment=spec.environment,
            owner=spec.owner,
            cost_centre=spec.cost_centre,
            data_classification=spec.data_classification,
            user_tags=dict(spec.tags),
        )
        child = pulumi.ResourceOptions(parent=self)
        self.sites = {}
        site_tags = {}
        workloads = {workload.name: workload for workload in spec.workloads}
        site_ranges = {site.name: tuple(str(net) for net in routed_networks(site)) for site in spec.sites}
        manager = manager_site(spec)
        self.routes = routes(spec)
        # Each site's part in the metrics: its own Prometheus, and the central store's receiver or a writer to it.
        self.receivers = resolve_receivers(spec.observability.receivers, args.secret)
        self.metrics = MetricsFederation("metrics", spec, opts=child, receivers=self.receivers)
        dispatched = {route.team for route in self.routes if route.workers}
        workers = {site.name for site in worker_sites(spec)}
        # The one view's Grafana last: it reads the cloud sites' metrics with keys they create; a managed store's site
        # first: every other site writes to its workspace.
        for site in build_order(spec):
            tags = stack_tags.for_site(site.name, dict(site.tags))
            site_tags[site.name] = tags
            # The manager holds a namespace for every team it dispatches for: teams submit there.
            is_manager = manager is not None and site.name == manager.name
            teams = site_teams(spec, site)
            jobset = is_manager or site.name in workers
            if isinstance(site, AwsSite):
                # Each cloud's site (and with it its SDK) is imported only for a stack with a site there.
                from .sites.aws_cloud_site import AwsCloudSite, AwsCloudSiteArgs

                built = AwsCloudSite(
                    site.name,
                    AwsCloudSiteArgs(
                        site,
                        tags,
                        spec.protects_stateful,
                        teams=teams,
                        site_ranges=site_ranges,
                        workloads=workloads,
                        transit_routes=transit_routes(spec, site),
                        compliance_locks=spec.environment == "prod",
                        jobset=jobset,
                        metrics=self.metrics.sites[site.name],
                        receivers=self.receivers,
                        grafanas=grafana_views(self.metrics.sites, site.name),
                    ),
                    opts=child,
                )
            elif isinstance(site, GcpSite):
                from .sites.gcp_cloud_site import GcpCloudSite, GcpCloudSiteArgs

                built = GcpCloudSite(
                    site.name,
                    GcpCloudSiteArgs(
                        site,
                        tags,
                        spec.protects_stateful,
                        teams=teams,
                        site_ranges=site_ranges,
                        workloads=workloads,
                        locked_retention=spec.environment == "prod",
                        # Asked to protect what is stateful, a staging stack locks its audit log store too.
                        lock_audit_logs=spec.protects_stateful,
                        vpn_gateways=vpn_gateway_count(spec, site),
                        linked_ranges=linked_ranges(spec, site),
                        api_clients=list(site_ranges[manager.name]) if site.name in workers else [],
                        jobset=jobset,
                        metrics=self.metrics.sites[site.name],
                        receivers=self.receivers,
                        grafanas=grafana_views(self.metrics.sites, site.name),
                    ),
                    opts=child,
                )
            elif isinstance(site, KubernetesSite):
                secret_key = site.kubernetes.kubeconfig_secret
                if secret_key is not None and args.secret is None:
                    raise ValueError(
                        f"site '{site.name}' needs secret config key '{secret_key}', but no reader was given"
                    )
                built = ExistingClusterSite(
                    site.name,
                    ExistingClusterSiteArgs(
                        site=site,
                        tags=tags,
                        kubeconfig=args.secret(secret_key) if secret_key is not None else None,
                        teams=teams,
                        site_ranges=site_ranges,
                        linked_ranges=linked_ranges(spec, site),
                        jobset=jobset,
                        metrics=self.metrics.sites[site.name],
                        secrets=slurm_secrets(site, args.secret),
                    ),
                    opts=child,
                )
            else:  # the spec's discriminated union makes this unreachable; fail loudly if it grows
                raise TypeError(f"no component builds sites of provider {site.provider!r}")
            self.sites[site.name] = built
        self.sites = {site.name: self.sites[site.name] for site in spec.sites}  # spec order, as before
        self.multikueue = None
        if manager is not None and dispatched:
            self.multikueue = OneQueue(
                "multikueue",
                OneQueueArgs(spec=spec, manager=manager.name, routes=self.routes, sites=self.sites, tags=site_tags),
                opts=child,
            )
        self.serving = None
        if any(site.inference for site in spec.sites):
            from .serving.serving import Serving, ServingArgs

            self.serving = Serving("serving", ServingArgs(spec=spec, sites=self.sites, tags=site_tags), opts=child)
        self.links = None
        self.link_summary: dict[str, dict] = {}
        if spec.links:
            self.links = CrossSiteLinks(
                "links",
                CrossSiteLinksArgs(spec=spec, stack=args.stack, sites=self.sites, tags=site_tags),
                opts=child,
            )
            self.link_summary = self.links.summary
        self.outputs = {name: site.outputs for name, site in self.sites.items()}
        self.environment, self.site_outputs = spec.environment, self.outputs
        if self.links is not None:
            for peer, files in self.links.peer_configs.items():
                self.outputs[peer] = {**self.outputs[peer], "vpn": files}
        self.register_outputs(
            {"sites": self.outputs, "links": self.link_summary, "routes": [r.describe() for r in self.routes]}
        )


def slurm_secrets(site: KubernetesSite, secret: Callable[[str], pulumi.Input[str]] | None) -> dict:
    """The secret config values a site's Slurm reads (its database password, its directory's bind password)."""
    if site.slurm is None:
        return {}
    keys = (site.slurm.accounting.password_secret, site.slurm.directory.bind_password_secret)
    if secret is None:
        raise ValueError(
            f"site '{site.name}' needs secret config keys {', '.join(keys)} for Slurm, but no reader was given"
        )
    return {key: secret(key) for key in keys}
