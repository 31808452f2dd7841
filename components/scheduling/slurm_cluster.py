"""Slurm on a Kubernetes site through SchedMD's Slinky: the operator, and the Slurm cluster as its custom resources.

Pinned: slurm-operator v1.2.1 (SlinkyProject/slurm-operator, commit 87313dac23e95f5632439e99c9fe9e325ece1bcd) —
its ``slurm-operator-crds`` and ``slurm-operator`` charts in lock step, installed as its docs/installation.md shows,
after cert-manager (its webhook's certificate), cert-manager v1.21.1 with its CRDs. Kubernetes 1.29 or newer
(both charts' ``kubeVersion``), Slurm 25.11 or newer (the operator chart's ``slinky.slurm.net/minimum-slurm-version``).

The Slurm cluster itself is written as the operator's custom resources (``slinky.slurm.net/v1beta1``), not through
the project's third chart, ``slurm``: that chart renders the same objects from values, which cannot be checked
here without Helm, whereas every object below is checked against the pinned CRDs with their CEL rules
(tests/slinky.py). The images are those the ``slurm`` chart v1.2.1 pins (Slurm 26.05).

- Controller ``slurm`` (slurmctld, Slurm ClusterName = the site), its slurm.conf lines, gres.conf, cgroup.conf and
  topology.yaml in a ConfigMap it names (``components/scheduling/slurm_config.py``), its openmetrics endpoint
  scraped through the ServiceMonitor the operator writes.
- Accounting ``slurm`` (slurmdbd) on the site's own MariaDB / MySQL: the password a Pulumi secret in a Kubernetes
  Secret (``storageConfig.passwordKeyRef``), never in a value or an input in plain text.
- LoginSet ``slurm`` (sshd, sackd, SSSD): ``sssd.conf`` for the site's LDAP directory in a Secret, its bind password
  a Pulumi secret.
- RestApi ``slurm`` (slurmrestd).
- A NodeSet per pool Slurm owns, in DaemonSet mode (one slurmd per node of a static pool), selecting the pool's
  nodes, tolerating their GPU taint and holding all their GPUs (``nvidia.com/gpu`` limits: Kubernetes then books
  the GPUs to slurmd, so no other pod is given them), ``Gres=gpu:<type>:<count>`` and its partition.
- The teams' accounts and QOS, by a Job that runs ``sacctmgr`` (``slurm_accounts.py``).
- GPU health in Slurm: a node whose kernel log holds a fatal Xid is drained (``slurm_health.py``).

The Slurm auth key and the JWT key are ``random.RandomPassword`` results in Secrets, as the ``slurm`` chart makes
them (``randAscii 1024``, templates/secrets/slurmkey.yaml and jwtkey.yaml), Pulumi secrets end to end.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from ..platform.accelerators import NVIDIA_GPU
from ..tagging import TagContext
from . import slurm_config, slurm_health
from .slurm_accounts import SlurmAccount, accounts_script

SLINKY_VERSION = "1.2.1"
SLINKY_CHARTS = "oci://ghcr.io/slinkyproject/charts"
SLINKY_API = "slinky.slurm.net/v1beta1"
SLINKY_NAMESPACE = "slinky"  # the operator's, as docs/installation.md installs it
CERT_MANAGER_CHART = "oci://quay.io/jetstack/charts/cert-manager"
CERT_MANAGER_VERSION = "v1.21.1"
CERT_MANAGER_NAMESPACE = "cert-manager"
SLURM_NAMESPACE = "slurm"
CLUSTER = "slurm"  # the Controller, Accounting, LoginSet and RestApi objects' name
# helm/slurm/values.yaml at v1.2.1: the images the chart runs (Slurm 26.05 on Ubuntu 26.04). slurmd and login in
# their pyxis builds (SlinkyProject/containers schedmd/slurm/26.05/ubuntu26.04/Dockerfile.pyxis, targets slurmd-pyxis
# and login-pyxis, at commit 1a419257; slurm-operator docs/usage/pyxis.md): jobs run in their own container image
# (``srun --container-image``), not in slurmd's, which carries no CUDA or PyTorch.
SLURM_IMAGE_TAG = "26.05-ubuntu26.04"
IMAGES = {
    "slurmctld": f"ghcr.io/slinkyproject/slurmctld:{SLURM_IMAGE_TAG}",
    "slurmdbd": f"ghcr.io/slinkyproject/slurmdbd:{SLURM_IMAGE_TAG}",
    "slurmrestd": f"ghcr.io/slinkyproject/slurmrestd:{SLURM_IMAGE_TAG}",
    "slurmd": f"ghcr.io/slinkyproject/slurmd-pyxis:{SLURM_IMAGE_TAG}",
    "login": f"ghcr.io/slinkyproject/login-pyxis:{SLURM_IMAGE_TAG}",
}
# The operator's own helper containers take their image from the custom resource and have none of their own: the
# logfile sidecar of slurmctld and of every slurmd (common/common.go LogfileContainer; controllerbuilder/
# controller_app.go and workerbuilder/worker_app.go add it to every pod) and the login pods' initconf init container
# (InitconfContainer, loginbuilder/login_app.go). Their base container has no image, nothing defaults one
# (internal/defaults/), and the API server refuses a container without one (kubernetes pkg/apis/core/validation/
# validation.go, validateContainerCommon: "image: Required value"), so the StatefulSet and pods would never be made.
# The ``slurm`` chart v1.2.1 gives them docker.io/library/alpine (values.yaml controller.logfile, nodesets.*.logfile,
# loginsets.*.initconf); its scripts need only a POSIX shell, mkfifo, find, xargs, cp, chown and chmod
# (common/scripts/logfile.sh, initconf.sh). Pinned here rather than the chart's ``latest``.
HELPER_IMAGE = "docker.io/library/alpine:3.22"
HELPER = {"image": HELPER_IMAGE}
# slurmctld's state-save claim (the Controller's ``persistence``, a PersistentVolumeClaimSpec the operator copies into
# the StatefulSet's volumeClaimTemplates, controller_app.go BuildController): a claim needs an access mode
# (ValidatePersistentVolumeClaimSpec: "at least 1 access mode is required"), which the operator does not default; the
# chart's values.yaml gives ReadWriteOnce, as here.
STATE_SAVE = {"enabled": True, "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "4Gi"}}}
# Tainting a pool's nodes with Slinky's worker taint keeps every pod that does not tolerate it off them — Kueue's jobs
# included (slurm_config.WORKER_TAINT).
WORKER_TAINT, WORKER_TOLERATION = slurm_config.WORKER_TAINT, slurm_config.WORKER_TOLERATION
GPU_TOLERATION = {"key": NVIDIA_GPU, "operator": "Exists", "effect": "NoSchedule"}
# internal/builder/common/const.go and restapibuilder/restapi_app.go at v1.2.1.
SLURMCTLD_PORT, SLURMDBD_PORT, SLURMRESTD_PORT, SSH_PORT = 6817, 6819, 6820, 22
AUTH_KEY_LENGTH = 1024
SCRIPT_DIGEST = "lattice.dev/accounts-sha256"
SLURM_KEY, JWT_KEY, DB_PASSWORD_KEY, SSSD_KEY = "slurm.key", "jwt.key", "password", "sssd.conf"
# The login and (where other sites call it) slurmrestd Services: a LoadBalancer keeping the client's address
# (externalTrafficPolicy Local), so the NetworkPolicies below see which site a connection comes from.
REACHABLE_SERVICE = {"type": "LoadBalancer", "externalTrafficPolicy": "Local"}
APP_LABEL = (
    "app.kubernetes.io/name"  # internal/builder/labels/labels.go: login, slurmrestd, slurmctld, slurmd, slurmdbd
)
# Slurm's openmetrics endpoints (slurm.schedmd.com/metrics.html; the ``slurm`` chart's serviceMonitor.endpoints).
METRICS_PATHS = (
    "/metrics/jobs",
    "/metrics/nodes",
    "/metrics/partitions",
    "/metrics/scheduler",
    "/metrics/jobs-users-accts",
)


@dataclass(frozen=True)
class SlurmNodePool:
    """A pool Slurm owns: its configuration and the nodes its NodeSet selects."""

    pool: slurm_config.SlurmPool
    node_selector: dict[str, str]
    nodes: int  # the pool's nodes (max_nodes): with its GPUs per node, what standby jobs may hold

    @property
    def gpus(self) -> int:
        return self.nodes * self.pool.gpus_per_node


@dataclass(frozen=True)
class SlurmMount:
    """A file system of the site every slurmd and login pod mounts where the hosts have it (home, Lustre, scratch)."""

    name: str
    path: str
    source: dict  # a Kubernetes volume source: hostPath or nfs
    read_only: bool = False


@dataclass(frozen=True)
class SlurmDatabase:
    host: str
    port: int
    database: str
    user: str
    password: pulumi.Input[str]  # a Pulumi secret


@dataclass(frozen=True)
class SlurmDirectory:
    uri: str
    search_base: str
    bind_dn: str
    bind_password: pulumi.Input[str]  # a Pulumi secret


@dataclass
class SlurmClusterArgs:
    cluster_name: str  # Slurm's ClusterName (the site)
    pools: list[SlurmNodePool]
    accounts: list[SlurmAccount]
    database: SlurmDatabase
    directory: SlurmDirectory
    tags: TagContext
    login_replicas: int = 1
    service_monitor: bool = False  # a Prometheus Operator runs on the cluster
    site_ranges: tuple[str, ...] = ()  # the site's own network and routed ranges: reach every Slurm daemon
    # Linked sites whose clients need Slurm, with their ranges: ssh to the login pods, calls to slurmrestd.
    login_sources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    rest_sources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    mounts: list[SlurmMount] = field(default_factory=list)
    # The LoadBalancer addresses of the login pods and slurmrestd (slurm.login_address / rest_address); None: the
    # site's load balancer picks one.
    login_address: str | None = None
    rest_address: str | None = None
    depends_on: list[pulumi.Resource] = field(default_factory=list)


def reachable_service(address: str | None) -> dict:
    """The ``spec`` of a Slinky object's Service (the CRDs' ``service.spec``): the operator copies it into the Service
    it builds, clearing only ``externalIPs`` (loginbuilder/login_service.go, restapibuilder/restapi_service.go and
    common/service.go at v1.2.1). A LoadBalancer keeping the client's address, at ``address`` where the spec names
    one: ``loadBalancerIP``, as Lattice's other LoadBalancer Services on grid and edge sites
    (components/observability/cluster_metrics.py) — deprecated upstream, still what MetalLB honours."""
    spec = dict(REACHABLE_SERVICE)
    if address is not None:
        spec["loadBalancerIP"] = address
    return spec


def operator_values() -> dict:
    """The slurm-operator chart's values (helm/slurm-operator/values.yaml at v1.2.1): the CRDs come from their own
    chart (``crds.enabled`` stays false) and cert-manager signs the webhook's certificate."""
    return {"crds": {"enabled": False}, "certManager": {"enabled": True}}


