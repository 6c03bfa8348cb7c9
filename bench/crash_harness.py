"""Random crash harness: kill a ``dkg run`` or ``dkg join`` N times, then compare every gold table.

1. A reference run: the job's command once, never killed, into a warehouse of
   its own, on a broker of its own. Its step lines (:mod:`pipelines.steps`)
   give the job's layout: its runs (one per grouping), each run's steps and the
   micro-batches of each streaming step. A grouping job with data-quality gates
   is referenced without them: the gates only read, and gold is the same.
2. N kills on a second warehouse and broker, aimed by progress
   (:mod:`bench.crash_plan`): spread over the runs, within each over its units
   of work (each micro-batch of silver's query, which lands bronze, routes and
   serves the workers; each data-quality gate; the gold refresh; the join's
   micro-batches and its gold refresh), in the job's order. Kill i starts the
   job again (resuming what the kills before left), waits until its step lines
   reach the target (a step started, or the micro-batch before committed, in
   this life or an earlier one), waits a seeded random share of how long that
   unit last took, then freezes and SIGKILLs the whole job and confirms where it
   landed (:mod:`bench.crash_kill`). A grouping job names only the groupings
   whose runs have not succeeded yet, as a user resuming it would.
3. The same command once more, to the end; then every gold table (and, for
   the join, its output: one row per left id) is compared with the
   reference's (:mod:`bench.crash_compare`).

Each run's broker is the harness's own, never a child of the job: it is not
killed. Same seed, same kill plan. Most of a kill's cost is the job starting
again: every life's JVM starts with the serial collector (and, as every local
driver, maps the class archive setup wrote, :mod:`core.spark.class_archive`);
neither changes what the job computes.

Usage: ``python -m bench.crash_harness --pipeline grouping|join --kills N --seed S [-- JOB OPTIONS]``
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
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
from bench.crash_kill import JobProcess, Kill
from bench.crash_plan import Layout, Point, Progress, Target, UnitSeconds, plan_kills, points
from core.kafka.broker import LocalBroker
from core.run_plan import query_id
from core.spark.session import local_driver_java_options
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.commands.common import format_table
from silver.groupings.registry import GROUPING_NAMES

__all__ = ["DEFAULT_SIZE", "HarnessResult", "committed_batches", "main", "report", "run_harness"]

REPO = Path(__file__).resolve().parents[1]

PIPELINES = {"grouping": GROUPING_TABLES, "join": JOIN_TABLES}
DEFAULT_SIZE = {"grouping": 1200, "join": 4000}
"""Messages (grouping) or left records (join): three (four) micro-batches per stage."""

_GROUPING_DATA = ["--dataset", "COUNTRY_SKEW_R80", "--rate", "10", "--workers", "4",
                  "--partitions", "3", "--max-offsets-per-trigger", "400"]  # fmt: skip
"""1,200 messages span 120 s of event time at 10 per second: two gold windows, eight of the
workers', and the groupings' own clocks (DYNAMIC_KEY's 15 s warm-up and key-space cycles,
SMALOPS's decision intervals) turn while the kills land."""


@dataclass
class HarnessResult:
    """What a harness run did and found."""

    layout: Layout | None = None
    plan: list[Target] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)
    missed: list[Target] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    ignored: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Every table equals the reference's."""
        return bool(self.tables) and all(row["ok"] for row in self.tables)


def _command(pipeline: str, bootstrap: str, warehouse: Path, size: int, groupings: Sequence[str],
             extra: Sequence[str]) -> list[str]:  # fmt: skip
    common = ["--bootstrap-servers", bootstrap, "--profile", "local", "--warehouse", str(warehouse)]
    # -v: the step lines the kills aim by are details.
    if pipeline == "grouping":
        return [sys.executable, "-m", "pipelines.cli", "-v", "run", *common, "--topic", f"crash-{size}",
                "--messages", str(size), *_GROUPING_DATA, "--grouping", ",".join(groupings),
                *extra]  # fmt: skip
    return [sys.executable, "-m", "pipelines.cli", "-v", "join", *common, "--lefts", str(size),
            "--partitions", "2", *extra]  # fmt: skip


def _environment(workdir: Path) -> dict[str, str]:
    # Spark's scratch space in the work folder: a killed JVM cannot clean it up.
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1",
            "SPARK_LOCAL_DIRS": str(workdir / "spark-local"),
            "DKG_JOIN__MAX_OFFSETS_PER_TRIGGER": "1200"}  # fmt: skip


