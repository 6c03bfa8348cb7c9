"""Random crash harness: kill a ``dkg run`` or ``dkg join`` N times, then compare every gold table.

1. A reference run: the job's command once, never killed, into a warehouse of
   its own, on a broker of its own. Its step lines
   (:mod:`pipelines.steps`) give each step's duration.
2. N kills, spread over the steps in data-flow order (silver's query, which
   lands bronze, routes and serves the workers, or bronze's and silver's where
   bronze has a query of its own; gold refresh and, with data-quality gates,
   each gate; the join and its gold refresh). Kill i starts the same command on a second
   warehouse and broker, waits for its target step to start, waits a seeded random delay
   within the step's reference duration, then freezes and SIGKILLs the whole job
   and confirms where it landed (:mod:`bench.crash_kill`).
3. The same command once more, to the end; then every gold table (and, for
   the join, its output: one row per left id) is compared with the
   reference's (:mod:`bench.crash_compare`).

Each run's broker is the harness's own, never a child of the job: it is not
killed. Same seed, same kill plan.

Usage: ``python -m bench.crash_harness --pipeline grouping|join --kills N --seed S [-- JOB OPTIONS]``
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.crash_compare import GROUPING_TABLES, JOIN_TABLES, TableCheck, compare_table
from bench.crash_kill import JobProcess, Kill, StepEvent
from core.kafka.broker import LocalBroker
from core.warehouse import Warehouse
from pipelines.commands.common import format_table

__all__ = ["DEFAULT_SIZE", "HarnessResult", "Target", "main", "plan_kills", "report", "run_harness"]

REPO = Path(__file__).resolve().parents[1]

PIPELINES = {"grouping": GROUPING_TABLES, "join": JOIN_TABLES}
DEFAULT_SIZE = {"grouping": 6000, "join": 4000}
"""Messages (grouping) or left records (join): several micro-batches per stage."""

_ATTEMPTS = 3
"""Runs per planned kill: a run that ends before its kill was due is started again, aimed
at its step's start (a step with little left to do may end before any later moment)."""


@dataclass(frozen=True)
class Target:
    """Where a kill is aimed: the ``occurrence``-th start of ``step``, plus ``fraction`` of the
    step's duration (as it last ran to its end: in the reference, or in a killed run)."""

    step: str
    occurrence: int
    fraction: float


@dataclass
class HarnessResult:
    """What a harness run did and found."""

    kills: list[Kill] = field(default_factory=list)
    missed: list[Target] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    ignored: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Every table equals the reference's."""
        return bool(self.tables) and all(row["ok"] for row in self.tables)


def _command(pipeline: str, bootstrap: str, warehouse: Path, size: int,
             extra: Sequence[str]) -> list[str]:  # fmt: skip
    common = ["--bootstrap-servers", bootstrap, "--profile", "local", "--warehouse", str(warehouse)]
    # -v: the steps' started lines, which the kills aim by, are details.
    if pipeline == "grouping":
        return [sys.executable, "-m", "pipelines.cli", "-v", "run", *common, "--topic", f"crash-{size}",
                "--dataset", "COUNTRY_SKEW_R80", "--messages", str(size), "--workers", "4",
                "--partitions", "3", "--max-offsets-per-trigger", "700", "--grouping", "DYNAMIC_KEY",
                *extra]  # fmt: skip
    return [sys.executable, "-m", "pipelines.cli", "-v", "join", *common, "--lefts", str(size),
            "--partitions", "2", *extra]  # fmt: skip


def _step_durations(events: Sequence[StepEvent]) -> list[tuple[str, int, float]]:
    """``(step, occurrence, seconds)`` of every step a run went through to its end, in order."""
    seen: Counter[str] = Counter()
    steps: list[tuple[str, int, float]] = []
    open_steps: dict[str, tuple[int, float]] = {}
    for event in events:
        if event.event == "started":
            open_steps[event.step] = (len(steps), event.seen_s)
            steps.append((event.step, seen[event.step], 0.0))
            seen[event.step] += 1
        elif event.step in open_steps:
            index, started = open_steps.pop(event.step)
            steps[index] = (*steps[index][:2], event.seen_s - started)
    unfinished = {(step, steps[index][1]) for step, (index, _) in open_steps.items()}
    return [step for step in steps if step[:2] not in unfinished]


