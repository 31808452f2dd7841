"""Kubernetes resource quantities as Kueue counts and prints them.

Kueue keeps every request and quota as an int64 (kubernetes-sigs/kueue v0.19.2, commit
8eab68778fc1b52affe165fdf5af29d1e9b4f3cb, ``pkg/resources/resource.go`` ``ResourceValue``): CPU in millicores
(``Quantity.MilliValue``), everything else in whole units (``Quantity.Value``: bytes, devices), each rounded up. Its
messages print an amount back as a quantity (``pkg/resources/resource_formatter.go``): CPU as a milli quantity in
decimal SI, memory and ephemeral storage in binary SI, any other resource in decimal SI, each in the canonical form
k8s.io/apimachinery's ``Quantity.String`` writes (``pkg/api/resource/quantity.go``, ``CanonicalizeBytes``).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
BINARY_RESOURCES = frozenset({MEMORY, "ephemeral-storage"})

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}  # fmt: skip
_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)")


class QuantityError(ValueError):
    """A value that is not a Kubernetes quantity."""


def parse(value: str | int | float) -> Fraction:
    """A quantity's exact value (``"1.5Gi"`` → 1610612736, ``"500m"`` → 1/2)."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a Kubernetes quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    match = _QUANTITY.fullmatch(str(value).strip())
    if match is None:
        raise QuantityError(f"{value!r} is not a Kubernetes quantity")
    number, exponent, suffix = match.groups()
    base = Fraction(number)
    if exponent:
        return base * Fraction(10) ** int(exponent[1:])
    suffix = suffix or ""
    return base * (_BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix])


def amount(resource: str, value: str | int | float) -> int:
    """What Kueue counts of ``value`` for ``resource``: millicores for CPU, whole units (rounded up) otherwise."""
    exact = parse(value)
    return math.ceil(exact * 1000) if resource == CPU else math.ceil(exact)


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    times = 0
    while value != 0 and value % base == 0:
        value //= base
        times += 1
    return value, times


def _decimal(value: int, scale: int = 0) -> str:
    """``value`` × 10^``scale`` in decimal SI, with the exponent a multiple of three (Quantity.String)."""
    if value == 0:
        return "0"
    mantissa, tens = _remove_factors(value, 10)
    exponent = tens + scale
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    suffixes = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
    return f"{mantissa}{suffixes[exponent]}"


def _binary(value: int) -> str:
    if -1024 < value < 1024:
        return _decimal(value)
    mantissa, times = _remove_factors(value, 1024)
    return f"{mantissa}{['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][times]}"


def format_amount(resource: str, value: int | None) -> str:
    """An amount as Kueue's messages print it (``None``: unlimited, which Kueue prints as ``Unlimited``)."""
    if value is None:
        return "Unlimited"
    if resource == CPU:
        return _decimal(value, -3)
    if resource in BINARY_RESOURCES or resource.startswith("hugepages-"):
        return _binary(value)
    return _decimal(value)


def extended(resource: str) -> bool:
    """Extended resources (a domain-qualified name outside kubernetes.io) cannot be overcommitted
    (kubernetes/kubernetes ``pkg/apis/core/helper``, ``IsExtendedResourceName``)."""
    return "/" in resource and not resource.split("/", 1)[0].endswith("kubernetes.io")
