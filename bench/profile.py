"""Profile a plan (or a check) across every thread, not just the main one.

Pulumi's Python SDK sends each registration to the monitor from the event loop's default executor, so the mock
monitor — and our recording of every resource — runs in worker threads. ``cProfile`` hooks one thread: profiled
plainly, a plan shows the main thread waiting on futures and hides most of the work. Here every thread started
after profiling begins gets its own ``cProfile.Profile`` (installed through ``threading.setprofile``), each timed
with that thread's CPU clock (``time.thread_time``) so time spent waiting for the GIL or on a future is not
counted; the per-thread profiles are merged into one ``pstats`` view. Garbage-collector pauses are timed apart
through ``gc.callbacks`` (they land inside whichever function allocated).

With ``--yappi`` (``pip install yappi`` into a separate virtualenv, or ``pip install --target DIR yappi`` and
``PYTHONPATH=DIR``) yappi's native multi-thread CPU profiler is used instead, as a cross-check.

    python -m bench.profile out/bench/Pulumi.bench-c20.yaml                # plan
    python -m bench.profile out/bench/Pulumi.bench-c20.yaml --check        # plan, then the policy pack
    python -m bench.profile STACK --sort cumulative --limit 60 --output plan.pstats
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import threading
import time
from pathlib import Path


class GcTimer:
    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.collections[info["generation"]] += 1


class AllThreads:
    """A ``cProfile`` per thread, on each thread's CPU clock, merged at the end."""

    def __init__(self) -> None:
        self.profiles: dict[str, cProfile.Profile] = {}
        self._lock = threading.Lock()

    def _start_thread(self, *_: object) -> None:
        sys.setprofile(None)
        profile = cProfile.Profile(time.thread_time)
        with self._lock:
            self.profiles[threading.current_thread().name] = profile
        profile.enable()

    def __enter__(self) -> AllThreads:
        threading.setprofile(self._start_thread)
        self._main = cProfile.Profile(time.thread_time)
        self.profiles[threading.current_thread().name] = self._main
        self._main.enable()
        return self

    def __exit__(self, *_: object) -> None:
        self._main.disable()
        threading.setprofile(None)

    def _stats(self, profile: cProfile.Profile) -> pstats.Stats:
        # Read without disabling: disabling from another thread would close the calls still open on that thread
        # (an idle worker waiting for its queue) with *this* thread's clock, charging it seconds it never spent.
        profile.snapshot_stats()
        return pstats.Stats(_Snapshot(profile.stats))

    def per_thread(self) -> dict[str, float]:
        """CPU seconds each thread spent under the profiler."""
        return {name: self._stats(profile).total_tt for name, profile in self.profiles.items()}

    def merged(self) -> pstats.Stats:
        first, *rest = (self._stats(profile) for profile in self.profiles.values())
        for stats in rest:
            first.add(stats)
        return first


class _Snapshot:
    """What ``pstats.Stats`` reads from a profiler: its ``stats`` table."""

    def __init__(self, stats: dict) -> None:
        self.stats = stats

    def create_stats(self) -> None:
        pass


def run(stack_file: Path, check: bool) -> None:
    from lattice.engine.plan import run_plan

    plan = run_plan(stack_file)
    if check:
        from lattice.check.evaluate import config_path_for, evaluate, load_policy_config
        from lattice.policies.registry import all_rules

        rules = all_rules()
        config = load_policy_config(config_path_for(plan.to_dict()["outputs"]["environment"]), rules)
        evaluate(plan.to_dict(), config, rules)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.splitlines()[0])
    parser.add_argument("stack_file", type=Path)
    parser.add_argument("--check", action="store_true", help="also run the policy pack over the plan")
    parser.add_argument("--sort", default="tottime", help="pstats sort key (tottime, cumulative, ncalls)")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--yappi", action="store_true", help="use yappi (must be importable) instead of cProfile")
    parser.add_argument("--output", type=Path, help="also save the merged stats (pstats format)")
    args = parser.parse_args(argv)

    # The imports a plan needs are not what is being profiled: load them first.
    import lattice.engine.plan  # noqa: F401

    timer = GcTimer()
    gc.callbacks.append(timer)
    wall = time.perf_counter()
    cpu = time.process_time()
    if args.yappi:
        import yappi

        yappi.set_clock_type("cpu")
        yappi.start(profile_threads=True)
        run(args.stack_file, args.check)
        yappi.stop()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        threads = {t.name: t.ttot for t in yappi.get_thread_stats()}
        stats = yappi.convert2pstats(yappi.get_func_stats())
    else:
        with AllThreads() as profiler:
            run(args.stack_file, args.check)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        threads = profiler.per_thread()
        stats = profiler.merged()
    gc.callbacks.remove(timer)

    print(f"wall {wall:.2f} s, process CPU {cpu:.2f} s (profiled, so slower than unprofiled)")
    print(f"garbage collector: {timer.seconds:.2f} s in {timer.collections} collections (gen 0, 1, 2)")
    print("CPU per thread: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in sorted(threads.items())))
    buffer = io.StringIO()
    stats.stream = buffer
    stats.sort_stats(args.sort).print_stats(args.limit)
    print(buffer.getvalue())
    if args.output is not None:
        stats.dump_stats(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