def plan_kills(steps: Sequence[tuple[str, int]], kills: int, seed: int) -> list[Target]:
    """``kills`` targets over ``steps`` (in their order): as many per step as can be, the rest
    to seeded random steps; each at a seeded random fraction of the step's duration.

    A moment past what is left of the step in the killed run lands the kill in a
    later step: where it landed is read at the kill, not assumed.
    """
    rng = random.Random(seed)  # noqa: S311 - a reproducible plan, not a secret
    per_step = [kills // len(steps)] * len(steps)
    for index in rng.sample(range(len(steps)), kills % len(steps)):
        per_step[index] += 1
    return [Target(step, occurrence, rng.random())
            for (step, occurrence), count in zip(steps, per_step, strict=True)
            for _ in range(count)]  # fmt: skip


def _environment(workdir: Path) -> dict[str, str]:
    # Spark's scratch space in the work folder: a killed JVM cannot clean it up.
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1",
            "SPARK_LOCAL_DIRS": str(workdir / "spark-local"),
            "DKG_JOIN__MAX_OFFSETS_PER_TRIGGER": "1200"}  # fmt: skip


def _to_end(job: JobProcess, deadline: float) -> None:
    code = job.start().wait(deadline - time.monotonic())
    if code != 0:
        raise RuntimeError(f"{job.log.name}: exit code {code}; stderr ends:\n{job.tail()}")


def _kill_once(job: JobProcess, target: Target, seconds: float, deadline: float) -> Kill | None:
    """Start ``job``, kill it ``target.fraction`` of ``seconds`` into its target step; None if
    it finished first (a missed kill).

    Raises:
        RuntimeError: the job failed on its own.
    """
    job.start()
    try:
        begun = job.wait_for_start(target.step, target.occurrence, deadline)
        delay = target.fraction * seconds
        due = time.monotonic() if begun is None else begun + delay
        while (left := due - time.monotonic()) > 0 and job.returncode() is None:
            job.poll_steps()  # when each step began, to within one pause
            time.sleep(min(left, 0.01))  # a job that ends meanwhile is not waited for
        kill = job.kill(target.step, delay)
    finally:
        job.stop()
    if kill is None and job.returncode() != 0:
        raise RuntimeError(f"{job.log.name}: the job failed on its own (exit code "
                           f"{job.returncode()}):\n{job.tail()}")  # fmt: skip
    return kill


def run_harness(pipeline: str, kills: int, seed: int, workdir: Path, size: int | None = None,
                extra: Sequence[str] = (), deadline_s: float = 7200.0) -> HarnessResult:  # fmt: skip
    """Reference run, ``kills`` killed runs, a last run to the end, then the comparison.

    Each of the two runs has a broker of its own, started here: the killed run
    produces its topics as the reference did (a join with a stalled partition
    produces its second phase after draining the first).

    Args:
        pipeline: ``grouping`` (``dkg run``) or ``join`` (``dkg join``).
        kills: kills to aim.
        seed: the kill plan's seed.
        workdir: the warehouses, the brokers' data and the jobs' logs.
        size: messages (grouping) or left records (join).
        extra: more options for the job's command.
        deadline_s: most seconds for all of it (every wait fails past it, naming what it waited for).
    """
    deadline = time.monotonic() + deadline_s
    result, env = HarnessResult(), _environment(workdir)
    size = size or DEFAULT_SIZE[pipeline]
    with ExitStack() as brokers:

        def job(run: str, log: str) -> JobProcess:
            if run not in bootstraps:
                broker = LocalBroker(workdir / f"kafka-{run}")
                bootstraps[run] = broker.start()
                brokers.callback(broker.stop)
            argv = _command(pipeline, bootstraps[run], workdir / run, size, extra)
            return JobProcess(argv, workdir / "logs" / log, env, workdir)

        bootstraps: dict[str, str] = {}
        started = time.monotonic()
        reference = job("reference", "reference.log")
        _to_end(reference, deadline)
        result.seconds["reference"] = time.monotonic() - started
        started = time.monotonic()
        seconds = {(step, n): s for step, n, s in _step_durations(reference.events)}
        for planned in plan_kills(list(seconds), kills, seed):
            for attempt in range(_ATTEMPTS):
                target = planned if attempt == 0 else dataclasses.replace(planned, fraction=0.0)
                killed = job("crashed", f"kill-{len(result.kills) + len(result.missed):02d}.log")
                kill = _kill_once(killed, target, seconds[target.step, target.occurrence], deadline)
                # A step with less left to do than in the reference runs shorter: aim by its last run.
                seconds.update({(step, n): s for step, n, s in _step_durations(killed.events)})
                if kill is not None:
                    result.kills.append(kill)
                    break
                result.missed.append(target)
        result.seconds["kills"] = time.monotonic() - started
        started = time.monotonic()
        _to_end(job("crashed", "resume.log"), deadline)
        result.seconds["resume"] = time.monotonic() - started
    checks: Sequence[TableCheck] = PIPELINES[pipeline]
    result.tables = [compare_table(Warehouse(workdir / "reference"), Warehouse(workdir / "crashed"),
                                   check) for check in checks]  # fmt: skip
    result.ignored = {f"{c.label}.{column}": why
                      for c in checks for column, why in c.ignored.items()}  # fmt: skip
    return result


