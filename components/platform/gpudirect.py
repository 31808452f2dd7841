"""GPUDirect on GKE, end to end: the Kubernetes objects that let pods use a GPU machine's extra NICs.

The VPCs, subnets and node networks of ``GcpGpuFabric`` give every node its GPU NICs; without the objects
below no pod can attach them and NCCL falls back to the primary gVNIC. Following Google's cluster-toolkit
(``modules/compute/gke-node-pool/gpu_direct.tf`` at v1.95.0, the ``gke-a3-*`` / ``gke-a4`` examples, and
``modules/scheduler/gke-cluster/templates``), per site:

- per GPU NIC a ``GKENetworkParamSet`` (its VPC and subnet, ``deviceMode`` ``NetDevice`` for TCPX / TCPXO,
  ``RDMA`` for the CX-7 NICs of A3 Ultra / A4) and a ``Network`` of type ``Device`` referring to it; the
  second gVNIC of RDMA machines gets a ``NetDevice`` pair as well. GKE matches them to node NICs by VPC and
  subnet; pods name them in ``networking.gke.io/interfaces`` (``GcpGpuNodePool.pod_annotations``).
- GPUDirect-TCPX (A3 High): the NCCL TCPX plugin installer DaemonSet; GPUDirect-TCPXO (A3 Mega): the TCPXO
  installer; both with the NRI device injector, which hands the pods' ``tcpx(o)-daemon`` sidecar its devices.
- GPUDirect-RDMA (A3 Ultra, A4): the NCCL gIB plugin installer.

Images are pinned (GoogleCloudPlatform/container-engine-accelerators at the commits cluster-toolkit pins:
204a57cb for TCPX and the NRI injector, a32cd515 for TCPXO; cluster-toolkit's own template for gIB v1.1.0).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..catalog import GcpMachineType, GpuDirect
from ..network.gcp_gpu_fabric import fabric_prefix
from ..tagging import TagContext

NETWORKING_API = "networking.gke.io/v1"
NAMESPACE = "kube-system"
PAUSE_IMAGE = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
TCPX_INSTALLER_IMAGE = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9"
TCPXO_INSTALLER_IMAGE = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15"
RDMA_INSTALLER_IMAGE = "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.0"
NRI_INJECTOR_IMAGE = (
    "gcr.io/gke-release/nri-device-injector@sha256:6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970"
)
# The receive-datapath sidecar a TCPX / TCPXO training pod runs next to its trainer (exported per pool).
DAEMON_IMAGE = {
    GpuDirect.TCPX: "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12",
    GpuDirect.TCPXO: "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21",
}
# Helper images of the installers' setup steps (cluster-toolkit leaves them untagged; pinned here).
SHELL_IMAGE = "ubuntu:24.04"
SYSCTL_IMAGE = "alpine:3.22"
DEVICE_MODE = {GpuDirect.TCPX: "NetDevice", GpuDirect.TCPXO: "NetDevice", GpuDirect.RDMA: "RDMA"}
NIC_PREFIX = {GpuDirect.TCPX: "nic", GpuDirect.TCPXO: "nic", GpuDirect.RDMA: "rdma"}
# Pod interfaces: eth0 stays on the default network; TCPX/TCPXO NICs follow as eth1…, RDMA NICs as eth2…
# (cluster-toolkit's examples; an RDMA machine's second gVNIC is not attached to pods).
FIRST_POD_INTERFACE = {GpuDirect.TCPX: 1, GpuDirect.TCPXO: 1, GpuDirect.RDMA: 2}


@dataclass(frozen=True)
class FabricNics:
    """One ``GcpGpuFabric`` as the cluster sees it: which machine, which zone, its VPCs and subnets."""

    machine: GcpMachineType
    zone: str
    gpu_nics: list[tuple[pulumi.Input[str], pulumi.Input[str]]]  # (network name, subnet name), NIC order
    extra_gvnics: list[tuple[pulumi.Input[str], pulumi.Input[str]]] = field(default_factory=list)

    @property
    def prefix(self) -> str:
        return fabric_prefix(self.machine, self.zone)

    def gpu_network_names(self) -> list[str]:
        return [f"{self.prefix}-{NIC_PREFIX[self.machine.gpudirect]}{i}" for i in range(len(self.gpu_nics))]

    def gvnic_network_names(self) -> list[str]:
        return [f"{self.prefix}-gvnic{i + 1}" for i in range(len(self.extra_gvnics))]

    def pod_annotations(self) -> dict[str, str]:
        """What a training pod on this fabric's nodes sets to get every GPU NIC (see README: GPUDirect)."""
        first = FIRST_POD_INTERFACE[self.machine.gpudirect]
        interfaces = [{"interfaceName": "eth0", "network": "default"}] + [
            {"interfaceName": f"eth{first + i}", "network": name} for i, name in enumerate(self.gpu_network_names())
        ]
        return {
            "networking.gke.io/default-interface": "eth0",
            "networking.gke.io/interfaces": json.dumps(interfaces, separators=(",", ":")),
        }

    @property
    def sidecar_image(self) -> str | None:
        """The tcpx(o)-daemon image a training pod runs beside its trainer, for TCPX / TCPXO machines."""
        return DAEMON_IMAGE.get(self.machine.gpudirect)


