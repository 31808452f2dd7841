"""The Kubernetes extended resources accelerators are requested by, and a team's quota over all of them.

A quota that names only ``nvidia.com/gpu`` leaves Neuron devices and TPU chips unlimited: a team could take a
site's Trainium pool whole. Extended resources are quota'd on requests only (Kubernetes forbids overcommit
for them, so requests equal limits).
"""

from __future__ import annotations

NVIDIA_GPU = "nvidia.com/gpu"
# The Neuron device plugin advertises devices under two names (``neuron`` is the older alias of
# ``neurondevice``) and NeuronCores one by one; a pod may ask for any of the three.
NEURON_DEVICE = "aws.amazon.com/neuron"
NEURON_DEVICE_ALIAS = "aws.amazon.com/neurondevice"
NEURON_CORE = "aws.amazon.com/neuroncore"
TPU_CHIP = "google.com/tpu"
# The fabric devices a training pod asks for beside its accelerators: the EFA device plugin's interfaces, and the
# NVIDIA RDMA shared device plugin's HCAs under the resource name Lattice's NicClusterPolicy configures.
EFA_DEVICE = "vpc.amazonaws.com/efa"
RDMA_SHARED_DEVICE = "rdma_shared_device_a"
RDMA_DEVICE = f"rdma/{RDMA_SHARED_DEVICE}"


def accelerator_quota(accelerators: int, neuron_cores_per_device: int) -> dict[str, str]:
    """ResourceQuota ``hard`` entries capping a team at ``accelerators`` of every kind on a site.

    NeuronCores count as the cores of that many devices (``neuron_cores_per_device``: the most any Neuron
    pool of the site has), so a team cannot pass its device quota by asking for cores instead.
    """
    counts = {
        NVIDIA_GPU: accelerators,
        NEURON_DEVICE: accelerators,
        NEURON_DEVICE_ALIAS: accelerators,
        NEURON_CORE: accelerators * neuron_cores_per_device,
        TPU_CHIP: accelerators,
    }
    return {f"requests.{resource}": str(count) for resource, count in counts.items()}
