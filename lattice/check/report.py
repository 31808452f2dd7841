"""Check results as text, JSON, SARIF 2.1.0, JUnit XML, GitHub annotations and a Markdown summary.

Pulumi's own JSON output leaves policy results out (pulumi/pulumi#18851) and PR previews
do not surface policy warnings (pulumi/actions#1373); these formats carry them to code
scanning, test reporters and the PR diff. Every SARIF result points at the line of the
stack file that declares the site the resource belongs to, and carries a fingerprint
that is stable across runs (policy + URN), so code scanning tracks it over time. Every
format carries each finding's fix: the stack-file key or the command that fixes it.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
from collections import Counter
from dataclasses import dataclass
from importlib import metadata
from typing import Any
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lattice.policies.registry import SEVERITY_ORDER, Rule

from .evaluate import CheckResult, Finding
from .waivers import WaiverProblem


def _version() -> str:
    try:
        return metadata.version("lattice")
    except metadata.PackageNotFoundError:  # running from a checkout without `make`
        return "0.0.0+checkout"


FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")
# The text report's width in a file or a pipe; on a terminal, the terminal's (lattice check / audit pass it).
TEXT_WIDTH = 160
TOOL_URI = "https://github.com/lattice-hpc/lattice"
TOOL_VERSION = _version()
SECURITY_SEVERITY = {"low": "3.0", "medium": "5.5", "high": "8.0", "critical": "9.5"}


@dataclass(frozen=True)
class Locator:
    """Where a finding lives in the repository: the stack file and the line of its site."""

    stack_file: str
    site_lines: dict[str, int]
    site_of: dict[str, str]  # urn -> site name

    def line(self, urn: str) -> int:
        return self.site_lines.get(self.site_of.get(urn, ""), 1)


def locator_for(plan: dict[str, Any], stack_file: str, site_lines: dict[str, int]) -> Locator:
    by_urn = {r["urn"]: r for r in plan["resources"]}
    site_of: dict[str, str] = {}
    for urn in by_urn:
        node = by_urn.get(urn)
        while node is not None and not node["type"].startswith("lattice:sites:"):
            node = by_urn.get(node["parent"]) if node["parent"] else None
        if node is not None:
            site_of[urn] = node["name"]
    return Locator(stack_file=stack_file, site_lines=site_lines, site_of=site_of)


def render(
    fmt: str, result: CheckResult, problems: list[WaiverProblem], locator: Locator, width: int | None = None
) -> str:
    """The report in ``fmt``; ``width`` is the text report's (the terminal's when it goes to one)."""
    if fmt == "text":
        return to_text(result, problems, locator, width=width or TEXT_WIDTH)
    return {
        "json": to_json,
        "sarif": to_sarif,
        "junit": to_junit,
        "github": to_github,
        "markdown": to_markdown,
        "text": to_text,
    }[fmt](result, problems, locator)


def _short(urn: str) -> str:
    return urn.rsplit("::", 1)[-1] if urn else "(stack)"


def summary(result: CheckResult) -> dict[str, int]:
    return {
        "rules": len(result.rules),
        "resources": result.resources,
        "violations": len(result.findings),
        "mandatory": sum(1 for f in result.findings if f.enforcement == "mandatory"),
        "waived": sum(1 for f in result.findings if f.waived),
        "blocking": len(result.blocking),
        "notChecked": len(result.not_checked),
    }


def verdict_line(result: CheckResult) -> str:
    """The policy verdict in one line: rules run, violations by severity, what blocks."""
    severities = Counter(f.severity for f in result.findings if not f.waived)
    by_severity = ", ".join(f"{severities[s]} {s}" for s in reversed(SEVERITY_ORDER))
    counts = summary(result)
    verdict = "FAIL" if result.blocking else "PASS"
    return (
        f"policy verdict: {verdict} — {counts['rules']} rules over {counts['resources']} resources; "
        f"violations: {counts['violations'] - counts['waived']} ({by_severity}), {counts['waived']} waived, "
        f"{counts['blocking']} blocking"
    )


def to_text(result: CheckResult, problems: list[WaiverProblem], locator: Locator, width: int = 0) -> str:
    from lattice.tables import print_note, print_table

    console = Console(record=True, width=width or TEXT_WIDTH, file=io.StringIO())
    if result.findings:
        table = Table(title=f"lattice check: stack {result.stack}", show_lines=False)
        for column in ("policy", "severity", "enforcement", "resource", "message"):
            table.add_column(column)
        for f in result.findings:
            level = f"{f.enforcement} (waived)" if f.waived else f.enforcement
            table.add_row(f.policy, f.severity, level, escape(_short(f.urn)), escape(f.message))
        print_table(console, table)
        for policy, fix in _fixes(result.findings).items():
            print_note(console, f"fix {policy}", fix)
    for note in result.not_checked:
        console.print(f"[dim]not checked[/] {note.policy} {escape(_short(note.urn))}: {escape(note.message)}")
    for error in result.errors:
        console.print(f"[red]rule error[/] {error.policy} {escape(_short(error.urn))}: {escape(error.message)}")
    for problem in problems:
        console.print(f"[yellow]waiver[/] {problem.kind}: {escape(problem.message)}")
    counts = summary(result)
    verdict = "[red]FAIL[/]" if result.blocking else "[green]PASS[/]"
    console.print(
        f"{verdict} {counts['rules']} policies over {counts['resources']} resources: {counts['violations']} "
        f"violations ({counts['mandatory']} mandatory, {counts['waived']} waived, {counts['blocking']} blocking), "
        f"{counts['notChecked']} not checkable in preview"
    )
    return console.export_text()


def _fixes(findings: list[Finding]) -> dict[str, str]:
    """Each failing policy's fix, once, in the order the findings name them."""
    return {f.policy: f.fix for f in findings if f.fix}