def cert_manager_values() -> dict:
    """cert-manager's values (deploy/charts/cert-manager/values.yaml and values.schema.json at v1.21.1): with its
    CRDs, as Slinky's docs/installation.md installs it (``--set crds.enabled=true``)."""
    return {"crds": {"enabled": True}}


def sssd_conf(directory: SlurmDirectory) -> pulumi.Output[str]:
    """sssd.conf(5) / sssd-ldap(5) for the login pods: users and groups from the site's LDAP, the bind password
    inside (so the whole file is a secret); TLS required (StartTLS on ldap://), the server's certificate checked."""
    starttls = directory.uri.startswith("ldap://")
    return pulumi.Output.secret(directory.bind_password).apply(
        lambda password: "\n".join(
            [
                "[sssd]",
                "services = nss,pam",
                "domains = LDAP",
                "",
                "[nss]",
                "filter_groups = root,slurm",
                "filter_users = root,slurm",
                "",
                "[pam]",
                "",
                "[domain/LDAP]",
                "id_provider = ldap",
                "auth_provider = ldap",
                f"ldap_uri = {directory.uri}",
                f"ldap_search_base = {directory.search_base}",
                f"ldap_default_bind_dn = {directory.bind_dn}",
                "ldap_default_authtok_type = password",
                f"ldap_default_authtok = {password}",
                f"ldap_id_use_start_tls = {'true' if starttls else 'false'}",
                "ldap_tls_reqcert = demand",
                "cache_credentials = true",
                "enumerate = false",
                "",
            ]
        )
    )


