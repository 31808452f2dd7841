"""The scanners' own pass / fail examples for every ID the registry claims, as Pulumi programs.

Each ``Examples`` is one scanner test fixture (a Checkov ``example_<Check>/main.tf`` or inline test, a Trivy check's
documented good / bad Terraform or its rego test inputs) translated resource by resource to pulumi-aws 7 /
pulumi-gcp 10 / pulumi-kubernetes 4 and planned under the recording engine. Every example resource is named by its
address in the scanner's fixture (``aws_security_group.fail``), so the scanner's verdict and the rule's finding meet
on one name. ``differs`` lists the examples where Lattice deliberately judges otherwise, each with why; the rule's
``scanner_notes`` must say so for that ID (tests/policies/test_scanner_parity.py).

Terraform-only constructs are translated to what they evaluate to (a ``dynamic`` block with ``for_each = [1]`` is
the block; ``var.x`` with a default is its default); examples whose verdict hangs on an unknown variable are left
out, as the scanner itself reports them unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

CHECKOV = "bridgecrewio/checkov@03d5fdad8d6154b1565799a7b1fb8070c158866f"
TRIVY = "aquasecurity/trivy-checks@80e5382269707262f35cf893bdc0805cb72217e9"
Verdict = Literal["pass", "fail", "unknown"]


@dataclass(frozen=True)
class Examples:
    scanner_id: str
    rule: str
    source: str  # the scanner fixture these examples translate: repository@commit path
    program: Callable[[], None]
    verdicts: Mapping[str, Verdict]  # example address -> the scanner's verdict
    differs: Mapping[str, str] = field(default_factory=dict)  # address -> why Lattice judges it otherwise
    config: Mapping[str, object] = field(default_factory=dict)  # rule config the translation needs
    # Where the scanner judges one resource and the rule another (CKV2_GCP_1 judges the project's default service
    # accounts, the rule the node configs that use them): address -> the planned resources that stand for it.
    judged_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def stand_ins(self, address: str) -> tuple[str, ...]:
        return self.judged_by.get(address, (address,))


EXAMPLES: list[Examples] = []


def examples(
    scanner_id: str,
    rule: str,
    source: str,
    *,
    passes: Iterable[str] = (),
    fails: Iterable[str] = (),
    unknown: Iterable[str] = (),
    differs: Mapping[str, str] | None = None,
    config: Mapping[str, object] | None = None,
    judged_by: Mapping[str, tuple[str, ...]] | None = None,
) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register a program as the translation of one scanner fixture, with the scanner's verdicts."""

    def register(program: Callable[[], None]) -> Callable[[], None]:
        verdicts: dict[str, Verdict] = {}
        for verdict, addresses in (("pass", passes), ("fail", fails), ("unknown", unknown)):
            for address in addresses:
                if address in verdicts:
                    raise ValueError(f"{scanner_id}: {address} has two verdicts")
                verdicts[address] = verdict
        unknown_differs = set(differs or {}) - set(verdicts)
        if unknown_differs:
            raise ValueError(f"{scanner_id}: differs names no example: {sorted(unknown_differs)}")
        unknown_stand_ins = set(judged_by or {}) - set(verdicts)
        if unknown_stand_ins:
            raise ValueError(f"{scanner_id}: judged_by names no example: {sorted(unknown_stand_ins)}")
        EXAMPLES.append(
            Examples(
                scanner_id,
                rule,
                source,
                program,
                verdicts,
                dict(differs or {}),
                dict(config or {}),
                dict(judged_by or {}),
            )
        )
        return program

    return register


@dataclass(frozen=True)
class DroppedClaim:
    """An ID a rule once claimed that the scanner's own examples show means something else."""

    rule: str
    scanner_id: str
    why: str
    examples: Examples


DROPPED: list[DroppedClaim] = []


def dropped(rule: str, scanner_id: str, why: str, source: str, *, passes: Iterable[str], fails: Iterable[str]):
    """Register the scanner's examples for an ID ``rule`` no longer claims: the rule must disagree with them."""

    def register(program: Callable[[], None]) -> Callable[[], None]:
        judged: dict[str, Verdict] = {**dict.fromkeys(passes, "pass"), **dict.fromkeys(fails, "fail")}
        DROPPED.append(DroppedClaim(rule, scanner_id, why, Examples(scanner_id, rule, source, program, judged)))
        return program

    return register


def all_examples() -> list[Examples]:
    from . import checkov_aws, checkov_gcp, checkov_k8s, trivy  # noqa: F401  (importing registers them)

    return EXAMPLES