def _jvm_options(workdir: Path) -> list[str]:
    """``--config`` with an overlay that starts the job's JVM on the serial collector: a
    short run's heap is small, and G1's threads compete with the job's for two cores."""
    java = local_driver_java_options("-XX:+UseSerialGC")
    path = workdir / "jvm.yaml"
    path.write_text(json.dumps({"spark": {"conf": {"spark.driver.extraJavaOptions": java}}}))
    return ["--config", str(path)]


def _to_end(job: JobProcess, deadline: float) -> None:
    code = job.start().wait(deadline - time.monotonic())
    if code != 0:
        raise RuntimeError(f"{job.log.name}: exit code {code}; stderr ends:\n{job.tail()}")


def committed_batches(warehouse: Warehouse, layout: Layout) -> dict[tuple[str, str], int]:
    """The last micro-batch each streaming step of each run committed: its checkpoint's
    ``commits`` log (the query is named after the step), read while no job runs."""
    committed = {}
    for run_id, index in layout.batches:
        step = layout.steps[index]
        commits = Path(warehouse.checkpoint(query_id(run_id, step))) / "commits"
        ids = [int(f.name) for f in commits.glob("[0-9]*") if f.name.isdigit()]
        if ids:
            committed[run_id, step] = max(ids)
    return committed


def _kill_at(job: JobProcess, progress: Progress, target: Target, unit_seconds: UnitSeconds,
             warehouse: Warehouse, deadline: float,
             interval_s: float = 0.01) -> Kill | None:  # fmt: skip
    """Start ``job`` (a life of the job ``progress`` follows, on ``warehouse``), kill it
    ``target.fraction`` of its unit after it reached ``target.point``; None if it finished
    first (a missed kill).

    A kill due after the job's last step ended is made at once: only the job's exit is left.

    Raises:
        RuntimeError: the job failed on its own.
        TimeoutError: the job neither got there nor ended by ``deadline``.
    """
    layout, due = progress.layout, None
    delay = target.fraction * unit_seconds.seconds(layout, target.point)
    job.start()
    try:
        while job.returncode() is None:
            point = progress.advance(job.poll_steps())
            if due is None and point is not None and point >= target.point:
                # When the line that got it there was seen, to within one pause.
                due = job.events[next(i for i, p in enumerate(progress.points)
                                      if p >= target.point)].seen_s + delay  # fmt: skip
            if due is not None and (time.monotonic() >= due or point >= layout.end):
                break
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{job.log.name}: did not reach {layout.describe(target.point)}")
            time.sleep(interval_s)
        kill = job.kill(layout.describe(target.point), delay)
    finally:
        job.stop()
    if kill is None and job.returncode() != 0:
        raise RuntimeError(f"{job.log.name}: the job failed on its own (exit code "
                           f"{job.returncode()}):\n{job.tail()}")  # fmt: skip
    if kill is None:
        return None
    progress.advance(job.events)  # the frozen job's last lines included
    progress.committed.update(committed_batches(warehouse, progress.layout))
    landed = progress.current()
    return dataclasses.replace(kill, unit="start" if landed is None else layout.describe(landed))


def _runs(warehouse: Warehouse) -> dict[str, dict[str, Any]]:
    """``gold.runs`` by run id ({} before the table exists)."""
    backend, uri = DeltaRsBackend(), warehouse.table_uri("gold", "runs")
    if backend.version(uri) is None:
        return {}
    return {row["run_id"]: row for row in backend.read(uri).to_pylist()}