def fabric_nics(fabric) -> FabricNics:
    """A ``GcpGpuFabric`` (or a Shared VPC host's ``HostGpuFabric``) as the cluster sees it."""
    return FabricNics(
        machine=fabric.machine,
        zone=fabric.zone,
        gpu_nics=fabric.gpu_nic_names(),
        extra_gvnics=fabric.gvnic_names(),
    )


@dataclass
class GkeGpuDirectArgs:
    fabrics: list[FabricNics]
    tags: TagContext
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class GkeGpuDirect(pulumi.ComponentResource):
    param_sets: dict[str, k8s.apiextensions.CustomResource]
    networks: dict[str, k8s.apiextensions.CustomResource]
    daemon_sets: dict[str, k8s.apps.v1.DaemonSet]

    def __init__(self, name: str, args: GkeGpuDirectArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:platform:GkeGpuDirect", name, None, opts)
        self._labels = args.tags.for_component("GkeGpuDirect").k8s_labels()
        self._opts = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.param_sets, self.networks, self.daemon_sets = {}, {}, {}
        for fabric in args.fabrics:
            mode = DEVICE_MODE[fabric.machine.gpudirect]
            for network_name, (vpc, subnet) in zip(fabric.gpu_network_names(), fabric.gpu_nics, strict=True):
                self._network(name, network_name, vpc, subnet, mode)
            for network_name, (vpc, subnet) in zip(fabric.gvnic_network_names(), fabric.extra_gvnics, strict=True):
                self._network(name, network_name, vpc, subnet, "NetDevice")

        flavours = {fabric.machine.gpudirect: set() for fabric in args.fabrics}
        for fabric in args.fabrics:
            flavours[fabric.machine.gpudirect].add(fabric.machine.gke_accelerator)
        if GpuDirect.TCPX in flavours:
            self._installer(name, "nccl-tcpx-installer", sorted(flavours[GpuDirect.TCPX]), _tcpx_installer())
        if GpuDirect.TCPXO in flavours:
            self._installer(
                name, "nccl-tcpxo-installer", sorted(flavours[GpuDirect.TCPXO]), _tcpxo_prepare(), _tcpxo_installer()
            )
        injected = sorted(flavours.get(GpuDirect.TCPX, set()) | flavours.get(GpuDirect.TCPXO, set()))
        if injected:
            self._nri_device_injector(name, injected)
        rdma = [fabric.machine for fabric in args.fabrics if fabric.machine.gpudirect is GpuDirect.RDMA]
        if rdma:
            self._rdma_installer(name, rdma)
        self.register_outputs({"networks": sorted(self.networks)})

    def _network(self, name: str, network_name: str, vpc, subnet, device_mode: str) -> None:
        self.param_sets[network_name] = k8s.apiextensions.CustomResource(
            f"{name}-{network_name}-params",
            api_version=NETWORKING_API,
            kind="GKENetworkParamSet",
            metadata={"name": network_name, "labels": self._labels},
            spec={"vpc": vpc, "vpcSubnet": subnet, "deviceMode": device_mode},
            opts=self._opts,
        )
        self.networks[network_name] = k8s.apiextensions.CustomResource(
            f"{name}-{network_name}",
            api_version=NETWORKING_API,
            kind="Network",
            metadata={"name": network_name, "labels": self._labels},
            spec={
                "type": "Device",
                "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": network_name},
            },
            opts=pulumi.ResourceOptions.merge(
                self._opts, pulumi.ResourceOptions(depends_on=[self.param_sets[network_name]])
            ),
        )

    def _daemon_set(self, name: str, app: str, pod_spec: dict) -> None:
        labels = {"k8s-app": app}
        self.daemon_sets[app] = k8s.apps.v1.DaemonSet(
            f"{name}-{app}",
            metadata={"name": app, "namespace": NAMESPACE, "labels": {**self._labels, **labels}},
            spec={
                "selector": {"matchLabels": labels},
                "updateStrategy": {"type": "RollingUpdate"},
                "template": {
                    "metadata": {"labels": {"name": app, **labels}},
                    "spec": {
                        "priorityClassName": "system-node-critical",
                        "tolerations": [{"operator": "Exists"}],
                        "hostNetwork": True,
                        "hostPID": True,
                        **pod_spec,
                    },
                },
            },
            opts=self._opts,
        )

    def _installer(self, name: str, app: str, accelerators: list[str], *init_containers: dict) -> None:
        self._daemon_set(
            name,
            app,
            {
                "affinity": _on_accelerators(accelerators),
                "volumes": [
                    _host_path("var-lib", "/var/lib"),
                    _host_path("library-dir-host", "/home/kubernetes/bin"),
                ],
                "initContainers": list(init_containers),
                "containers": [{"name": "pause", "image": PAUSE_IMAGE}],
            },
        )

    def _nri_device_injector(self, name: str, accelerators: list[str]) -> None:
        self._daemon_set(
            name,
            "device-injector",
            {
                "affinity": _on_accelerators(accelerators),
                "volumes": [_host_path("nri", "/var/run/nri"), _host_path("dev", "/dev")],
                "containers": [
                    {
                        "name": "device-injector",
                        "image": NRI_INJECTOR_IMAGE,
                        "resources": {"requests": {"cpu": "150m"}},
                        "securityContext": {"privileged": True},
                        "volumeMounts": [
                            {"name": "dev", "mountPath": "/dev"},
                            {"name": "nri", "mountPath": "/var/run/nri"},
                        ],
                    }
                ],
            },
        )

    def _rdma_installer(self, name: str, machines: list[GcpMachineType]) -> None:
        # Only on RDMA machines: elsewhere the per-NIC sysctls fail and the gIB plugin would overwrite the
        # NCCL plugin the TCPX / TCPXO installers put in the same host directory.
        nics = max(machine.gpu_nic_count for machine in machines)
        martians = " ".join(f"sysctl -w net.ipv4.conf.gpu{i}rdma0.log_martians=0;" for i in range(nics))
        self._daemon_set(
            name,
            "nccl-rdma-installer",
            {
                "affinity": _on_accelerators(sorted({machine.gke_accelerator for machine in machines})),
                "volumes": [
                    {
                        "name": "library-dir-host",
                        "hostPath": {"path": "/home/kubernetes/bin/nvidia/lib64", "type": "DirectoryOrCreate"},
                    },
                    _host_path("gib", "/home/kubernetes/bin/gib"),
                ],
                "initContainers": [
                    {
                        "name": "disable-log-martian",
                        "image": SYSCTL_IMAGE,
                        "securityContext": {"privileged": True},
                        "command": ["/bin/sh", "-c", martians],
                    },
                    {
                        "name": "nccl-rdma-installer",
                        "image": RDMA_INSTALLER_IMAGE,
                        "resources": {"requests": {"cpu": "150m"}},
                        "securityContext": {"privileged": True},
                        "volumeMounts": [
                            {"name": "library-dir-host", "mountPath": "/usr/local/home/kubernetes/bin/nvidia/lib64"},
                            {"name": "gib", "mountPath": "/usr/local/home/kubernetes/bin/gib"},
                        ],
                        "command": ["/bin/sh", "-c"],
                        "args": [
                            "set -ex\n"
                            "/scripts/container_entry.sh install --install-nccl\n"
                            "cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64\n"
                            "cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib\n"
                            'echo "installation finishes"\n'
                        ],
                    },
                ],
                "containers": [{"name": "pause", "image": PAUSE_IMAGE}],
            },
        )


