"""Persistent FSx for Lustre file systems keep a durable copy: automatic backups, or a link to S3."""

from lattice.components.standards import FSX_BACKUP_MIN_DAYS

from ..mutations import put
from ..props import depends_on, get, known, number, of_type, settings
from ..registry import Counterexample, stack_rule

LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
REPOSITORY = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"


@stack_rule(
    name="fsx-lustre-backup-retention",
    description="Persistent FSx for Lustre file systems keep automatic daily backups for at least the minimum, "
    "unless they are linked to S3 by data repository associations (S3 is then the durable copy).",
    severity="medium",
    fix="`sites[].storage.lustre[].durability.backups.retention_days` (at least the rule's minimumDays), or link it "
    "to S3: `sites[].storage.lustre[].durability.repositories`",
    remediation="Set automatic_backup_retention_days to at least minimumDays (1-90), or link the file system to "
    "S3 with aws.fsx.DataRepositoryAssociation (FSx does not back up linked file systems).",
    resource_types=(LUSTRE, REPOSITORY),
    counterexample=Counterexample(LUSTRE, put("automaticBackupRetentionDays", value=3)),
    config={"minimumDays": {"type": "integer", "default": FSX_BACKUP_MIN_DAYS}},
    category="retention",
)
def fsx_lustre_backup_retention(args):
    minimum = settings(args)["minimumDays"]
    repositories = list(of_type(args.resources, REPOSITORY))
    for system in of_type(args.resources, LUSTRE):
        if get(system.props, "deploymentType", default="SCRATCH_1").startswith("SCRATCH"):
            continue  # scratch file systems have no backups by design; fsx-lustre-kms flags them
        days = number(get(system.props, "automaticBackupRetentionDays", default=0))
        linked = any(_links(repository, system) for repository in repositories)
        if days == 0 and linked:
            continue
        if days < minimum:
            yield system.urn, f"automatic backups are kept {days} days; at least {minimum} required"


def _links(repository, system) -> bool:
    """Whether a data repository association belongs to this file system.

    It takes the file system's id as an input, so the engine records the dependency; failing that, both ids
    must be known and equal. Two unknowns (a preview) or two absent values never match.
    """
    if depends_on(repository, system):
        return True
    target, own = known(repository.props, "fileSystemId"), known(system.props, "id")
    return target is not None and own is not None and target == own
