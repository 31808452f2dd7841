"""The teams' Slurm accounts and QOS: one account per team with a quota on the site, its limits from the stack file.

Each team gets (sacctmgr(1), Slurm 25.11; the limits as resource_limits.shtml describes them):

- QOS ``<team>``: ``GrpTRES=gres/gpu=<guarantee>`` and a priority above ``standby``, which it may preempt
  (``Preempt=standby``): the team's guarantee, never preempted;
- account ``<team>`` under ``root``: ``GrpTRES=gres/gpu=<its Slurm share of gpu_quota>``
  (components/scheduling/quota.py), QOS ``<team>`` (its default) and ``standby``;
- and one shared QOS ``standby`` (priority 0, ``PreemptMode=requeue``, ``GrpTRES=gres/gpu=<every GPU of Slurm's
  pools>``): what a team runs beyond its guarantee, on any GPU no guaranteed job holds, requeued when a guaranteed
  job needs it — Kueue's borrowing of idle cohort capacity and ``reclaimWithinCohort`` in Slurm's terms.

Which limit holds a job is Slurm's hierarchy (resource_limits.shtml, "Hierarchy": the job's QOS before its
association; "the point in this list where the limit is first defined will be used"), and in slurmctld's code a
GPU limit its QOS sets is never checked against the association again (src/slurmctld/acct_policy.c at
slurm-25-11-7-1, ``_validate_tres_usage_limits``: an association's TRES limit is skipped where the QOS's
``grp_tres_ctld`` is not INFINITE64). So both of Lattice's QOS set their own GPU limit: the guarantee's, counted
over the team's guaranteed jobs alone, so that its standby jobs never hold its guarantee back (an association's
usage counts every job of the account, and Slurm preempts for nodes, not for limits); and standby's, which lets
standby jobs past the account's share onto idle GPUs — without it the account's ``GrpTRES`` caps them, the
guarantee included, and the GPUs of Slurm's pools beyond the teams' shares can never be given out (64 H100s in
prod's pool, 24 in the shares). The account's ``GrpTRES`` is the team's Slurm share of record (``sshare``,
``sacctmgr show association``) and the cap of any QOS without a GPU limit the centre may give the account.

How it gets there: a Kubernetes Job runs this script with ``sacctmgr`` against the site's slurmdbd on every change
of it. The script is idempotent: it reads what slurmdbd holds (``sacctmgr --noheader --parsable2 show``) and adds
only what is missing; it then sets every limit, and sacctmgr's "Nothing modified" — which it prints, and exits 1 on,
when slurmdbd already holds those values (src/sacctmgr/qos_functions.c and account_functions.c at slurm-25-11-7-1:
``printf("  Nothing modified\\n"); rc = SLURM_ERROR``, which ``_modify_it`` in sacctmgr.c turns into exit code 1)
— counts as done. A team removed from the stack keeps its account (its jobs' history stays in slurmdbd); the
centre retires it with ``sacctmgr delete account``. Users join their team's account by the centre's own tooling
(``sacctmgr add user <name> account=<team>``): Lattice knows the team's directory groups, not their members.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from .slurm_config import GRES_NAME, STANDBY_QOS

ACCOUNTS_CONFIG_MAP = "slurm-accounts-script"
ACCOUNTS_SCRIPT = "accounts.sh"
GUARANTEED_PRIORITY = 100
ORGANIZATION = "lattice"


@dataclass(frozen=True)
class SlurmAccount:
    """A team's account on a Slurm site: its Slurm share of gpu_quota and its guarantee (QOS)."""

    team: str
    gpus: int
    guarantee: int

    @property
    def grp_tres(self) -> str:
        return f"gres/{GRES_NAME}={self.gpus}"

    @property
    def qos_grp_tres(self) -> str:
        return f"gres/{GRES_NAME}={self.guarantee}"

    @property
    def default_qos(self) -> str:
        """What a job asks for without ``--qos``: the guarantee where there is one, else ``standby``."""
        return self.team if self.guarantee else STANDBY_QOS


PRELUDE = """#!/bin/bash
# Slurm accounts and QOS for the teams of cluster {cluster}, written by Lattice (components/scheduling/
# slurm_accounts.py). Idempotent: adds what slurmdbd lacks, sets every limit, and takes sacctmgr's
# "Nothing modified" (exit 1 when the values are already there) as done.
set -euo pipefail

CLUSTER={cluster_q}

exists() {{
  [[ -n "$(sacctmgr --noheader --parsable2 show "$@")" ]]
}}

apply() {{
  local out
  if out=$(sacctmgr --immediate "$@" 2>&1); then
    printf '%s\\n' "$out"
  elif [[ "$out" == *"Nothing modified"* ]]; then
    printf 'unchanged: %s\\n' "$*"
  else
    printf '%s\\n' "$out" >&2
    return 1
  fi
}}

if ! exists cluster where name="$CLUSTER" format=Cluster; then
  apply add cluster "$CLUSTER"
fi
if ! exists qos where name={standby} format=Name; then
  apply add qos {standby}
fi
apply modify qos where name={standby} set Priority=0 PreemptMode=requeue GrpTRES={standby_tres}
"""

TEAM = """
# team {team}: {gpus} GPUs under Slurm, {guarantee} guaranteed
if ! exists qos where name={team_q} format=Name; then
  apply add qos {team_q}
fi
apply modify qos where name={team_q} set Priority={priority} GrpTRES={qos_tres} Preempt={standby}
if ! exists association where account={team_q} cluster="$CLUSTER" format=Account; then
  apply add account {team_q} cluster="$CLUSTER" parent=root organization={organization} description={description}
fi
apply modify account where name={team_q} cluster="$CLUSTER" set GrpTRES={grp_tres} QOS={team_q},{standby} \\
  DefaultQOS={default_qos}
"""


def accounts_script(cluster: str, accounts: list[SlurmAccount], standby_gpus: int) -> str:
    """The Job's script: bash, checked by ``bash -n`` and ShellCheck in the suite. ``standby_gpus``: every GPU of the
    site's Slurm pools, which standby jobs may hold when no guaranteed job needs them."""
    text = PRELUDE.format(
        cluster=cluster,
        cluster_q=shlex.quote(cluster),
        standby=STANDBY_QOS,
        standby_tres=f"gres/{GRES_NAME}={standby_gpus}",
    )
    for account in accounts:
        text += TEAM.format(
            team=account.team,
            team_q=shlex.quote(account.team),
            gpus=account.gpus,
            guarantee=account.guarantee,
            priority=GUARANTEED_PRIORITY,
            qos_tres=account.qos_grp_tres,
            grp_tres=account.grp_tres,
            standby=STANDBY_QOS,
            default_qos=shlex.quote(account.default_qos),
            organization=ORGANIZATION,
            description=shlex.quote(f"Lattice team {account.team}"),
        )
    return text