def report(result: HarnessResult) -> str:
    """Each kill, the kills per step (aimed at, landed in) and the comparison, as text tables."""
    kills = [{"kill": i, "aimed": k.target, "delay_s": round(k.delay_s, 2), "landed": k.landed,
              "in_step_s": "" if k.in_step_s is None else round(k.in_step_s, 2),
              "processes": k.processes} for i, k in enumerate(result.kills)]  # fmt: skip
    aimed, landed = Counter(k.target for k in result.kills), Counter(k.landed for k in result.kills)
    missed = Counter(t.step for t in result.missed)
    steps = [{"step": step, "aimed": aimed[step], "landed": landed[step], "missed": missed[step]}
             for step in dict.fromkeys([*aimed, *landed, *missed])]  # fmt: skip
    lines = [format_table(kills, list(kills[0])) if kills else "", "",
             f"{len(result.kills)} kills, each confirmed (job alive and frozen in a known step, "
             f"driver dead of SIGKILL); {len(result.missed)} runs missed (ended before their kill "
             "was due: started again)",
             format_table(steps, ["step", "aimed", "landed", "missed"]) if steps else "",
             "", format_table(result.tables, ["table", "reference", "crashed", "missing", "extra",
                                              "duplicated", "differing", "ok", "example"]),
             "", "left out (wall clock):",
             *(f"  {column}: {why}" for column, why in result.ignored.items()),
             "", "seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in result.seconds.items()),
             "result: " + ("every table equals the uncrashed run's" if result.ok else "MISMATCH")]  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the harness; exit code 1 on any mismatch."""
    parser = argparse.ArgumentParser(prog="python -m bench.crash_harness", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--pipeline", choices=sorted(PIPELINES), required=True)
    parser.add_argument("--kills", type=int, default=20, help="kills to aim (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="the kill plan's seed")
    parser.add_argument("--size", type=int, help="messages (grouping) or left records (join)")
    parser.add_argument("--workdir", type=Path, help="keep everything here (default: a "
                        "temporary folder, removed when every table matched)")  # fmt: skip
    parser.add_argument("job_options", nargs="*", help="after --: more options for the job")
    args = parser.parse_args(argv)
    if args.kills < 1:
        parser.error("--kills must be at least 1")
    # SIGTERM unwinds like Ctrl-C: the job being killed and the harness's brokers are stopped.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="crash-harness-"))
    workdir.mkdir(parents=True, exist_ok=True)
    result = run_harness(args.pipeline, args.kills, args.seed, workdir, args.size, args.job_options)
    print(report(result))
    if result.ok and args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    elif not result.ok:
        print(f"logs and warehouses kept in {workdir}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # A native library thread may abort the interpreter's own exit ("terminate called
    # without an active exception", seen after a 20-kill run had printed its result):
    # the exit code must stay the comparison's.
    os._exit(code)
