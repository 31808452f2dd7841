"""``lattice teardown``: empty a dev or staging stack's S3 buckets so ``pulumi destroy`` can finish.

A dry run by default: it lists each bucket of the stack with its Object Lock mode and how many object versions
and delete markers it holds. ``--yes`` stops the stack's trails and access logs, then deletes every version and
delete marker (with governance bypass where the bucket is GOVERNANCE-locked) and says what to run next. Prod is
refused, and so is a stack with a COMPLIANCE-locked bucket, which cannot be emptied (``lattice/teardown/buckets.py``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lattice.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

EXIT_BLOCKED = 1


def add_parser(verbs, stack_arguments) -> None:
    teardown = verbs.add_parser(
        "teardown",
        help="empty a non-prod stack's S3 buckets (governance bypass on locked ones) before `pulumi destroy`",
    )
    stack_arguments(teardown)
    teardown.add_argument(
        "--yes",
        action="store_true",
        help="delete every object version and delete marker (default: a dry run that only counts them)",
    )
    teardown.add_argument("--profile", metavar="NAME", help="the AWS profile of the stack's account")
    teardown.set_defaults(handler=_teardown)


def _teardown(args: argparse.Namespace, out: Console) -> int:
    from rich.table import Table

    from lattice.engine.plan import FAKE_ACCOUNT, run_plan
    from lattice.tables import print_table
    from lattice.teardown.buckets import (
        account_of,
        adopted_buckets,
        aws_session,
        compliance_refusal,
        empty_bucket,
        stack_buckets,
        stack_trails,
        stop_writers,
    )

    from .common import progress, resolve_stack_file, warn

    stack_file = resolve_stack_file(args)
    spec = stack_file.spec
    if spec.environment == "prod":
        raise UsageError(
            f"{stack_file.path}: environment prod — lattice teardown empties only dev and staging stacks. Prod's "
            "buckets are COMPLIANCE-locked and protected: their data outlives the stack by design"
        )
    warn(stack_file)
    with progress(f"planning {stack_file.path.name} under the mock engine…"):
        plan = run_plan(stack_file).to_dict()
    buckets = stack_buckets(plan)
    adopted = adopted_buckets(spec)
    for bucket in [b for b in buckets if b.planned_name in adopted]:
        out.print(f"kept: {bucket.planned_name} is adopted (existing_bucket) and stays with its data", markup=False)
    buckets = [b for b in buckets if b.planned_name not in adopted]
    if not buckets:
        out.print(f"{stack_file.stack}: no S3 buckets in this stack; run `pulumi destroy --stack {stack_file.stack}`")
        return 0
    session = aws_session(args.profile)
    account = account_of(session)
    names = {b.planned_name: b.name(FAKE_ACCOUNT, account) for b in buckets}
    refusal = compliance_refusal(buckets, FAKE_ACCOUNT, account)
    if refusal is not None:
        out.print(f"lattice teardown: refused. {refusal}", markup=False)
        return EXIT_BLOCKED
    if args.yes:
        for line in stop_writers(session, buckets, stack_trails(plan), names):
            out.print(line, markup=False)
    table = Table(title=f"lattice teardown --stack {stack_file.stack}: {'emptied' if args.yes else 'dry run'}")
    table.add_column("bucket", overflow="fold")  # whole names: the user may look them up
    for column in ("region", "object lock", "versions", "delete markers", "result"):
        table.add_column(column)
    failed = False
    for bucket in buckets:
        name = names[bucket.planned_name]
        s3 = session.client("s3", region_name=bucket.region)
        result = empty_bucket(s3, name, bypass=bucket.lock_mode == "GOVERNANCE", delete=args.yes)
        if result.missing:
            verdict = "absent (nothing to empty)"
        elif result.errors:
            failed = True
            verdict = f"{len(result.errors)} not deleted: {result.errors[0]}"
        else:
            verdict = "emptied" if args.yes else "would be emptied"
            if bucket.lock_mode == "GOVERNANCE":
                verdict += " (governance bypass)"
        table.add_row(
            name,
            bucket.region,
            bucket.lock_mode or "none",
            str(result.versions),
            str(result.delete_markers),
            verdict,
        )
    print_table(out, table)
    if failed:
        out.print(
            "some versions were not deleted (a legal hold, or a version locked in COMPLIANCE mode by its writer); "
            "`pulumi destroy` will stop at those buckets"
        )
        return EXIT_BLOCKED
    if not args.yes:
        out.print(f"dry run: nothing deleted. Run `lattice teardown --stack {stack_file.stack} --yes` to empty them.")
        return 0
    out.print(f"now run `pulumi destroy --stack {stack_file.stack}`.")
    if any(site.provider == "gcp" for site in spec.sites):
        out.print(
            "GCP: key rings and keys outlive the stack (Cloud KMS never deletes them). Before creating this stack "
            "again, raise each GCP site's encryption.key_ring_generation by one, or `pulumi import` the rings."
        )
    return 0
