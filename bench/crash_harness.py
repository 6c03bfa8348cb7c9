"""Random crash harness: kill a ``dkg run`` or ``dkg join`` N times, then compare every gold table.

1. A reference run: the job's command once, never killed, into a warehouse of
   its own (it also produces the topics the other runs read). Its step lines
   (:mod:`pipelines.steps`) give each step's duration.
2. N kills, spread over the steps in data-flow order (bronze landing, silver
   routing, workers, gold refresh and, with data-quality gates, each gate; the
   join and its gold refresh). Kill i starts the same command on a second
   warehouse, waits for its target step to start, waits a seeded random delay
   within the step's reference duration, then freezes and SIGKILLs the whole job
   and confirms where it landed (:mod:`bench.crash_kill`).
3. The same command once more, to the end; then every gold table (and, for
   the join, its output: one row per left id) is compared with the
   reference's (:mod:`bench.crash_compare`).

The broker is the harness's own (or ``--bootstrap-servers``), never a child of
the job: it is not killed. Same seed, same kill plan.

Usage: ``python -m bench.crash_harness --pipeline grouping|join --kills N --seed S [-- JOB OPTIONS]``
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
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


@dataclass(frozen=True)
class Target:
    """Where a kill is aimed: the ``occurrence``-th start of ``step``, plus ``delay_s``."""

    step: str
    occurrence: int
    delay_s: float


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
    if pipeline == "grouping":
        return [sys.executable, "-m", "pipelines.cli", "run", *common, "--topic", f"crash-{size}",
                "--source", "COUNTRY_SKEW_R80", "--messages", str(size), "--workers", "4",
                "--partitions", "3", "--max-offsets-per-trigger", "700", *extra]  # fmt: skip
    return [sys.executable, "-m", "pipelines.cli", "join", *common, "--lefts", str(size),
            "--partitions", "2", *extra]  # fmt: skip


def _step_durations(events: Sequence[StepEvent]) -> list[tuple[str, int, float]]:
    """``(step, occurrence, seconds)`` of every step a finished run went through, in order."""
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
    return steps


def plan_kills(steps: Sequence[tuple[str, int, float]], kills: int, seed: int) -> list[Target]:
    """``kills`` targets over ``steps`` (in their order): as many per step as can be, the rest
    to seeded random steps; each a seeded random delay within the step's reference duration.

    A delay past what is left of the step in the killed run (an earlier kill got further)
    lands the kill in a later step: where it landed is read at the kill, not assumed.
    """
    rng = random.Random(seed)  # noqa: S311 - a reproducible plan, not a secret
    per_step = [kills // len(steps)] * len(steps)
    for index in rng.sample(range(len(steps)), kills % len(steps)):
        per_step[index] += 1
    return [Target(step, occurrence, rng.uniform(0.0, seconds))
            for (step, occurrence, seconds), count in zip(steps, per_step, strict=True)
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


def run_harness(pipeline: str, kills: int, seed: int, workdir: Path, bootstrap: str | None = None,
                size: int | None = None, extra: Sequence[str] = (),
                deadline_s: float = 7200.0) -> HarnessResult:  # fmt: skip
    """Reference run, ``kills`` killed runs, a last run to the end, then the comparison.

    Args:
        pipeline: ``grouping`` (``dkg run``) or ``join`` (``dkg join``).
        kills: kills to aim.
        seed: the kill plan's seed.
        workdir: the warehouses, logs and (without ``bootstrap``) the broker's data.
        bootstrap: a running broker; None starts one in ``workdir``.
        size: messages (grouping) or left records (join).
        extra: more options for the job's command.
        deadline_s: most seconds for all of it (every wait fails past it, naming what it waited for).
    """
    deadline = time.monotonic() + deadline_s
    result, env = HarnessResult(), _environment(workdir)
    size = size or DEFAULT_SIZE[pipeline]
    broker = None if bootstrap else LocalBroker(workdir / "kafka")
    bootstrap = bootstrap or broker.start()  # type: ignore[union-attr]
    try:

        def job(warehouse: str, log: str) -> JobProcess:
            argv = _command(pipeline, bootstrap, workdir / warehouse, size, extra)
            return JobProcess(argv, workdir / "logs" / log, env, workdir)

        started = time.monotonic()
        reference = job("reference", "reference.log")
        _to_end(reference, deadline)
        result.seconds["reference"] = time.monotonic() - started
        steps = _step_durations(reference.events)
        started = time.monotonic()
        for index, target in enumerate(plan_kills(steps, kills, seed)):
            killed = job("crashed", f"kill-{index:02d}.log").start()
            try:
                begun = killed.wait_for_start(target.step, target.occurrence, deadline)
                if begun is not None:
                    time.sleep(max(0.0, begun + target.delay_s - time.monotonic()))
                kill = killed.kill(target.step, target.delay_s)
            finally:
                killed.stop()
            if kill is None:
                if killed.returncode() != 0:
                    raise RuntimeError(f"kill {index}: the job failed on its own "
                                       f"(exit code {killed.returncode()}):\n{killed.tail()}")  # fmt: skip
                result.missed.append(target)
            else:
                result.kills.append(kill)
        result.seconds["kills"] = time.monotonic() - started
        started = time.monotonic()
        _to_end(job("crashed", "resume.log"), deadline)
        result.seconds["resume"] = time.monotonic() - started
    finally:
        if broker is not None:
            broker.stop()
    checks: Sequence[TableCheck] = PIPELINES[pipeline]
    result.tables = [compare_table(Warehouse(workdir / "reference"), Warehouse(workdir / "crashed"),
                                   check) for check in checks]  # fmt: skip
    result.ignored = {f"{c.label}.{column}": why
                      for c in checks for column, why in c.ignored.items()}  # fmt: skip
    return result


def report(result: HarnessResult) -> str:
    """The kills per step (aimed and landed) and the comparison, as text tables."""
    aimed = Counter(k.target for k in result.kills) + Counter(t.step for t in result.missed)
    landed = Counter(k.landed for k in result.kills)
    order = list(dict.fromkeys([*aimed, *landed]))
    rows = [{"step": step, "aimed": aimed.get(step, 0), "landed": landed.get(step, 0)}
            for step in order]  # fmt: skip
    kills = [{"kill": i, "aimed": k.target, "delay_s": round(k.delay_s, 2), "landed": k.landed,
              "in_step_s": "" if k.in_step_s is None else round(k.in_step_s, 2),
              "processes": k.processes} for i, k in enumerate(result.kills)]  # fmt: skip
    lines = [format_table(kills, list(kills[0])) if kills else "", "",
             f"{len(result.kills)} kills landed, {len(result.missed)} missed (the job had "
             "finished before the kill was due)",
             format_table(rows, ["step", "aimed", "landed"]) if rows else "",
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
    parser.add_argument("--bootstrap-servers", help="a running broker (default: one of its own)")
    parser.add_argument("job_options", nargs="*", help="after --: more options for the job")
    args = parser.parse_args(argv)
    if args.kills < 1:
        parser.error("--kills must be at least 1")
    # SIGTERM unwinds like Ctrl-C: the job being killed and the harness's broker are stopped.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="crash-harness-"))
    workdir.mkdir(parents=True, exist_ok=True)
    result = run_harness(args.pipeline, args.kills, args.seed, workdir, args.bootstrap_servers,
                         args.size, args.job_options)  # fmt: skip
    print(report(result))
    if result.ok and args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    elif not result.ok:
        print(f"logs and warehouses kept in {workdir}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
