"""``dkg job run|validate|list``: job specs (``conf/jobs/*.yml``) run locally.

A spec has the shape of a Databricks Asset Bundle job (``resources.jobs.<name>``
with ``tasks``, ``depends_on``, ``python_wheel_task`` and job ``parameters``);
``run`` executes its tasks in dependency order, sharing one embedded broker and
one Spark session as a job cluster does, prints each task's status and time and
at the end what the last task printed (compare_groupings: the runs side by
side), stops at the first failure and, with ``--resume``, continues the last
run without repeating the tasks that succeeded. A spec is a file, or the name of
one of the project's (``compare_groupings``, or ``conf/jobs/compare_groupings.yml``
from any folder).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipelines.commands.common import UsageError

if TYPE_CHECKING:
    from pipelines.job_specs import JobRun, JobSpec, TaskResult

__all__ = ["add_parser", "run"]

_TAIL_LINES = 8


def add_parser(subparsers: Any) -> None:
    """Register ``job``."""
    parser = subparsers.add_parser(
        "job", help="run a job spec (conf/jobs/*.yml) task by task",
        description=__doc__,
    )  # fmt: skip
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    run_parser = actions.add_parser("run", help="run a job's tasks in dependency order")
    validate_parser = actions.add_parser("validate", help="check a spec and print its task order")
    for sub in (run_parser, validate_parser):
        sub.add_argument("spec", help="the job spec: a file, or a name of the project's "
                         "(lakehouse, conf/jobs/lakehouse.yml; see dkg job list)")  # fmt: skip
        sub.add_argument("--job", help="job key under resources.jobs (if the file has several)")
        sub.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                         help="override a job parameter (repeatable)")  # fmt: skip
    run_parser.add_argument("--warehouse",
                            help="warehouse root for run records (and the job's 'warehouse' "
                            "parameter); default: that parameter, else ./lakehouse")  # fmt: skip
    run_parser.add_argument("--show-output", action="store_true",
                            help="print each task's output when it ends (default: a failed "
                            "task's last lines, and at the end what the last task printed; "
                            "all output is in the task logs)")  # fmt: skip
    run_parser.add_argument("--resume", action="store_true",
                            help="continue the last run of this job: skip tasks that succeeded")  # fmt: skip
    list_parser = actions.add_parser("list", help="list the job specs in a folder (exit 1 if any is invalid)")
    list_parser.add_argument(
        "folder", type=Path, nargs="?", help="default: the repository's conf/jobs"
    )
    parser.set_defaults(handler=run)


def _overrides(items: Sequence[str]) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--param expects NAME=VALUE, got {item!r}")
        overrides[name.strip()] = value
    return overrides


def _spec_path(given: str) -> Path:
    from pipelines.job_specs import JobSpecError
    from pipelines.job_specs.bundled import JOB_SUFFIXES, require_conf_file

    return require_conf_file(given, "jobs", JOB_SUFFIXES, "job spec ", "specs", JobSpecError)


def _validate(args: argparse.Namespace) -> int:
    from pipelines.job_specs import load_job_spec

    spec = load_job_spec(_spec_path(args.spec), args.job)
    parameters = spec.resolve_parameters(_overrides(args.param))
    print(f"job {spec.name}: {len(spec.tasks)} tasks, valid")
    for key in spec.order():
        task = spec.task(key)
        after = f" (after {', '.join(task.depends_on)})" if task.depends_on else ""
        arguments = shlex.join(spec.arguments(task, parameters, "<run_id>"))
        print(f"  {key}{after}: {task.entry_point} {arguments}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from core.config import default_conf_dir
    from pipelines.job_specs import JobSpecError, load_job_spec

    folder = args.folder or default_conf_dir() / "jobs"
    if not folder.is_dir():
        raise UsageError(f"no folder {folder}")
    invalid = 0
    for path in sorted(folder.glob("*.y*ml")):
        try:
            spec = load_job_spec(path)
            print(f"{path}: job {spec.name}, tasks {' -> '.join(spec.order())}")
        except JobSpecError as exc:
            print(f"{path}: invalid: {exc}")
            invalid += 1
    return 1 if invalid else 0  # every spec is listed; a script learns whether all are valid


def _log_lines(result: Any) -> list[str]:
    if not result.log or not Path(result.log).is_file():
        return []
    return Path(result.log).read_text(encoding="utf-8", errors="replace").splitlines()


def _print_result(result: Any, show_output: bool = False) -> None:
    if result.status == "running":
        print(f"  {result.key:<20} running", flush=True)
        return
    timing = f"{result.seconds:8.1f} s" if result.status in ("succeeded", "failed") else " " * 10
    detail = [result.note] if result.note else []
    if result.status == "failed" and result.exit_code is not None:
        detail.append(f"exit {result.exit_code}")
    if result.status == "failed" and result.log:
        detail.append(f"log {result.log}")
    print(
        f"  {result.key:<20} {result.status:<10} {timing}  {', '.join(detail)}".rstrip(), flush=True
    )
    if result.status in ("succeeded", "failed") and (show_output or result.status == "failed"):
        lines = _log_lines(result)
        for line in lines if show_output else lines[-_TAIL_LINES:]:
            print(f"  | {line}", flush=True)


def _printed(result: TaskResult) -> str:
    """What a task printed to stdout (its result), as its output file kept it."""
    path = Path(result.output) if result.output else None
    if path is None or not path.is_file():
        return ""
    return path.read_text(encoding="utf-8", errors="replace").rstrip()


def _print_final_output(spec: JobSpec, job_run: JobRun) -> None:
    """What the last tasks (those no task depends on) printed: the job's result."""
    needed = {dep for task in spec.tasks for dep in task.depends_on}
    for key in [k for k in spec.order() if k not in needed]:
        text = _printed(job_run.tasks[key])
        if text:
            print(f"{key}:\n{text}", flush=True)


def _run(args: argparse.Namespace) -> int:
    import os

    from core.config import load_settings
    from pipelines.job_specs import load_job_spec, run_job
    from pipelines.pipeline_runtime import open_runtime

    spec = load_job_spec(_spec_path(args.spec), args.job)
    overrides = _overrides(args.param)
    if args.warehouse is not None and "warehouse" in spec.parameters:
        overrides.setdefault("warehouse", str(args.warehouse))
    parameters = spec.resolve_parameters(overrides)
    uri = args.warehouse or parameters.get("warehouse")
    cli = {} if uri is None else {"warehouse.uri": (str(uri), "--warehouse")}
    runs_dir = open_runtime(load_settings(cli=cli, env=os.environ)).warehouse.job_runs(spec.name)
    print(f"job {spec.name}: {len(spec.tasks)} tasks, run records in {runs_dir}", flush=True)
    job_run = run_job(spec, parameters, runs_dir, resume=args.resume,
                      report=lambda result: _print_result(result, args.show_output))  # fmt: skip
    seconds = sum(t.seconds for t in job_run.tasks.values())
    if job_run.status == "succeeded":
        if not args.show_output:
            _print_final_output(spec, job_run)
        print(f"job {spec.name} run {job_run.run_id} succeeded ({seconds:.1f} s of tasks)")
        return 0
    failed = next(k for k, t in job_run.tasks.items() if t.status == "failed")
    print(f"job {spec.name} run {job_run.run_id} failed at task {failed}; "
          f"fix it and rerun with --resume to skip the tasks that succeeded")  # fmt: skip
    return 1


def run(args: argparse.Namespace) -> int:
    """Dispatch to the action."""
    return {"run": _run, "validate": _validate, "list": _list}[args.action](args)