class SlurmCluster(pulumi.ComponentResource):
    namespace: k8s.core.v1.Namespace
    cert_manager: k8s.helm.v3.Release
    crds: k8s.helm.v3.Release
    operator: k8s.helm.v3.Release
    config: k8s.core.v1.ConfigMap
    controller: k8s.apiextensions.CustomResource
    accounting: k8s.apiextensions.CustomResource
    login: k8s.apiextensions.CustomResource
    restapi: k8s.apiextensions.CustomResource
    nodesets: dict[str, k8s.apiextensions.CustomResource]
    network_policies: dict[str, k8s.networking.v1.NetworkPolicy]
    accounts: k8s.batch.v1.Job
    health: k8s.core.v1.ConfigMap  # the GPU health script (slurm_health.py)
    health_script: str
    files: dict[str, str]  # the configuration files Lattice writes, by name
    accounts_script: str

    def __init__(self, name: str, args: SlurmClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:scheduling:SlurmCluster", name, None, opts)
        labels = args.tags.for_component("SlurmCluster").k8s_labels()
        after = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.cert_manager = k8s.helm.v3.Release(
            f"{name}-cert-manager",
            name="cert-manager",
            chart=CERT_MANAGER_CHART,
            version=CERT_MANAGER_VERSION,
            namespace=CERT_MANAGER_NAMESPACE,
            create_namespace=True,
            values=cert_manager_values(),
            opts=after,
        )
        self.crds = k8s.helm.v3.Release(
            f"{name}-crds",
            name="slurm-operator-crds",
            chart=f"{SLINKY_CHARTS}/slurm-operator-crds",
            version=SLINKY_VERSION,
            opts=after,
        )
        self.operator = k8s.helm.v3.Release(
            f"{name}-operator",
            name="slurm-operator",
            chart=f"{SLINKY_CHARTS}/slurm-operator",
            version=SLINKY_VERSION,
            namespace=SLINKY_NAMESPACE,
            create_namespace=True,
            values=operator_values(),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.cert_manager, self.crds]),
        )
        # slurmd runs privileged (workerbuilder/worker_app.go: privileged, BPF / NET_ADMIN / SYS_ADMIN / SYS_NICE).
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=SLURM_NAMESPACE,
                labels={**labels, "pod-security.kubernetes.io/enforce": "privileged"},
            ),
            opts=after,
        )
        in_namespace = pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.namespace])

        def secret(suffix: str, secret_name: str, data: dict[str, pulumi.Input[str]]) -> k8s.core.v1.Secret:
            return k8s.core.v1.Secret(
                f"{name}-{suffix}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=secret_name, namespace=SLURM_NAMESPACE, labels=labels),
                string_data={key: pulumi.Output.secret(value) for key, value in data.items()},
                opts=in_namespace,
            )

        def random_key(suffix: str) -> pulumi.Output[str]:
            return random.RandomPassword(
                f"{name}-{suffix}", length=AUTH_KEY_LENGTH, special=False, opts=pulumi.ResourceOptions(parent=self)
            ).result

        auth = secret("auth-slurm", "slurm-auth-slurm", {SLURM_KEY: random_key("slurm-key")})
        jwt = secret("auth-jwt", "slurm-auth-jwt", {JWT_KEY: random_key("jwt-key")})
        database = secret("database", "slurm-database", {DB_PASSWORD_KEY: args.database.password})
        sssd = secret("sssd", "slurm-sssd-conf", {SSSD_KEY: sssd_conf(args.directory)})

        pools = [p.pool for p in args.pools]
        self.files = {
            "gres.conf": slurm_config.gres_conf(pools),
            "cgroup.conf": slurm_config.cgroup_conf(),
            "topology.yaml": slurm_config.topology_yaml(pools),
            "plugstack.conf": slurm_config.PLUGSTACK_CONF,
        }
        self.config = k8s.core.v1.ConfigMap(
            f"{name}-config-files",
            metadata=k8s.meta.v1.ObjectMetaArgs(name="slurm-config-files", namespace=SLURM_NAMESPACE, labels=labels),
            data=self.files,
            opts=in_namespace,
        )
        # The GPU health check: Slurm's HealthCheckProgram (mounted into slurmd's pods) and Prolog (shipped by
        # the operator through prologScriptRefs), slurm_health.py.
        self.health_script = slurm_health.health_script()
        self.health = k8s.core.v1.ConfigMap(
            f"{name}-gpu-health",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=slurm_health.HEALTH_CONFIG_MAP, namespace=SLURM_NAMESPACE, labels=labels
            ),
            data={slurm_health.HEALTH_SCRIPT: self.health_script},
            opts=in_namespace,
        )
        keys = {"slurmKeyRef": {"name": "slurm-auth-slurm", "key": SLURM_KEY}}
        keys["jwtKeyRef"] = {"name": "slurm-auth-jwt", "key": JWT_KEY}
        crs = pulumi.ResourceOptions(
            parent=self, depends_on=[*args.depends_on, self.operator, self.namespace, auth, jwt]
        )

        def custom(
            suffix: str, kind: str, object_name: str, spec: dict, extra: list
        ) -> k8s.apiextensions.CustomResource:
            return k8s.apiextensions.CustomResource(
                f"{name}-{suffix}",
                api_version=SLINKY_API,
                kind=kind,
                metadata={"name": object_name, "namespace": SLURM_NAMESPACE, "labels": labels},
                spec=spec,
                opts=pulumi.ResourceOptions.merge(crs, pulumi.ResourceOptions(depends_on=extra)),
            )

        self.accounting = custom(
            "accounting",
            "Accounting",
            CLUSTER,
            {
                **keys,
                "slurmdbd": {"image": IMAGES["slurmdbd"]},
                "storageConfig": {
                    "host": args.database.host,
                    "port": args.database.port,
                    "database": args.database.database,
                    "username": args.database.user,
                    "passwordKeyRef": {"name": "slurm-database", "key": DB_PASSWORD_KEY},
                },
            },
            [database],
        )
        metrics: dict = {"enabled": True}
        if args.service_monitor:
            metrics["serviceMonitor"] = {
                "enabled": True,
                "interval": "30s",
                "scrapeTimeout": "25s",
                "endpoints": [{"path": path} for path in METRICS_PATHS],
            }
        self.controller = custom(
            "controller",
            "Controller",
            CLUSTER,
            {
                **keys,
                "clusterName": args.cluster_name,
                "slurmctld": {"image": IMAGES["slurmctld"]},
                "accountingRef": {"name": CLUSTER},
                # The webhook reads the ConfigMap when the Controller is created: it comes first.
                "configFileRefs": [{"name": "slurm-config-files"}],
                "prologScriptRefs": [{"name": slurm_health.HEALTH_CONFIG_MAP}],
                "extraConf": slurm_config.slurm_conf_extra() + slurm_config.lines(slurm_health.SLURM_CONF),
                "persistence": copy.deepcopy(STATE_SAVE),
                "logfile": dict(HELPER),
                "metrics": metrics,
            },
            [self.config, self.health, self.accounting],
        )
        controller_ref = {"controllerRef": {"name": CLUSTER}}
        volumes = [{"name": f"site-{m.name}", **m.source} for m in args.mounts]
        mounts = [
            {"name": f"site-{m.name}", "mountPath": m.path, **({"readOnly": True} if m.read_only else {})}
            for m in args.mounts
        ]
        reachable_rest = bool(args.rest_sources) or args.rest_address is not None
        self.restapi = custom(
            "restapi",
            "RestApi",
            CLUSTER,
            {
                **controller_ref,
                "replicas": 1,
                "slurmrestd": {"image": IMAGES["slurmrestd"]},
                **({"service": {"spec": reachable_service(args.rest_address)}} if reachable_rest else {}),
            },
            [self.controller],
        )
        self.login = custom(
            "login",
            "LoginSet",
            CLUSTER,
            {
                **controller_ref,
                "replicas": args.login_replicas,
                "login": {"image": IMAGES["login"], **({"volumeMounts": mounts} if mounts else {})},
                "initconf": dict(HELPER),
                **({"template": {"spec": {"volumes": volumes}}} if volumes else {}),
                "sssdConfRef": {"name": "slurm-sssd-conf", "key": SSSD_KEY},
                # Reached from other sites over the links (their admit lists): a LoadBalancer, as the chart's default.
                "service": {"spec": reachable_service(args.login_address)},
            },
            [self.controller, sssd],
        )
        health_volume = {
            "name": "lattice-gpu-health",
            "configMap": {"name": slurm_health.HEALTH_CONFIG_MAP, "defaultMode": 0o755},
        }
        health_mount = {"name": "lattice-gpu-health", "mountPath": slurm_health.HEALTH_DIR, "readOnly": True}
        self.nodesets = {}
        for node_pool in args.pools:
            pool = node_pool.pool
            self.nodesets[pool.name] = custom(
                f"nodeset-{pool.name}",
                "NodeSet",
                pool.name,
                {
                    **controller_ref,
                    "scalingMode": "DaemonSet",
                    "extraConf": slurm_config.node_conf(pool),
                    "partition": {"enabled": True, "config": slurm_config.partition_conf(pool)},
                    "slurmd": {
                        "image": IMAGES["slurmd"],
                        "resources": {"limits": {NVIDIA_GPU: pool.gpus_per_node}},
                        "volumeMounts": [*mounts, health_mount],
                    },
                    "logfile": dict(HELPER),
                    "template": {
                        "spec": {
                            "nodeSelector": dict(node_pool.node_selector),
                            "tolerations": [dict(GPU_TOLERATION)],
                            "volumes": [*volumes, health_volume],
                        }
                    },
                },
                [self.controller],
            )
        self.network_policies = network_policies(name, args, labels, self)
        script = accounts_script(args.cluster_name, args.accounts, sum(p.gpus for p in args.pools))
        self.accounts_script = script
        self.accounts = accounts_job(name, script, labels, [self.controller, self.accounting], self)
        self.register_outputs({"cluster": args.cluster_name, "partitions": sorted(self.nodesets)})


