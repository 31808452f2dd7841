"""Plan throughput: how long the mock engine takes per stack, and how many resources it records.

Figures, not pass/fail: compare runs on the same machine. Each stack is planned in a
fresh process so import and first-run costs are included, as a user sees them.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 3
SNIPPET = (
    "import sys, time; t=time.perf_counter(); from lattice.engine import run_plan; "
    "p=run_plan(sys.argv[1], preview=sys.argv[2]=='1'); "
    "print(len(p.resources), time.perf_counter()-t)"
)


def main() -> None:
    print(f"{'stack':<10}{'mode':<9}{'resources':>10}{'median s':>10}{'min s':>8}{'in-process s':>14}")
    for stack_file in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")):
        stack = stack_file.name.split(".")[1]
        for preview in (False, True):
            walls, inner, count = [], [], 0
            for _ in range(RUNS):
                start = time.perf_counter()
                result = subprocess.run(
                    [sys.executable, "-c", SNIPPET, str(stack_file), "1" if preview else "0"],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                walls.append(time.perf_counter() - start)
                count_text, seconds = result.stdout.split()
                count, inner = int(count_text), [*inner, float(seconds)]
            mode = "preview" if preview else "plan"
            print(
                f"{stack:<10}{mode:<9}{count:>10}{statistics.median(walls):>10.2f}{min(walls):>8.2f}"
                f"{statistics.median(inner):>14.2f}"
            )


if __name__ == "__main__":
    main()
