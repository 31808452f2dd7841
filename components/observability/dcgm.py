"""The DCGM exporter's counters file Lattice ships, and the GPU operator values that point the exporter at it.

The GPU operator Lattice pins (v25.3.4, DCGM exporter 4.3.1-4.4.0) runs the exporter with the image's
``/etc/dcgm-exporter/dcp-metrics-included.csv``, which leaves the throttle ``*_VIOLATION``, ECC, retired-page and
NVLink error counters commented out, and its ServiceMonitor is off by default (gpu-operator
deployments/gpu-operator/values.yaml and assets/state-dcgm-exporter/0900_daemonset.yaml at v25.3.4). Every health
alert Lattice writes reads one of those counters, so Lattice ships its own file: every counter the default enables,
plus the ones below. With ``dcgmExporter.config.name`` set the operator mounts that ConfigMap's ``dcgm-metrics.csv``
and points ``DCGM_EXPORTER_COLLECTORS`` at it (controllers/object_controls.go); with ``create: true`` and ``data``
the chart makes the ConfigMap in its own namespace (templates/dcgm_exporter_config.yaml).
"""

from __future__ import annotations

# ConfigMap name (in the gpu-operator namespace) the chart creates from ``data`` and the operator mounts.
COUNTERS_CONFIGMAP = "lattice-dcgm-metrics"

# (DCGM field, Prometheus type, help) exactly as the upstream file spells them (a test holds each line to it).
DEFAULT_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes."),
    ("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    ("DCGM_FI_DRIVER_VERSION", "label", "Driver Version"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    (
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "gauge",
        "Ratio of cycles the device memory interface is active sending or receiving data.",
    ),
    (
        "DCGM_FI_PROF_PCIE_TX_BYTES",
        "gauge",
        "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in "
        "bytes per second.",
    ),
    (
        "DCGM_FI_PROF_PCIE_RX_BYTES",
        "gauge",
        "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes "
        "per second.",
    ),
)
# Commented out upstream, read by Lattice's alerts and fleet view: throttling, ECC, page retirement (pre-Ampere
# GPUs; Ampere and newer remap rows instead), NVLink errors, and SM activity (a better "is it training" than
# GPU_UTIL, which counts any kernel running).
HEALTH_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in us)."),
    ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in us)."),
    ("DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "counter", "Throttling duration due to sync-boost constraints (in us)."),
    ("DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", "counter", "Throttling duration due to board limit constraints (in us)."),
    (
        "DCGM_FI_DEV_RELIABILITY_VIOLATION",
        "counter",
        "Throttling duration due to reliability constraints (in us).",
    ),
    ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter", "Total number of single-bit persistent ECC errors."),
    ("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors."),
    ("DCGM_FI_DEV_RETIRED_SBE", "counter", "Total number of retired pages due to single-bit errors."),
    ("DCGM_FI_DEV_RETIRED_DBE", "counter", "Total number of retired pages due to double-bit errors."),
    ("DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement."),
    ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors."),
    ("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink data CRC errors."),
    ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries."),
    ("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink recovery errors."),
    ("DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned."),
    ("DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM."),
)
COUNTERS = DEFAULT_COUNTERS + HEALTH_COUNTERS


def counters_csv() -> str:
    """The counters file in the exporter's format: ``field, type, help`` per line."""
    header = "# Lattice's DCGM counters: the GPU operator's default set, plus the health counters its alerts read.\n"
    return header + "".join(f"{field}, {kind}, {text}\n" for field, kind, text in COUNTERS)


def enabled_fields() -> frozenset[str]:
    return frozenset(field for field, _, _ in COUNTERS)


def dcgm_exporter_values(service_monitor: bool) -> dict:
    """The GPU operator chart's ``dcgmExporter`` values: Lattice's counters file, and the ServiceMonitor where a
    Prometheus Operator runs on the cluster (the chart's interval, 15 s, and ``honorLabels: false`` kept: the
    exporter labels each GPU with the namespace and pod it is assigned to, which Prometheus then keeps as
    ``exported_namespace`` / ``exported_pod`` beside the exporter's own)."""
    return {
        "enabled": True,
        "config": {"name": COUNTERS_CONFIGMAP, "create": True, "data": counters_csv()},
        "serviceMonitor": {"enabled": service_monitor},
    }