def _finding_json(f: Finding) -> dict[str, Any]:
    record = {
        "policy": f.policy,
        "severity": f.severity,
        "enforcement": f.enforcement,
        "urn": f.urn,
        "message": f.message,
        "fix": f.fix,
        "waived": f.waived,
    }
    if f.waiver is not None:
        record["waiver"] = {"owner": f.waiver.owner, "reason": f.waiver.reason, "expires": f.waiver.expires.isoformat()}
    return record


def to_json(result: CheckResult, problems: list[WaiverProblem], locator: Locator) -> str:
    document = {
        "stack": result.stack,
        "violations": [_finding_json(f) for f in result.findings],
        "notChecked": [{"policy": n.policy, "urn": n.urn, "message": n.message} for n in result.not_checked],
        "ruleErrors": [{"policy": n.policy, "urn": n.urn, "message": n.message} for n in result.errors],
        "waiverProblems": [{"index": p.index, "kind": p.kind, "message": p.message} for p in problems],
        "summary": summary(result),
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def fingerprint(f: Finding) -> str:
    # Policy, resource and message: one resource can break one rule in several ways (each VPN tunnel).
    return hashlib.sha256(f"{f.policy}\n{f.urn}\n{f.message}".encode()).hexdigest()


def to_sarif(result: CheckResult, problems: list[WaiverProblem], locator: Locator) -> str:
    names = sorted(result.rules)
    rules = [
        {
            "id": name,
            "name": "".join(part.title() for part in name.split("-")),
            "shortDescription": {"text": result.rules[name].description},
            "fullDescription": {"text": result.rules[name].description},
            "help": _rule_help(result.rules[name]),
            "defaultConfiguration": {"level": _level(result.levels[name])},
            "properties": {
                "tags": [
                    t
                    for t in (
                        "security",
                        result.rules[name].category,
                        *result.rules[name].checkov,
                        *result.rules[name].trivy,
                    )
                    if t
                ],
                "security-severity": SECURITY_SEVERITY[result.rules[name].severity],
                "precision": "very-high",
            },
        }
        for name in names
    ]
    results = []
    for f in result.findings:
        line = locator.line(f.urn)
        entry: dict[str, Any] = {
            "ruleId": f.policy,
            "ruleIndex": names.index(f.policy),
            "level": _level(f.enforcement),
            "message": {"text": f"{f.message} ({_short(f.urn)}); fix: {f.fix}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": locator.stack_file},
                        "region": {"startLine": line, "endLine": line},
                    },
                    "logicalLocations": [{"fullyQualifiedName": f.urn or result.stack, "kind": "resource"}],
                }
            ],
            "partialFingerprints": {"latticeFinding/v1": fingerprint(f)},
            "properties": {"fix": f.fix},
        }
        if f.waived:
            entry["suppressions"] = [
                {
                    "kind": "external",
                    "status": "accepted",
                    "justification": f"{f.waiver.reason} (owner {f.waiver.owner}, expires {f.waiver.expires})",
                }
            ]
        results.append(entry)
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "lattice",
                        "informationUri": TOOL_URI,
                        "version": TOOL_VERSION,
                        "semanticVersion": TOOL_VERSION,
                        "rules": rules,
                    }
                },
                "automationDetails": {"id": f"lattice-check/{result.stack}/"},
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _rule_help(rule: Rule) -> dict[str, str]:
    """How to fix (the stack-file key or command, then the Pulumi arguments), and where the rule's verdict deliberately
    differs from a scanner ID it names."""
    text = f"Fix: {rule.fix}\n\n{rule.remediation}"
    markdown = f"**Fix:** {rule.fix}\n\n{rule.remediation}"
    if rule.scanner_notes:
        text += f"\n\nDiffers from the scanners: {rule.scanner_note()}"
        markdown += "\n\n**Differs from the scanners:**\n" + "".join(
            f"\n- `{scanner_id}`: {note}" for scanner_id, note in rule.scanner_notes.items()
        )
    return {"text": text, "markdown": markdown}


