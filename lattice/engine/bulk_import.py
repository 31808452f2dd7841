"""``lattice import``'s logic: the bulk import file ``pulumi import --file`` takes, for what a stack file adopts.

A bucket the stack file maps to one that exists (``storage.buckets[].existing_bucket``) is declared by Lattice's
program under the existing name; a ``pulumi up`` would try to create it and fail (the name is taken), so it must
enter the stack's state first. ``pulumi import --file`` does that from a JSON file of this documented shape
(pulumi.com/docs/iac/cli/commands/pulumi_import/; the CLI's ``importFile`` struct in pulumi/pulumi
``pkg/cmd/pulumi/operations/import.go``)::

    {"nameTable": {"<name>": "<parent or provider URN>", ...},
     "resources": [{"type": "<type token>", "name": "<logical name>", "id": "<provider ID>",
                    "parent": "<a nameTable name>", "provider": "<a nameTable name>"}, ...]}

Nothing here re-derives Lattice's naming: each entry is the resource the program registers, read from a plan of the
stack under the mock engine (its type, logical name, parent URN and provider reference), found by the physical name
its inputs carry. Only the bucket itself is imported: its side resources (versioning, encryption, public access
block, lifecycle, policy) are settings S3 and Cloud Storage overwrite in place, which the next ``pulumi up``
applies to the adopted bucket as it would to a new one.

An FSx for Lustre file system the stack file maps to one that exists (``storage.lustre[].existing_file_system``)
would otherwise be created beside it, a second file system; it has no name to find it by in the plan, so the
program tags it with the ID it adopts (``fsx_lustre.ADOPTED_TAG``). Its import alone does not make the next
``pulumi up`` adopt it: what FSx fixed at its creation must be what the program plans, which ``lattice
preflight``'s ``file-system`` row compares (the replacing properties of ``components/catalog/replacements.py``).

The parents and providers the file names must be in the stack's state when ``pulumi import`` runs: on a stack that
was deployed before, they are; on a new stack, ``pulumi up --exclude-dependents --exclude <URN>`` for each adopted
bucket (printed by the verb; pulumi.com/docs/iac/guides/basics/targeted-updates/) creates everything else first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lattice.components.spec import StackSpec
from lattice.components.spec.model import AwsSite, GcpSite

# The resource that holds an adopted bucket, by site provider, and the input carrying its physical name.
BUCKET_TYPES = {
    "aws": ("aws:s3/bucket:Bucket", "bucket"),
    "gcp": ("gcp:storage/bucket:Bucket", "name"),
}
LUSTRE_TYPE = "aws:fsx/lustreFileSystem:LustreFileSystem"


@dataclass(frozen=True)
class Adoption:
    site: str
    bucket: str  # the spec's name of the bucket or file system
    existing: str  # the bucket's name, or the file system's ID
    provider: str  # the site's provider: aws or gcp
    key_path: str
    kind: str = "bucket"  # bucket, or file-system (FSx for Lustre)


class AdoptionNotPlanned(Exception):
    """The plan has no resource for an adoption (a bug: the program must declare what the spec adopts)."""


def adoptions(spec: StackSpec) -> list[Adoption]:
    """Every bucket the stack file adopts, in stack-file order."""
    found = []
    for i, site in enumerate(spec.sites):
        if not isinstance(site, AwsSite | GcpSite):
            continue
        for k, bucket in enumerate(site.storage.buckets):
            if bucket.existing_bucket is not None:
                found.append(
                    Adoption(
                        site=site.name,
                        bucket=bucket.name,
                        existing=bucket.existing_bucket,
                        provider=site.provider,
                        key_path=f"sites[{i}].storage.buckets[{k}].existing_bucket",
                    )
                )
        if isinstance(site, AwsSite):
            for k, lustre in enumerate(site.storage.lustre):
                if lustre.existing_file_system is not None:
                    found.append(
                        Adoption(
                            site=site.name,
                            bucket=lustre.name,
                            existing=lustre.existing_file_system.id,
                            provider=site.provider,
                            key_path=f"sites[{i}].storage.lustre[{k}].existing_file_system",
                            kind="file-system",
                        )
                    )
    return found


def import_file(spec: StackSpec, plan: dict[str, Any]) -> dict[str, Any]:
    """The bulk import document for every adoption of ``spec``, from ``plan`` (a ``Plan.to_dict()``)."""
    name_table: dict[str, str] = {}
    resources = []
    for adoption in adoptions(spec):
        resource = planned_resource(adoption, plan)
        entry: dict[str, Any] = {
            "type": resource["type"],
            "name": resource["name"],
            "id": import_id(adoption, resource),
        }
        if resource["parent"]:
            entry["parent"] = _table_name(name_table, resource["parent"])
        if resource["provider"]:
            entry["provider"] = _table_name(name_table, provider_urn(resource["provider"]))
        resources.append(entry)
    return {"nameTable": name_table, "resources": resources}


def planned_resource(adoption: Adoption, plan: dict[str, Any]) -> dict[str, Any]:
    """The resource the program declares for an adoption: a bucket by the name its inputs carry; a file system
    (which has no name) by the tag naming the ID it adopts (``fsx_lustre.ADOPTED_TAG``)."""
    from lattice.components.storage.fsx_lustre import ADOPTED_TAG

    if adoption.kind == "file-system":
        type_token = LUSTRE_TYPE
        matches = [
            r
            for r in plan["resources"]
            if r["type"] == type_token and (r["inputs"].get("tags") or {}).get(ADOPTED_TAG) == adoption.existing
        ]
    else:
        type_token, name_input = BUCKET_TYPES[adoption.provider]
        matches = [
            r for r in plan["resources"] if r["type"] == type_token and r["inputs"].get(name_input) == adoption.existing
        ]
    if len(matches) != 1:
        raise AdoptionNotPlanned(
            f"the plan declares {len(matches)} {type_token} named '{adoption.existing}' ({adoption.key_path}), not one"
        )
    return matches[0]


def import_id(adoption: Adoption, resource: dict[str, Any]) -> str:
    """The ID each provider's import takes: an S3 bucket's name; a Cloud Storage bucket's ``project/name``; an FSx
    file system's ID (the LustreFileSystem docs' Import section)."""
    if adoption.provider == "gcp":
        return f"{resource['inputs']['project']}/{adoption.existing}"
    return adoption.existing


def provider_urn(reference: str) -> str:
    """A provider reference is ``<provider URN>::<provider ID>``; the name table takes the URN."""
    return reference.rsplit("::", 1)[0]


def _table_name(table: dict[str, str], urn: str) -> str:
    """The URN's logical name (its last ``::`` part), made unique in the table if two URNs share it."""
    for name, known in table.items():
        if known == urn:
            return name
    base = urn.rsplit("::", 1)[-1]
    name, n = base, 2
    while name in table:
        name, n = f"{base}-{n}", n + 1
    table[name] = urn
    return name
