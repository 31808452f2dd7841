"""``lattice job-template``: a ready JobSet, PyTorchJob or Slurm batch script for a pool's workload (the job
templates are ``lattice/jobs/``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.jobs.template import DEFAULT_IMAGE, KINDS, QUEUES

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    template = verbs.add_parser(
        "job-template",
        help="write a JobSet or PyTorchJob for a pool's workload: its team's queue, DP × TP × PP and the Kueue "
        "topology",
        description="Writes a JobSet (default) or a Worker-only PyTorchJob (--kind pytorchjob; Kubeflow Training "
        "Operator v1.9.0, which Lattice installs with JobSet): Worker-only because Kueue makes a Master a PodSet "
        "of its own, tied to the workers only by podset-group-name, which Kueue refuses beside the slice "
        "annotations a pipeline needs.",
    )
    stack_arguments(template)
    template.add_argument("--site", required=True, help="the site of the pool, e.g. aws-use1")
    template.add_argument("--pool", required=True, help="a GPU pool of that site that names a workload")
    template.add_argument("--team", required=True, help="the team whose queue the job is submitted to")
    template.add_argument(
        "--kind",
        choices=KINDS,
        default="jobset",
        help="jobset (default), pytorchjob, or sbatch: a Slurm batch script for a pool Slurm owns",
    )
    template.add_argument(
        "--queue",
        choices=QUEUES,
        default="gpus",
        help="gpus (default): submit on the pool's own site; hybrid: submit on the MultiKueue manager, which "
        "dispatches to the team's worker sites in order (the pool's site must be one of them)",
    )
    template.add_argument("--workload", help="a workloads[] entry to write the job for (default: the pool's)")
    template.add_argument(
        "--gpus",
        type=int,
        metavar="N",
        help="the GPUs the job asks for, in whole nodes of the pool (default: all of its max_nodes)",
    )
    template.add_argument("--name", help="the job's name (default: the workload's name)")
    template.add_argument("--image", default=DEFAULT_IMAGE, help=f"container image (default: {DEFAULT_IMAGE})")
    template.add_argument("--output", metavar="FILE", type=Path, help="write the YAML to FILE instead of stdout")
    template.set_defaults(handler=_job_template)


def _job_template(args: argparse.Namespace, out: Console) -> int:
    import sys

    from lattice.errors import write_output
    from lattice.jobs.template import render

    from .common import resolve_stack_file

    stack_file = resolve_stack_file(args)
    text, code = render(stack_file.spec, args)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_output(args.output, text, "--output")
        out.print(f"wrote {args.output}", markup=False)
    return code