def network_policies(
    name: str, args: SlurmClusterArgs, labels: dict[str, str], parent: pulumi.Resource
) -> dict[str, k8s.networking.v1.NetworkPolicy]:
    """Who reaches Slurm's pods: everything on the site (its ranges and every pod of the cluster: slurmd, srun,
    Prometheus), and from linked sites only ssh to the login pods (``login_from``) and slurmrestd's port
    (``rest_from``). A pod any policy selects admits only what some policy allows (Kubernetes NetworkPolicy), so
    slurmctld, slurmdbd and slurmd are not reachable across the links at all."""

    def policy(suffix: str, selector: dict, rules: list[dict]) -> k8s.networking.v1.NetworkPolicy:
        return k8s.networking.v1.NetworkPolicy(
            f"{name}-{suffix}",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"slurm-{suffix}", namespace=SLURM_NAMESPACE, labels=labels),
            spec={"podSelector": selector, "policyTypes": ["Ingress"], "ingress": rules},
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[parent.namespace]),
        )

    site = [{"ipBlock": {"cidr": cidr}} for cidr in args.site_ranges] + [{"namespaceSelector": {}}]
    policies = {"site": policy("site", {}, [{"from": site}])}
    for suffix, sources, app, port in (
        ("login-from-links", args.login_sources, "login", SSH_PORT),
        ("rest-from-links", args.rest_sources, "slurmrestd", SLURMRESTD_PORT),
    ):
        cidrs = [cidr for ranges in sources.values() for cidr in ranges]
        if cidrs:
            policies[suffix] = policy(
                suffix,
                {"matchLabels": {APP_LABEL: app}},
                [{"from": [{"ipBlock": {"cidr": c}} for c in cidrs], "ports": [{"protocol": "TCP", "port": port}]}],
            )
    return policies


