"""What a validator reports, and the rule that keeps one mistake to one message.

Errors all at once is right, but the consequences of an earlier error must not be reported as errors of their own: a
link naming an unknown site must not also make every MultiKueue worker and the metrics store "unreachable", and a
typo inside one site's storage (which leaves that site out of the cross-field checks) must not make a team that
lists the site "on no GCP site". So a conclusion drawn over another part of the spec names that part in its
``depends_on`` (a reachability verdict the ``links``, a team's "on no GCP site" its ``teams[i].sites``, a quota the
site's ``gpu_pools``), and ``without_consequences`` drops it when that part has an error of its own, or was left out
of the spec for its shape errors (``ValidationContext.left_out_sites`` / ``left_out_links`` / ``left_out_teams`` /
``left_out_workloads``). A name of a left-out site (or team, or workload) is no "unknown site" either: it exists, its
own errors are reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Issue:
    path: str
    message: str
    # A warning is reported but does not stop the plan (a hand-sized file system missing its budget in dev).
    warning: bool = False
    # Key paths of the other parts this conclusion rests on ("links", "teams[2].sites", "sites[0].gpu_pools", or
    # absent_site(name)): an error at or inside one of them makes this issue its consequence, not reported.
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class ValidationContext:
    """What the validators may know beyond the spec: the stack file's other config keys, and what the loader left
    out of the spec for its shape errors."""

    config_keys: frozenset[str] = field(default_factory=frozenset)
    secret_config_keys: frozenset[str] = field(default_factory=frozenset)
    # False under a real `pulumi up`, where the engine hands us config values but not the file.
    knows_config: bool = True
    stack: str = ""
    # Sites and teams the loader left out (by name) and how many links: what depends on them is not judged.
    left_out_sites: frozenset[str] = field(default_factory=frozenset)
    left_out_links: int = 0
    left_out_teams: frozenset[str] = field(default_factory=frozenset)
    left_out_workloads: frozenset[str] = field(default_factory=frozenset)


def absent_site(name: str) -> str:
    """The part a site name the spec does not hold stands for: broken when the loader left that site out for its
    shape errors (the name is then no typo), whole otherwise (an "unknown site" is the only error it brings)."""
    return f"sites[?{name}]"


def absent_team(name: str) -> str:
    """As ``absent_site``, for a team name."""
    return f"teams[?{name}]"


def absent_workload(name: str) -> str:
    """As ``absent_site``, for a workload name (a pool's or a file system's ``workload``)."""
    return f"workloads[?{name}]"


def unknown_site(path: str, name: str, known: list[str]) -> Issue:
    """``name`` names no site of the spec: a typo to fix, or a site left out for its shape errors (not reported)."""
    return Issue(path, f"unknown site '{name}'; use one of: {', '.join(known)}", depends_on=(absent_site(name),))


def site_names(spec, ctx: ValidationContext) -> list[str]:
    """Every site name the stack file gives, for "use one of": the spec's, then the ones left out."""
    names = [site.name for site in spec.sites]
    return names + sorted(ctx.left_out_sites - set(names))


def every_left_out_site(ctx: ValidationContext) -> tuple[str, ...]:
    """What a choice among all sites rests on ("the first grid site" as the MultiKueue manager or the metrics store):
    any site left out might have been the one chosen."""
    return tuple(absent_site(name) for name in sorted(ctx.left_out_sites))


def every_left_out_team(ctx: ValidationContext) -> tuple[str, ...]:
    """What a conclusion over every team rests on ("no team has this role", "no team is on this site"): any team left
    out might have been the one."""
    return tuple(absent_team(name) for name in sorted(ctx.left_out_teams))


def team_sites(index: int, team, ctx: ValidationContext) -> tuple[str, ...]:
    """What "the sites team ``index`` is on" rests on: its sites key, and without one (every grid and edge site)
    every site left out too."""
    return (f"teams[{index}].sites", *(every_left_out_site(ctx) if team.sites is None else ()))


def resting_on(parts: tuple[str, ...], issues: Iterable[Issue]) -> Iterator[Issue]:
    """The issues, each resting on ``parts`` too."""
    for issue in issues:
        yield replace(issue, depends_on=(*issue.depends_on, *parts))


def within(part: str, path: str) -> bool:
    """Whether the key path ``path`` lies in ``part`` or holds it (an error in either touches the other)."""
    return any(a == b or a.startswith((f"{b}.", f"{b}[")) for a, b in ((path, part), (part, path)))


def without_consequences(issues: list[Issue], ctx: ValidationContext) -> list[Issue]:
    """The issues but those whose ``depends_on`` names a part with an error of its own (module docstring). Two
    issues that depend on each other's parts are both kept: neither is the other's consequence alone."""
    broken = [absent_site(name) for name in ctx.left_out_sites]
    broken += [absent_team(name) for name in ctx.left_out_teams]
    broken += [absent_workload(name) for name in ctx.left_out_workloads]
    broken += [f"links[?{k}]" for k in range(ctx.left_out_links)]
    errors = [issue for issue in issues if not issue.warning]

    def consequence(issue: Issue) -> bool:
        if any(within(part, stand_in) for part in issue.depends_on for stand_in in broken):
            return True
        return any(
            other is not issue
            and any(within(part, other.path) for part in issue.depends_on)
            and not any(within(part, issue.path) for part in other.depends_on)
            for other in errors
        )

    return [issue for issue in issues if not consequence(issue)]
