"""What each accelerator model can compute in: the number formats training and fine-tuning choose between.

NVIDIA GPUs are judged by compute capability, with NVIDIA Transformer Engine's support matrix as the rule
("BF16 requires compute capability 8.0 or higher"; FP8 "requires compute capability 8.9 or higher") and each
GPU's compute capability from NVIDIA's CUDA GPU list. So bf16 needs Ampere or later; fp8 needs Ada Lovelace
(L4, L40S), Hopper or Blackwell — not A100, A10G, V100, T4 or P4. Neuron devices follow the Neuron SDK's data
types per NeuronCore version (v1, Inferentia: FP32 / FP16 / BF16; v2 and later: also configurable FP8), TPUs
Google's per-generation specification tables (v5p and v6e list an FP8 peak equal to their BF16 peak: they take
FP8 without running it faster; v4 and v5e list BF16 and INT8 only).

Integer formats (int8, int4) hold frozen, quantized weights that are dequantized for compute (QLoRA,
LLM.int8()), so they need no tensor-core support of their own; fp16 and fp32 run everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from .lookup import lookup

TRANSFORMER_ENGINE_MATRIX = "https://nvidia.github.io/TransformerEngine/support_matrix.html"
CUDA_GPUS = "https://developer.nvidia.com/cuda-gpus"
NEURON_DATA_TYPES = (
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-features/data-types.html"
)
NEURON_CORE_V2 = (
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/neuron-core-v2.html"
)
NEURON_CORE_V3 = (
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/arch/neuron-hardware/neuron-core-v3.html"
)
TPU7X_TABLE = "https://cloud.google.com/tpu/docs/tpu7x"

BF16_MIN_COMPUTE_CAPABILITY = 8.0
FP8_MIN_COMPUTE_CAPABILITY = 8.9


@dataclass(frozen=True)
class AcceleratorModel:
    name: str  # as the catalog tables name it: the API's GpuInfo / NeuronInfo name, Google's GPU model
    architecture: str
    bf16: bool
    fp8: bool
    source: str
    compute_capability: float | None = None  # NVIDIA GPUs only

    def supports(self, precision: str) -> bool:
        """Whether the accelerator computes in ``precision`` (integer formats are storage, see the docstring)."""
        return {"bf16": self.bf16, "fp8": self.fp8}.get(precision, True)

    @property
    def precisions(self) -> tuple[str, ...]:
        return tuple(p for p in ("fp32", "bf16", "fp16", "fp8") if self.supports(p))


def _nvidia(name: str, architecture: str, compute_capability: float) -> AcceleratorModel:
    return AcceleratorModel(
        name=name,
        architecture=architecture,
        bf16=compute_capability >= BF16_MIN_COMPUTE_CAPABILITY,
        fp8=compute_capability >= FP8_MIN_COMPUTE_CAPABILITY,
        source=f"{CUDA_GPUS} (compute capability {compute_capability:g}); {TRANSFORMER_ENGINE_MATRIX}",
        compute_capability=compute_capability,
    )


ACCELERATOR_MODELS: dict[str, AcceleratorModel] = {
    model.name: model
    for model in (
        _nvidia("P4", "Pascal", 6.1),
        _nvidia("V100", "Volta", 7.0),
        _nvidia("T4", "Turing", 7.5),
        _nvidia("T4g", "Turing", 7.5),  # the T4 of Graviton g5g instances
        _nvidia("A100", "Ampere", 8.0),
        _nvidia("A100 80GB", "Ampere", 8.0),
        _nvidia("A10G", "Ampere", 8.6),  # AWS's A10 variant (g5)
        _nvidia("L4", "Ada Lovelace", 8.9),
        _nvidia("L40S", "Ada Lovelace", 8.9),
        _nvidia("H100", "Hopper", 9.0),
        _nvidia("H200", "Hopper", 9.0),
        _nvidia("B200", "Blackwell", 10.0),
        _nvidia("B300", "Blackwell", 10.3),
        _nvidia("RTX PRO 4500", "Blackwell", 12.0),
        _nvidia("RTX PRO Server 6000", "Blackwell", 12.0),
        AcceleratorModel("Inferentia", "NeuronCore-v1", bf16=True, fp8=False, source=NEURON_DATA_TYPES),
        AcceleratorModel("Inferentia2", "NeuronCore-v2", bf16=True, fp8=True, source=NEURON_CORE_V2),
        AcceleratorModel("Trainium", "NeuronCore-v2", bf16=True, fp8=True, source=NEURON_CORE_V2),
        AcceleratorModel("Trainium2", "NeuronCore-v3", bf16=True, fp8=True, source=NEURON_CORE_V3),
        AcceleratorModel("TPU v4", "TPU v4", bf16=True, fp8=False, source="https://cloud.google.com/tpu/docs/v4"),
        AcceleratorModel("TPU v5e", "TPU v5e", bf16=True, fp8=False, source="https://cloud.google.com/tpu/docs/v5e"),
        AcceleratorModel("TPU v5p", "TPU v5p", bf16=True, fp8=True, source=TPU7X_TABLE),
        AcceleratorModel("TPU v6e", "TPU v6e (Trillium)", bf16=True, fp8=True, source=TPU7X_TABLE),
        AcceleratorModel("TPU v7", "TPU7x (Ironwood)", bf16=True, fp8=True, source=TPU7X_TABLE),
    )
}


def accelerator_model(name: str) -> AcceleratorModel:
    return lookup(
        ACCELERATOR_MODELS,
        name,
        kind="accelerator model",
        hint="`lattice catalog` lists the machines of every accelerator Lattice knows.",
    )


def precision_problem(accelerator: str, precision: str) -> str | None:
    """Why ``accelerator`` cannot compute in ``precision``, with the fix; None when it can."""
    model = accelerator_model(accelerator)
    if model.supports(precision):
        return None
    if precision == "bf16":
        need = "Ampere (A100, A10G) or later"
    else:
        need = "Ada Lovelace (L4, L40S), Hopper (H100, H200) or Blackwell"
    usable = ", ".join(model.precisions)
    return (
        f"{model.name} ({model.architecture}) has no {precision}: it needs {need}; train in one of {usable} "
        f"on it, or pick a newer accelerator"
    )


# --- peak dense throughput: what the vendor says one accelerator computes, without structured sparsity --------------

NVIDIA_DATASHEETS = {  # the product pages' specification tables (each links the datasheet PDF)
    "H100": "https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM)",
    "H200": "https://www.nvidia.com/en-us/data-center/h200/ (H200 SXM)",
    "A100": "https://www.nvidia.com/en-us/data-center/a100/ (A100 SXM)",
    "L4": "https://www.nvidia.com/en-us/data-center/l4/",
    "L40S": "https://www.nvidia.com/en-us/data-center/l40s/",
    "T4": "https://www.nvidia.com/en-us/data-center/tesla-t4/",
    "V100": "https://www.nvidia.com/en-us/data-center/v100/ (V100 SXM2)",
    "B200": "https://www.nvidia.com/en-us/data-center/hgx/ (HGX B200, 8 GPUs: figures with sparsity, halved and "
    "divided by 8)",
}


@dataclass(frozen=True)
class PeakThroughput:
    """Dense peak TFLOPS of one accelerator (one GPU, one Trainium or TPU chip) per compute precision.

    Vendors print tensor-core figures with 2:4 structured sparsity (marked *), which training does not use: the
    dense figure, half of it, is what model FLOPs utilisation is measured against. fp32 is the non-tensor FP32
    rate (frameworks keep fp32 matrix products off TF32 unless told)."""

    tflops: dict[str, float]
    source: str

    def at(self, precision: str) -> float | None:
        return self.tflops.get(precision)


PEAK_DENSE: dict[str, PeakThroughput] = {
    # H100 SXM: FP32 67, BF16 / FP16 1,979*, FP8 3,958* TFLOPS.
    "H100": PeakThroughput({"fp32": 67.0, "bf16": 989.5, "fp16": 989.5, "fp8": 1979.0}, NVIDIA_DATASHEETS["H100"]),
    # H200 SXM: the H100's compute (FP32 67, BF16 1,979*, FP8 3,958*) with more and faster memory.
    "H200": PeakThroughput({"fp32": 67.0, "bf16": 989.5, "fp16": 989.5, "fp8": 1979.0}, NVIDIA_DATASHEETS["H200"]),
    # A100 SXM 40 GB and 80 GB: FP32 19.5, BF16 / FP16 312 (624*) TFLOPS.
    "A100": PeakThroughput({"fp32": 19.5, "bf16": 312.0, "fp16": 312.0}, NVIDIA_DATASHEETS["A100"]),
    "A100 80GB": PeakThroughput({"fp32": 19.5, "bf16": 312.0, "fp16": 312.0}, NVIDIA_DATASHEETS["A100"]),
    # L4: FP32 30.3, BF16 / FP16 242*, FP8 485* TFLOPS.
    "L4": PeakThroughput({"fp32": 30.3, "bf16": 121.0, "fp16": 121.0, "fp8": 242.5}, NVIDIA_DATASHEETS["L4"]),
    # L40S: FP32 91.6, BF16 / FP16 362.05 (733*), FP8 733 (1,466*) TFLOPS.
    "L40S": PeakThroughput({"fp32": 91.6, "bf16": 362.05, "fp16": 362.05, "fp8": 733.0}, NVIDIA_DATASHEETS["L40S"]),
    # T4: FP32 8.1, mixed-precision FP16 65 TFLOPS (no bf16).
    "T4": PeakThroughput({"fp32": 8.1, "fp16": 65.0}, NVIDIA_DATASHEETS["T4"]),
    # V100 SXM2: FP32 15.7, tensor (FP16) 125 TFLOPS.
    "V100": PeakThroughput({"fp32": 15.7, "fp16": 125.0}, NVIDIA_DATASHEETS["V100"]),
    # HGX B200 (8 GPUs): FP16 / BF16 36 PFLOPS*, FP8 72 PFLOPS*, FP32 600 TFLOPS.
    "B200": PeakThroughput({"fp32": 75.0, "bf16": 2250.0, "fp16": 2250.0, "fp8": 4500.0}, NVIDIA_DATASHEETS["B200"]),
    # Per chip, from Google's system-architecture page of each generation ("Peak compute per chip (bf16)").
    "TPU v4": PeakThroughput({"bf16": 275.0}, "https://cloud.google.com/tpu/docs/v4"),
    "TPU v5e": PeakThroughput({"bf16": 197.0}, "https://cloud.google.com/tpu/docs/v5e"),
    "TPU v5p": PeakThroughput({"bf16": 459.0}, "https://cloud.google.com/tpu/docs/v5p"),
    "TPU v6e": PeakThroughput({"bf16": 918.0}, "https://cloud.google.com/tpu/docs/v6e"),
}


def peak_dense(accelerator: str) -> PeakThroughput | None:
    """The accelerator's dense peak throughput, or None where the catalog has no vendor figure for it (A10G,
    whose NVIDIA figures AWS does not publish; Neuron devices; RTX PRO; B300)."""
    return PEAK_DENSE.get(accelerator)


def slurm_gres_type(gpu_model: str) -> str | None:
    """The Slurm GRES type for a grid pool's ``gpu_model`` (``H100-80GB`` → ``h100``): the longest NVIDIA model of
    the catalog that the name starts with, lower case, spaces as underscores (gres.conf(5) at Slurm 25.11, Type: "an
    arbitrary string", which autodetection would spell with "an underscore in lieu of any spaces"). None for a model
    the catalog does not know."""
    wanted = gpu_model.strip().lower().replace("-", " ")
    known = [
        model.name
        for model in ACCELERATOR_MODELS.values()
        if model.compute_capability is not None
        and (wanted == model.name.lower() or wanted.startswith(model.name.lower() + " "))
    ]
    if not known:
        return None
    return max(known, key=len).lower().replace(" ", "_")