def run_harness(pipeline: str, kills: int, seed: int, workdir: Path, size: int | None = None,
                extra: Sequence[str] = (), groupings: Sequence[str] = GROUPING_NAMES,
                deadline_s: float = 7200.0) -> HarnessResult:  # fmt: skip
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
        extra: more options for the job's command (not ``--grouping``).
        groupings: the grouping job's groupings, run in this order.
        deadline_s: most seconds for all of it (every wait fails past it, naming what it waited for).
    """
    if "--grouping" in extra:
        raise ValueError("name the groupings with groupings=, not --grouping")
    deadline = time.monotonic() + deadline_s
    result, env = HarnessResult(), _environment(workdir)
    size = size or DEFAULT_SIZE[pipeline]
    gates = pipeline == "grouping" and "--skip-checks" not in extra
    jvm = _jvm_options(workdir)
    with ExitStack() as brokers:

        def job(run: str, log: str, names: Sequence[str], options: Sequence[str]) -> JobProcess:
            if run not in bootstraps:
                broker = LocalBroker(workdir / f"kafka-{run}")
                bootstraps[run] = broker.start()
                brokers.callback(broker.stop)
            argv = _command(pipeline, bootstraps[run], workdir / run, size, names, [*jvm, *options])
            return JobProcess(argv, workdir / "logs" / log, env, workdir)

        bootstraps: dict[str, str] = {}
        started = time.monotonic()
        reference = job("reference", "reference.log", groupings,
                        [*extra, "--skip-checks"] if gates else extra)  # fmt: skip
        _to_end(reference, deadline)
        result.seconds["reference"] = time.monotonic() - started
        rows = _runs(Warehouse(workdir / "reference"))  # the grouping of each run
        labels = {e.run_id: rows.get(e.run_id, {}).get("grouping", pipeline)
                  for e in reference.events}  # fmt: skip
        layout = result.layout = Layout.of(reference.events, gates, labels)
        unit_seconds = UnitSeconds()
        unit_seconds.observe(layout, reference.events, points(layout, reference.events))
        result.plan = plan_kills(layout, kills, seed)

        def left(warehouse: Warehouse) -> list[str]:
            """The groupings whose runs did not succeed yet (all, once every one did: the
            job then only says so)."""
            done = {r["grouping"].upper() for r in _runs(warehouse).values()
                    if r["status"] == "succeeded"}  # fmt: skip
            return [name for name in groupings if name.upper() not in done] or list(groupings)

        started, crashed = time.monotonic(), Warehouse(workdir / "crashed")
        for n, target in enumerate(result.plan):
            killed = job("crashed", f"kill-{n:02d}.log", left(crashed), extra)
            progress = Progress(layout, committed_batches(crashed, layout))
            kill = _kill_at(killed, progress, target, unit_seconds, crashed, deadline)
            unit_seconds.observe(layout, killed.events, progress.points)
            if kill is None:  # the job ran to its end: nothing is left to kill
                result.missed = result.plan[n:]
                break
            result.kills.append(kill)
        result.seconds["kills"] = time.monotonic() - started
        started = time.monotonic()
        _to_end(job("crashed", "resume.log", left(crashed), extra), deadline)
        result.seconds["resume"] = time.monotonic() - started
    checks: Sequence[TableCheck] = PIPELINES[pipeline]
    result.tables = [compare_table(Warehouse(workdir / "reference"), Warehouse(workdir / "crashed"),
                                   check) for check in checks]  # fmt: skip
    result.ignored = {f"{c.label}.{column}": why
                      for c in checks for column, why in c.ignored.items()}  # fmt: skip
    return result


def _step_of(layout: Layout | None, point: Point) -> str:
    return "" if layout is None else layout.steps[point.step]


def report(result: HarnessResult) -> str:
    """Each kill, the kills per step (aimed at, landed in) and the comparison, as text tables."""
    layout = result.layout
    kills = [{"kill": i, "aimed": k.target, "delay_s": round(k.delay_s, 2),
              "landed": k.unit or " ".join(filter(None, [layout and layout.label(k.landed.run_id),
                                                         k.landed.step])),
              "in_step_s": "" if k.in_step_s is None else round(k.in_step_s, 2),
              "processes": k.processes} for i, k in enumerate(result.kills)]  # fmt: skip
    aimed = Counter(_step_of(result.layout, t.point) for t in result.plan[: len(result.kills)])
    landed = Counter(k.landed.step for k in result.kills)
    missed = Counter(_step_of(result.layout, t.point) for t in result.missed)
    steps = [{"step": step, "aimed": aimed[step], "landed": landed[step], "missed": missed[step]}
             for step in dict.fromkeys([*aimed, *landed, *missed])]  # fmt: skip
    lines = [format_table(kills, list(kills[0])) if kills else "", "",
             "aimed, landed: a run's step, +N: with N of its micro-batches committed (N-th running)",
             f"{len(result.kills)} kills, each confirmed (job alive and frozen in a known step, "
             f"driver dead of SIGKILL); {len(result.missed)} not made (the job ended first)",
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
    parser.add_argument("--groupings", default=",".join(GROUPING_NAMES),
                        help="the grouping job's groupings, a comma list (default: all)")  # fmt: skip
    parser.add_argument("--workdir", type=Path, help="keep everything here (default: a "
                        "temporary folder, removed when every table matched)")  # fmt: skip
    parser.add_argument("job_options", nargs="*", help="after --: more options for the job")
    args = parser.parse_args(argv)
    if args.kills < 1:
        parser.error("--kills must be at least 1")
    if "--grouping" in args.job_options:
        parser.error("name the groupings with --groupings, before --")
    groupings = [name.strip().upper() for name in args.groupings.split(",") if name.strip()]
    # SIGTERM unwinds like Ctrl-C: the job being killed and the harness's brokers are stopped.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="crash-harness-"))
    workdir.mkdir(parents=True, exist_ok=True)
    result = run_harness(args.pipeline, args.kills, args.seed, workdir, args.size,
                         args.job_options, groupings)  # fmt: skip
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
