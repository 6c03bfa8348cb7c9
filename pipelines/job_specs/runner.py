"""Run a job spec's tasks locally, in dependency order, each in its own process.

Each task is ``python -m pipelines.launch module:function ARGS`` (what
a ``python_wheel_task`` does on Databricks) with its output in a log file. The
first failure stops the run; the tasks after it are skipped. Every state change
is saved in a JSON run record, ``<runs_dir>/<run_id>.json``, so a run stopped
for any reason can be resumed: tasks that succeeded are not run again.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipelines.job_specs.entry_points import checkout_root
from pipelines.job_specs.spec import JobSpec, JobSpecError, TaskSpec

__all__ = ["JobRun", "TaskResult", "last_run", "run_job"]

logger = logging.getLogger(__name__)

Reporter = Callable[["TaskResult"], None]


@dataclass
class TaskResult:
    """One task's outcome: ``running``, ``succeeded``, ``failed`` or ``skipped``."""

    key: str
    status: str = "pending"
    seconds: float = 0.0
    exit_code: int | None = None
    log: str | None = None
    note: str = ""


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


def _command(spec: JobSpec, task: TaskSpec, run: JobRun, python: str) -> list[str]:
    return [python, "-m", "pipelines.launch", task.target,
            *spec.arguments(task, run.parameters, run.run_id)]  # fmt: skip


def _environment() -> dict[str, str]:
    # The task must import this checkout's code, whatever is installed in the venv.
    env = dict(os.environ)
    paths = [str(checkout_root()), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def _execute(command: list[str], task: TaskSpec, log_path: Path, cwd: Path | None) -> TaskResult:
    result = TaskResult(task.key, log=str(log_path))
    started = time.monotonic()
    try:
        with log_path.open("w", encoding="utf-8") as log:
            log.write(f"$ {shlex.join(command)}\n")
            log.flush()
            completed = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=cwd,  # noqa: S603
                                       env=_environment(), timeout=task.timeout_seconds, check=False)  # fmt: skip
        result.exit_code = completed.returncode
        result.status = "succeeded" if completed.returncode == 0 else "failed"
    except subprocess.TimeoutExpired:
        result.status, result.note = "failed", f"timed out after {task.timeout_seconds} s"
    result.seconds = round(time.monotonic() - started, 3)
    return result


def _run_one(spec: JobSpec, key: str, run: JobRun, runs_dir: Path, python: str,
             cwd: Path | None, notify: Reporter) -> TaskResult:  # fmt: skip
    run.tasks[key] = TaskResult(key, "running")
    run.save(runs_dir)
    notify(run.tasks[key])
    task = spec.task(key)
    log_path = runs_dir / run.run_id / f"{key}.log"
    try:
        result = _execute(_command(spec, task, run, python), task, log_path, cwd)
    except KeyboardInterrupt:
        # Leave a record that --resume can continue from.
        run.tasks[key] = TaskResult(key, "failed", note="interrupted", log=str(log_path))
        run.status, run.finished_at = "failed", _now()
        run.save(runs_dir)
        raise
    run.tasks[key] = result
    run.save(runs_dir)
    notify(result)
    return result


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
        python: Interpreter for the tasks.
        cwd: Working directory of the tasks (default: this process's).

    Returns:
        The finished run; ``status`` is ``succeeded`` or ``failed``.
    """
    run = _start(spec, dict(parameters), runs_dir, resume)
    (runs_dir / run.run_id).mkdir(parents=True, exist_ok=True)
    notify = report or (lambda _result: None)
    failed: str | None = None
    for key in spec.order():
        current = run.tasks[key]
        if current.status == "succeeded":
            current.note = "succeeded earlier"
            notify(current)
        elif failed is not None:
            run.tasks[key] = TaskResult(key, "skipped", note=f"{failed} failed")
            notify(run.tasks[key])
        elif _run_one(spec, key, run, runs_dir, python, cwd, notify).status != "succeeded":
            failed = key
    run.status, run.finished_at = ("failed" if failed else "succeeded"), _now()
    run.save(runs_dir)
    logger.debug("job %s run %s %s", spec.name, run.run_id, run.status)
    return run