def _host_path(name: str, path: str) -> dict:
    return {"name": name, "hostPath": {"path": path}}


def _on_accelerators(accelerators: list[str]) -> dict:
    return _node_affinity("cloud.google.com/gke-accelerator", accelerators)


def _node_affinity(label: str, values: list[str]) -> dict:
    terms = [{"matchExpressions": [{"key": label, "operator": "In", "values": values}]}]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def _nccl_plugin_installer(container: str, image: str, plugin_dir: str, chmod: bool) -> dict:
    script = ["set -ex"]
    if chmod:
        script.append("chmod 755 /scripts/container_entry.sh")
    script += [
        "/scripts/container_entry.sh install --install-nccl",
        "mkdir -p /usr/local/nvidia/lib64",
        f"cp -r {plugin_dir}/lib64/. /usr/local/nvidia/lib64",
        'echo "installation finishes"',
    ]
    return {
        "name": container,
        "image": image,
        "resources": {"requests": {"cpu": "150m"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [
            {"name": "var-lib", "mountPath": "/var/lib"},
            {"name": "library-dir-host", "mountPath": "/usr/local"},
        ],
        "command": ["/bin/sh", "-c"],
        "args": ["\n".join(script) + "\n"],
    }


def _tcpx_installer() -> dict:
    return _nccl_plugin_installer("nccl-tcpx-installer", TCPX_INSTALLER_IMAGE, "/var/lib/tcpx", chmod=False)


def _tcpxo_installer() -> dict:
    return _nccl_plugin_installer("nccl-tcpxo-installer", TCPXO_INSTALLER_IMAGE, "/var/lib/tcpxo", chmod=True)


def _tcpxo_prepare() -> dict:
    """Runs first: opens TCP on the host and bind-mounts the TCPXO aperture devices for the NRI injector."""
    script = (
        "/sbin/iptables -I INPUT -p tcp -m tcp -j ACCEPT && modprobe import-helper\n"
        "sudo mkdir -p /dev/aperture_devices\n"
        "while IFS= read -r line; do\n"
        "  BDF=$( echo \"$line\" | awk '{print $1}' );\n"
        '  target_aperture_path="/dev/aperture_devices/$BDF"\n'
        '  host_aperture_device=$(readlink -f "/sys/bus/pci/devices/$BDF");\n'
        "  sudo mkdir -p $target_aperture_path;\n"
        "  sudo umount -R $target_aperture_path;\n"
        "  sudo mount --bind $host_aperture_device $target_aperture_path;\n"
        "done < <(lspci -nn -D | grep '1ae0:0084')\n"
        "if [ -d /dev/aperture_devices ]; then\n"
        "    chmod -R a+r /dev/aperture_devices/\n"
        "    chmod a+rw /dev/aperture_devices/*/resource*\n"
        "fi\n"
    )
    return {
        "name": "pre-installation",
        "image": SHELL_IMAGE,
        "securityContext": {"privileged": True},
        "command": ["nsenter", "-at", "1", "--", "sh", "-c"],
        "args": [script],
    }
