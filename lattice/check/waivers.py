"""Waivers: a named, owned, expiring exception to one policy for matching resources.

``policies/waivers.yaml`` holds ``waivers:``, each with ``policy`` (a policy name), ``urn``
(a glob over full engine URNs, as ``pulumi stack --show-urns`` prints them), ``reason``,
``owner`` and ``expires`` (a date). An expired or malformed waiver waives nothing and is
reported; so is a waiver that matched nothing in this run.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..components.spec.loader import load_yaml
from .evaluate import CheckResult


class Waiver(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    policy: str = Field(min_length=1)
    urn: str = Field(min_length=1, description="Glob over full URNs, e.g. urn:pulumi:dev::lattice::*EksCluster*")
    reason: str = Field(min_length=10)
    owner: str = Field(min_length=1)
    expires: dt.date

    def matches(self, policy: str, urn: str) -> bool:
        return policy == self.policy and fnmatch.fnmatchcase(urn, self.urn)

    def names_other_stack(self, stack: str) -> bool:
        """Whether the URN pattern names a stack (``urn:pulumi:<stack>::…``) that ``stack`` is not: such a waiver
        belongs to that stack's runs and is not unused in this one (one waivers file serves every stack)."""
        prefix, _, rest = self.urn.partition("urn:pulumi:")
        named = rest.split("::", 1)[0] if not prefix and rest else ""
        return bool(named) and not fnmatch.fnmatchcase(stack, named)


@dataclass(frozen=True)
class WaiverProblem:
    index: int
    kind: str  # malformed | expired | unknown-policy | introduced | unused
    message: str


@dataclass
class WaiverSet:
    active: list[tuple[int, Waiver]]
    problems: list[WaiverProblem]


def load_waivers(path: Path, known_policies: set[str], today: dt.date) -> WaiverSet:
    if not path.exists():
        return WaiverSet(active=[], problems=[])
    try:
        document = load_yaml(path.read_text()) or {}
    except yaml.YAMLError as exc:
        return WaiverSet([], [WaiverProblem(-1, "malformed", f"{path}: not valid YAML ({exc}); no waiver applies")])
    entries: list[Any] = document.get("waivers") or [] if isinstance(document, dict) else []
    active: list[tuple[int, Waiver]] = []
    problems: list[WaiverProblem] = []
    for index, entry in enumerate(entries):
        try:
            waiver = Waiver.model_validate(entry)
        except ValidationError as exc:
            details = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in exc.errors())
            problems.append(
                WaiverProblem(index, "malformed", f"waivers[{index}] is malformed ({details}); it waives nothing")
            )
            continue
        if waiver.policy not in known_policies:
            problems.append(
                WaiverProblem(index, "unknown-policy", f"waivers[{index}] names unknown policy '{waiver.policy}'")
            )
            continue
        if waiver.expires < today:
            problems.append(
                WaiverProblem(
                    index,
                    "expired",
                    f"waivers[{index}] ({waiver.policy}, owner {waiver.owner}) expired on {waiver.expires}; "
                    "it waives nothing: fix the violation or renew the waiver with a new reason",
                )
            )
            continue
        active.append((index, waiver))
    return WaiverSet(active=active, problems=problems)


def apply_waivers(
    result: CheckResult, waivers: WaiverSet, baseline: set[tuple[str, str]] | None = None
) -> list[WaiverProblem]:
    """Mark waived findings; return every waiver problem, unused waivers included.

    ``baseline`` holds the (policy, URN) pairs that already violate on the base branch. When given,
    a mandatory violation outside it was introduced by this change, and no waiver may excuse it:
    the waiver has to land (and be reviewed) in a change of its own first.
    """
    used: set[int] = set()
    refused: list[WaiverProblem] = []
    for finding in result.findings:
        for index, waiver in waivers.active:
            if not waiver.matches(finding.policy, finding.urn):
                continue
            used.add(index)
            introduced = baseline is not None and (finding.policy, finding.urn) not in baseline
            if introduced and finding.enforcement == "mandatory":
                refused.append(
                    WaiverProblem(
                        index,
                        "introduced",
                        f"waivers[{index}] cannot excuse {finding.policy} on {finding.urn}: this change introduces "
                        "the violation; fix it, or land the waiver in a change of its own first",
                    )
                )
                break
            finding.waived, finding.waiver = True, waiver
            break
    unused = [
        WaiverProblem(
            index, "unused", f"waivers[{index}] ({waiver.policy}, {waiver.urn}) matched no violation; remove it"
        )
        for index, waiver in waivers.active
        if index not in used and not (result.stack and waiver.names_other_stack(result.stack))
    ]
    return [*waivers.problems, *refused, *unused]