def accounts_job(
    name: str, script: str, labels: dict[str, str], after: list[pulumi.Resource], parent: pulumi.Resource
) -> k8s.batch.v1.Job:
    """The Job that converges slurmdbd's accounts and QOS on the script's (``slurm_accounts.py``): sacctmgr from the
    slurmctld image, with the slurm.conf the operator writes (ConfigMap ``<controller>-config``:
    controller_keys.go ConfigKey) and the cluster's auth key, as root (an administrator to slurmdbd). A changed
    script is a new Job (its spec is immutable)."""
    from .slurm_accounts import ACCOUNTS_CONFIG_MAP, ACCOUNTS_SCRIPT

    script_map = k8s.core.v1.ConfigMap(
        f"{name}-accounts-script",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=ACCOUNTS_CONFIG_MAP, namespace=SLURM_NAMESPACE, labels=labels),
        data={ACCOUNTS_SCRIPT: script},
        opts=pulumi.ResourceOptions(parent=parent, depends_on=after),
    )
    return k8s.batch.v1.Job(
        f"{name}-accounts",
        metadata=k8s.meta.v1.ObjectMetaArgs(name="slurm-accounts", namespace=SLURM_NAMESPACE, labels=labels),
        spec=k8s.batch.v1.JobSpecArgs(
            backoff_limit=10,  # slurmdbd may still be starting: retried with the Job's back-off
            template=k8s.core.v1.PodTemplateSpecArgs(
                # The script's digest: a changed script changes the Job's spec, so Pulumi replaces (reruns) it.
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    labels=labels, annotations={SCRIPT_DIGEST: hashlib.sha256(script.encode()).hexdigest()}
                ),
                spec=k8s.core.v1.PodSpecArgs(
                    restart_policy="Never",
                    containers=[
                        k8s.core.v1.ContainerArgs(
                            name="sacctmgr",
                            image=IMAGES["slurmctld"],
                            command=["/bin/bash", f"/lattice/{ACCOUNTS_SCRIPT}"],
                            volume_mounts=[
                                k8s.core.v1.VolumeMountArgs(name="slurm-etc", mount_path="/etc/slurm", read_only=True),
                                k8s.core.v1.VolumeMountArgs(name="script", mount_path="/lattice", read_only=True),
                            ],
                        )
                    ],
                    volumes=[
                        k8s.core.v1.VolumeArgs(
                            name="slurm-etc",
                            projected=k8s.core.v1.ProjectedVolumeSourceArgs(
                                default_mode=0o600,
                                sources=[
                                    k8s.core.v1.VolumeProjectionArgs(
                                        config_map=k8s.core.v1.ConfigMapProjectionArgs(
                                            name=f"{CLUSTER}-config",
                                            items=[k8s.core.v1.KeyToPathArgs(key="slurm.conf", path="slurm.conf")],
                                        )
                                    ),
                                    k8s.core.v1.VolumeProjectionArgs(
                                        secret=k8s.core.v1.SecretProjectionArgs(
                                            name="slurm-auth-slurm",
                                            items=[k8s.core.v1.KeyToPathArgs(key=SLURM_KEY, path=SLURM_KEY)],
                                        )
                                    ),
                                ],
                            ),
                        ),
                        k8s.core.v1.VolumeArgs(
                            name="script",
                            config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=ACCOUNTS_CONFIG_MAP),
                        ),
                    ],
                ),
            ),
        ),
        opts=pulumi.ResourceOptions(
            parent=parent, depends_on=[*after, script_map], replace_on_changes=["spec"], delete_before_replace=True
        ),
    )
