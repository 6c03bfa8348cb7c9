"""Run a job spec's tasks locally, in dependency order, sharing one broker and Spark session.

Each task calls its console script (``module:function ARGS``, what a
``python_wheel_task`` does on Databricks) in this process, one after another,
so the tasks share the embedded broker and the Spark session as the tasks of a
Databricks job cluster do (:mod:`pipelines.job_specs.cluster`). A task's
output goes to its log file, and what it prints to stdout, its result, also to
an output file. A task whose Spark settings the shared session cannot take
runs in a process of its own. The first failure stops the run; the tasks after
it are skipped. Every state change is saved in a JSON run record,
``<runs_dir>/<run_id>.json``, so a run stopped for any reason can be resumed:
tasks that succeeded are not run again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipelines.job_specs.cluster import JobCluster
from pipelines.job_specs.entry_points import checkout_root
from pipelines.job_specs.spec import JobSpec, JobSpecError, TaskSpec
from pipelines.job_specs.task_call import TaskTimeout, call_task, captured, deadline

if TYPE_CHECKING:
    from pipelines.tasks import TaskResources

__all__ = ["JobRun", "TaskResult", "last_run", "run_job"]

logger = logging.getLogger(__name__)

Reporter = Callable[["TaskResult"], None]

_INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (``dkg`` returns it)."""


@dataclass
class TaskResult:
    """One task's outcome: ``running``, ``succeeded``, ``failed`` or ``skipped``.

    ``log`` holds all its output, ``output`` what it printed to stdout. A task
    run in the job's process that used Spark names the session's
    ``spark_application``; one that used the embedded broker, its ``broker_pid``.
    """

    key: str
    status: str = "pending"
    seconds: float = 0.0
    exit_code: int | None = None
    log: str | None = None
    note: str = ""
    output: str | None = None
    spark_application: str | None = None
    broker_pid: int | None = None


@dataclass
class JobRun:
    """A run of one job spec, as saved in its run record."""

    job: str
    run_id: str
    spec: str
    parameters: dict[str, str]
    started_at: str
    status: str = "running"
    finished_at: str | None = None
    tasks: dict[str, TaskResult] = field(default_factory=dict)

    def save(self, runs_dir: Path) -> Path:
        """Write the record atomically (a reader never sees half a file)."""
        path = runs_dir / f"{self.run_id}.json"
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        temporary.replace(path)
        return path

    @classmethod
    def load(cls, path: Path) -> JobRun:
        """Read a record written by :meth:`save`."""
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        tasks = {k: TaskResult(**v) for k, v in data.pop("tasks").items()}
        return cls(**data, tasks=tasks)


@dataclass(frozen=True)
class _Context:
    """What every task of one run is run with."""

    spec: JobSpec
    run: JobRun
    runs_dir: Path
    cluster: JobCluster
    python: str
    cwd: Path | None
    notify: Reporter


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _new_run_id(runs_dir: Path) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    run_id, n = stamp, 1
    while (runs_dir / f"{run_id}.json").exists():
        n += 1
        run_id = f"{stamp}-{n}"
    return run_id


