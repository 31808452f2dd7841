"""Persistent FSx for Lustre file systems keep automatic backups for the configured minimum."""

from components.standards import FSX_BACKUP_MIN_DAYS

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"


@resource_rule(
    name="fsx-lustre-backup-retention",
    description="Persistent FSx for Lustre file systems keep automatic daily backups for at least the minimum.",
    severity="medium",
    remediation="Set automatic_backup_retention_days to at least minimumDays (1-90).",
    resource_types=(LUSTRE,),
    counterexample=Counterexample(LUSTRE, put("automaticBackupRetentionDays", value=0)),
    config={"minimumDays": {"type": "integer", "default": FSX_BACKUP_MIN_DAYS}},
    category="retention",
)
def fsx_lustre_backup_retention(args):
    if get(args.props, "deploymentType", default="SCRATCH_1").startswith("SCRATCH"):
        return  # scratch file systems have no backups by design; fsx-lustre-kms already flags them
    minimum = args.get_config()["minimumDays"]
    days = get(args.props, "automaticBackupRetentionDays", default=0)
    if days < minimum:
        yield f"automatic backups are kept {days} days; at least {minimum} required"