def _level(enforcement: str) -> str:
    return {"mandatory": "error", "advisory": "warning"}.get(enforcement, "note")


def to_junit(result: CheckResult, problems: list[WaiverProblem], locator: Locator) -> str:
    failing = {f.policy for f in result.findings}
    suite = ET.Element("testsuite", name=f"lattice-check.{result.stack}")
    cases = 0
    failures = skipped = 0
    for name in sorted(result.rules):
        if name not in failing:
            ET.SubElement(suite, "testcase", classname=f"lattice.{name}", name="all resources")
            cases += 1
    for f in result.findings:
        case = ET.SubElement(suite, "testcase", classname=f"lattice.{f.policy}", name=f.urn or result.stack)
        cases += 1
        if f.waived:
            ET.SubElement(
                case, "skipped", message=f"waived by {f.waiver.owner} until {f.waiver.expires}: {f.waiver.reason}"
            )
            skipped += 1
        else:
            failure = ET.SubElement(case, "failure", message=f.message, type=f"{f.enforcement}/{f.severity}")
            failure.text = (
                f"fix: {f.fix}\n{result.rules[f.policy].remediation}\n{locator.stack_file}:{locator.line(f.urn)}"
            )
            failures += 1
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites", name="lattice check", tests=str(cases), failures=str(failures))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def to_github(result: CheckResult, problems: list[WaiverProblem], locator: Locator) -> str:
    lines = []
    for f in result.findings:
        if f.waived:
            continue
        command = "error" if f.enforcement == "mandatory" else "warning"
        title = _escape_property(f"{f.policy} ({f.severity})")
        message = f"{f.message} [{f.urn}]" + (f"\nfix: {f.fix}" if f.fix else "")
        lines.append(
            f"::{command} file={_escape_property(locator.stack_file)},line={locator.line(f.urn)},title={title}::"
            f"{_escape_data(message)}"
        )
    for problem in problems:
        lines.append(f"::warning title=lattice waiver::{_escape_data(problem.message)}")
    if not lines:
        # Clean: one notice, so a run that found nothing says so rather than printing nothing.
        lines.append(f"::notice title=lattice check::{_escape_data(verdict_line(result))}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    # Resource names and messages come from the pull request under review: keep them from
    # closing the table row or adding HTML to the job summary.
    return html.escape(text, quote=False).replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


SUMMARY_COLUMNS = ("rules", "resources", "violations", "mandatory", "waived", "blocking", "notChecked")


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def to_markdown(result: CheckResult, problems: list[WaiverProblem], locator: Locator) -> str:
    """The verdict and the findings of one stack, for a pull request's job summary ($GITHUB_STEP_SUMMARY)."""
    counts = summary(result)
    verdict = "ERROR" if result.errors else "FAIL" if result.blocking else "PASS"
    lines = [
        f"### lattice check: stack {_cell(result.stack)}",
        "",
        _row("verdict", "policies", "resources", "violations", "mandatory", "waived", "blocking", "not checkable"),
        _row("---", *["---:"] * 7),
        _row(f"**{verdict}**", *(counts[key] for key in SUMMARY_COLUMNS)),
    ]
    if result.findings:
        lines += [
            "",
            _row("policy", "severity", "enforcement", "resource", "where", "message", "fix"),
            _row(*["---"] * 7),
        ]
        for f in result.findings:
            level = f"{f.enforcement} (waived)" if f.waived else f.enforcement
            where = f"{locator.stack_file}:{locator.line(f.urn)}"
            cells = (_cell(_short(f.urn)), _cell(where), _cell(f.message), _cell(f.fix))
            lines.append(_row(f.policy, f.severity, level, *cells))
    notes = [f"- rule error: {e.policy} on {_cell(_short(e.urn))}: {_cell(e.message)}" for e in result.errors]
    notes += [f"- waiver {problem.kind}: {_cell(problem.message)}" for problem in problems]
    if notes:
        lines += ["", *notes]
    if result.not_checked:
        lines += ["", f"<details><summary>{len(result.not_checked)} not checkable in preview</summary>", ""]
        lines += [f"- {n.policy} on {_cell(_short(n.urn))}: {_cell(n.message)}" for n in result.not_checked]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n\n"
