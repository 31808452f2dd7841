"""GPU-to-GPU bandwidth inside one node: NVLink / NVSwitch, per GPU model.

NVIDIA states each SXM GPU's NVLink bandwidth as the total of both directions (the product pages: V100 SXM2
"300GB/s", A100 "600GB/s", H100 SXM "900GB/s", H200 "900GB/s", HGX B200 / B300 "1.8TB/s" per GPU). A GPU sends
at half that while it receives at the other half, so the sizing uses half: what one rank of a ring all-reduce
pushes to its neighbour. On the cloud 8-GPU types (p4d / p4de, p5 / p5e / p5en, p6-b200 / p6-b300, GCP a2 / a3
/ a4) every GPU reaches every other through NVSwitch at that rate; p3 / p3dn's V100s are an NVLink hybrid cube
mesh, where some pairs share fewer links (the figure is the GPU's total, an upper bound there).

PCIe-only GPUs (T4, A10G, L4, L40S, the RTX PRO parts) and Neuron / TPU devices have no row: the catalog does
not hold their peer-to-peer figure, and ``lattice size`` says so rather than guess one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NvLink:
    accelerator: str  # as the catalog names the model (components/catalog/accelerators.py)
    total_gbytes_per_second: float  # NVIDIA's figure: both directions together, per GPU
    source: str

    @property
    def send_gbps(self) -> float:
        """What one GPU sends per second to its peers, in Gbit/s (half the two-way total)."""
        return self.total_gbytes_per_second / 2 * 8


NVLINK: dict[str, NvLink] = {
    row.accelerator: row
    for row in (
        NvLink("V100", 300, "https://www.nvidia.com/en-us/data-center/v100/"),
        NvLink("A100", 600, "https://www.nvidia.com/en-us/data-center/a100/"),
        NvLink("A100 80GB", 600, "https://www.nvidia.com/en-us/data-center/a100/"),
        NvLink("H100", 900, "https://www.nvidia.com/en-us/data-center/h100/"),
        NvLink("H200", 900, "https://www.nvidia.com/en-us/data-center/h200/"),
        NvLink("B200", 1800, "https://www.nvidia.com/en-us/data-center/hgx/"),
        NvLink("B300", 1800, "https://www.nvidia.com/en-us/data-center/hgx/"),
    )
}


def nvlink(accelerator: str | None, accelerators_per_node: int) -> NvLink | None:
    """The NVLink row of a node's GPUs; None for a single-GPU node or a GPU the table does not hold."""
    if accelerator is None or accelerators_per_node < 2:
        return None
    return NVLINK.get(accelerator)