def last_run(runs_dir: Path) -> JobRun | None:
    """The most recent run record in ``runs_dir`` (run ids sort by start time)."""
    records = sorted(runs_dir.glob("*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    if not records:
        return None
    try:
        return JobRun.load(records[-1])
    except (OSError, ValueError, TypeError) as exc:
        raise JobSpecError(
            f"cannot resume: run record {records[-1]} is unreadable ({exc})"
        ) from None


def _start(spec: JobSpec, parameters: dict[str, str], runs_dir: Path, resume: bool) -> JobRun:
    previous = last_run(runs_dir) if resume else None
    if previous is None:
        if resume:
            logger.info("no earlier run of job %s: starting a new run", spec.name)
        run = JobRun(spec.name, _new_run_id(runs_dir), str(spec.path), parameters, _now())
        run.tasks = {key: TaskResult(key) for key in spec.order()}
        return run
    if previous.parameters != parameters:
        raise JobSpecError(f"cannot resume run {previous.run_id} of job {spec.name}: it ran with "
                           "other parameters (run without --resume to start anew)")  # fmt: skip
    kept = {k: t for k, t in previous.tasks.items() if t.status == "succeeded"}
    previous.tasks = {key: kept.get(key) or TaskResult(key) for key in spec.order()}
    previous.status, previous.finished_at = "running", None
    return previous


def _environment() -> dict[str, str]:
    # The task must import this checkout's code, whatever is installed in the venv.
    env = dict(os.environ)
    paths = [str(checkout_root()), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def _own_process(ctx: _Context, task: TaskSpec, arguments: list[str],
                 result: TaskResult) -> tuple[int | None, str]:  # fmt: skip
    command = [ctx.python, "-m", "pipelines.job_specs", str(result.output), task.target, *arguments]
    with Path(str(result.log)).open("a", encoding="utf-8") as log:
        try:
            completed = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=ctx.cwd,  # noqa: S603
                                       env=_environment(), timeout=task.timeout_seconds, check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            return None, f"timed out after {task.timeout_seconds} s"
    return completed.returncode, ""


def _in_process(ctx: _Context, task: TaskSpec, arguments: list[str]) -> tuple[int | None, str]:
    try:
        with deadline(task.timeout_seconds):
            return call_task(task.target, arguments), ""
    except TaskTimeout as exc:
        ctx.cluster.cancel_spark_work()
        return None, str(exc)


def _own_process_reason(ctx: _Context, task: TaskSpec,
                        resources: TaskResources | None) -> str | None:  # fmt: skip
    if (
        task.timeout_seconds is not None
        and threading.current_thread() is not threading.main_thread()
    ):
        return "its timeout needs the main thread"  # only the main thread receives signals
    return ctx.cluster.own_process_reason(resources)


def _execute(ctx: _Context, task: TaskSpec) -> TaskResult:
    arguments = ctx.spec.arguments(task, ctx.run.parameters, ctx.run.run_id)
    folder = ctx.runs_dir / ctx.run.run_id
    log, output = folder / f"{task.key}.log", folder / f"{task.key}.out"
    result = TaskResult(task.key, log=str(log), output=str(output))
    log.write_text(f"$ {shlex.join([task.entry_point, *arguments])}\n", encoding="utf-8")
    started = time.monotonic()
    with contextlib.chdir(ctx.cwd or Path.cwd()), captured(log, output):
        resources = ctx.cluster.prepare(task.target, arguments)
        reason = _own_process_reason(ctx, task, resources)
        if reason is None:
            result.exit_code, result.note = _in_process(ctx, task, arguments)
            if resources is not None and resources.spark:
                result.spark_application = ctx.cluster.spark_application()
        else:
            print(f"in a process of its own: {reason}", file=sys.stderr)
        result.broker_pid = ctx.cluster.broker_pid(resources)
    if reason is not None:
        result.exit_code, note = _own_process(ctx, task, arguments, result)
        result.note = ", ".join(filter(None, ["own process", note]))
    if result.exit_code == _INTERRUPTED:
        raise KeyboardInterrupt
    result.status = "succeeded" if result.exit_code == 0 else "failed"
    result.seconds = round(time.monotonic() - started, 6)
    return result


def _run_one(ctx: _Context, key: str) -> TaskResult:
    run = ctx.run
    run.tasks[key] = TaskResult(key, "running")
    run.save(ctx.runs_dir)
    ctx.notify(run.tasks[key])
    try:
        result = _execute(ctx, ctx.spec.task(key))
    except KeyboardInterrupt:
        # Leave a record that --resume can continue from.
        log = str(ctx.runs_dir / run.run_id / f"{key}.log")
        run.tasks[key] = TaskResult(key, "failed", note="interrupted", log=log)
        run.status, run.finished_at = "failed", _now()
        run.save(ctx.runs_dir)
        raise
    run.tasks[key] = result
    run.save(ctx.runs_dir)
    ctx.notify(result)
    return result


def _run_tasks(ctx: _Context) -> str | None:
    """Run the tasks not done yet; the key of the one that failed, or None."""
    failed: str | None = None
    for key in ctx.spec.order():
        current = ctx.run.tasks[key]
        if current.status == "succeeded":
            current.note = "succeeded earlier"
            ctx.notify(current)
        elif failed is not None:
            ctx.run.tasks[key] = TaskResult(key, "skipped", note=f"{failed} failed")
            ctx.notify(ctx.run.tasks[key])
        elif _run_one(ctx, key).status != "succeeded":
            failed = key
    return failed


def run_job(spec: JobSpec, parameters: Mapping[str, str], runs_dir: Path, *, resume: bool = False,
            report: Reporter | None = None, python: str = sys.executable,
            cwd: Path | None = None) -> JobRun:  # fmt: skip
    """Run ``spec``'s tasks in dependency order until one fails.

    Args:
        spec: The checked job.
        parameters: Job parameters (defaults already merged with overrides).
        runs_dir: Where run records and task logs go.
        resume: Continue the last run: its succeeded tasks are skipped.
        report: Called with each task's result when it starts and when it ends.
        python: Interpreter for a task that runs in a process of its own.
        cwd: Working directory of the tasks (default: this process's).

    Returns:
        The finished run; ``status`` is ``succeeded`` or ``failed``.
    """
    run = _start(spec, dict(parameters), runs_dir, resume)
    (runs_dir / run.run_id).mkdir(parents=True, exist_ok=True)
    cluster = JobCluster()
    ctx = _Context(spec, run, runs_dir, cluster, python, cwd, report or (lambda _result: None))
    try:
        failed = _run_tasks(ctx)
    finally:
        cluster.close()
    run.status, run.finished_at = ("failed" if failed else "succeeded"), _now()
    run.save(runs_dir)
    logger.debug("job %s run %s %s", spec.name, run.run_id, run.status)
    return run
