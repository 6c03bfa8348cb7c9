"""Load and check a job spec (``conf/jobs/*.yml``, Databricks Asset Bundle shape).

A spec holds ``resources.jobs.<name>`` with job-level ``parameters`` (name and
default) and ``tasks``: each a ``task_key``, its ``depends_on`` and a
``python_wheel_task`` calling a console script of this project with
``parameters`` (a list) or ``named_parameters`` (passed as ``--name=value``).
Values may use ``{{job.parameters.<name>}}``, ``{{job.name}}``, ``{{job.run_id}}``
and ``{{task.name}}``, as in Databricks. Deployment fields (clusters,
libraries, schedules, ...) are accepted and ignored locally; anything else is a
typo and fails, as do unknown dependencies, cycles and missing entry points.
"""

from __future__ import annotations

import graphlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.config import ConfigError, yaml_problem
from core.config.suggest import unknown_name
from pipelines.job_specs.entry_points import ENTRY_POINT_PATTERN, resolve_entry_point

__all__ = ["JobSpec", "JobSpecError", "TaskSpec", "load_job_spec"]

_REFERENCE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


class JobSpecError(ConfigError):
    """A job spec cannot be read, is malformed, or names something that does not exist."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Dependency(_Model):
    task_key: str
    outcome: str | None = None


class _WheelTask(_Model):
    package_name: str
    entry_point: str
    parameters: list[str] | None = None
    named_parameters: dict[str, str] | None = None

    @field_validator("parameters", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> Any:
        return [_text(v) for v in value] if isinstance(value, list) else value

    @field_validator("named_parameters", mode="before")
    @classmethod
    def _named_strings(cls, value: Any) -> Any:
        return {k: _text(v) for k, v in value.items()} if isinstance(value, dict) else value


class _Task(_Model):
    task_key: str = Field(pattern=r"^[\w-]+$")
    description: str | None = None
    depends_on: list[_Dependency] = []
    python_wheel_task: _WheelTask
    timeout_seconds: int | None = Field(default=None, gt=0)
    # Deployment settings: meaningful on Databricks, ignored by the local runner.
    libraries: Any = None
    job_cluster_key: Any = None
    environment_key: Any = None
    existing_cluster_id: Any = None
    new_cluster: Any = None
    max_retries: Any = None
    min_retry_interval_millis: Any = None
    retry_on_timeout: Any = None
    run_if: Any = None
    email_notifications: Any = None


class _Parameter(_Model):
    name: str = Field(pattern=r"^\w+$")
    default: str

    @field_validator("default", mode="before")
    @classmethod
    def _string(cls, value: Any) -> Any:
        return _text(value)


class _Job(_Model):
    name: str | None = None
    description: str | None = None
    parameters: list[_Parameter] = []
    tasks: list[_Task] = Field(min_length=1)
    # Deployment settings, ignored locally.
    job_clusters: Any = None
    environments: Any = None
    schedule: Any = None
    trigger: Any = None
    email_notifications: Any = None
    webhook_notifications: Any = None
    tags: Any = None
    max_concurrent_runs: Any = None
    timeout_seconds: Any = None
    queue: Any = None
    health: Any = None
    permissions: Any = None


class _Resources(_Model):
    jobs: dict[str, _Job] = Field(min_length=1)


class _Bundle(_Model):
    resources: _Resources
    bundle: Any = None
    include: Any = None
    variables: Any = None
    targets: Any = None
    workspace: Any = None


def _text(value: Any) -> Any:
    # YAML reads 10 as int and true as bool; Databricks parameters are strings.
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if isinstance(value, int | float) else value


@dataclass(frozen=True)
class TaskSpec:
    """One task: a console script called with its arguments (references unresolved)."""

    key: str
    package_name: str
    entry_point: str
    target: str
    arguments: tuple[str, ...]
    depends_on: tuple[str, ...]
    timeout_seconds: int | None = None


@dataclass(frozen=True)
class JobSpec:
    """One job of a spec file, checked: dependencies exist and form no cycle."""

    name: str
    path: Path
    parameters: Mapping[str, str]
    tasks: tuple[TaskSpec, ...]

    def task(self, key: str) -> TaskSpec:
        """The task named ``key``."""
        return next(t for t in self.tasks if t.key == key)

    def order(self) -> list[str]:
        """Task keys in dependency order; ties keep the spec's order (deterministic)."""
        position = {t.key: i for i, t in enumerate(self.tasks)}
        sorter = graphlib.TopologicalSorter({t.key: t.depends_on for t in self.tasks})
        sorter.prepare()
        ordered: list[str] = []
        while sorter.is_active():
            ready = sorted(sorter.get_ready(), key=position.__getitem__)
            ordered.extend(ready)
            sorter.done(*ready)
        return ordered

    def resolve_parameters(self, overrides: Mapping[str, str]) -> dict[str, str]:
        """The defaults with ``overrides`` applied; an unknown name is an error."""
        unknown = sorted(set(overrides) - set(self.parameters))
        if unknown:
            known = ", ".join(self.parameters) or "none"
            raise JobSpecError(
                f"job {self.name} has no parameter {unknown[0]!r} (parameters: {known})"
            )
        return {**self.parameters, **overrides}

    def arguments(self, task: TaskSpec, parameters: Mapping[str, str], run_id: str) -> list[str]:
        """``task``'s argument list with every ``{{...}}`` reference filled in."""
        values = {f"job.parameters.{k}": v for k, v in parameters.items()}
        values |= {"job.name": self.name, "job.run_id": run_id, "task.name": task.key}
        return [_REFERENCE.sub(lambda m: values[m.group(1)], arg) for arg in task.arguments]


def _read(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise JobSpecError(f"cannot read job spec {path}: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise JobSpecError(f"{path}: {yaml_problem(exc)}") from None


def _parse(path: Path, data: Any) -> _Bundle:
    if not isinstance(data, dict):
        raise JobSpecError(f"{path}: expected a mapping with resources.jobs at the top level")
    try:
        return _Bundle.model_validate(data)
    except ValidationError as exc:
        # A misspelt key also leaves the right one missing: name the misspelling first.
        err = min(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        where = [str(p) for p in err["loc"]]
        if err["type"] == "extra_forbidden":
            raise JobSpecError(f"{path}: {unknown_name(_Bundle, where, 'key')}") from None
        raise JobSpecError(f"{path}: {'.'.join(where)}: {err['msg']}") from None


def _arguments(task: _WheelTask) -> tuple[str, ...]:
    if task.parameters is not None and task.named_parameters is not None:
        raise ValueError("give parameters or named_parameters, not both")
    if task.named_parameters is not None:
        return tuple(f"--{k}={v}" for k, v in task.named_parameters.items())
    return tuple(task.parameters or ())


def _task_spec(
    task: _Task, parameters: Mapping[str, str], resolve: Callable[[str, str], str | None]
) -> TaskSpec:
    wheel = task.python_wheel_task
    target = resolve(wheel.package_name, wheel.entry_point)
    if target is None:
        raise ValueError(f"entry point {wheel.entry_point!r} of package {wheel.package_name!r} "
                         "is not a console script of this project ([project.scripts])")  # fmt: skip
    if not ENTRY_POINT_PATTERN.fullmatch(target):
        raise ValueError(f"entry point {wheel.entry_point!r} is {target!r}, not module:function")
    arguments = _arguments(wheel)
    known = {f"job.parameters.{k}" for k in parameters} | {"job.name", "job.run_id", "task.name"}
    for arg in arguments:
        for ref in _REFERENCE.findall(arg):
            if ref not in known:
                raise ValueError(f"unknown reference {{{{{ref}}}}} in {arg!r}")
    return TaskSpec(task.task_key, wheel.package_name, wheel.entry_point, target, arguments,
                    tuple(d.task_key for d in task.depends_on), task.timeout_seconds)  # fmt: skip


def _check_graph(tasks: tuple[TaskSpec, ...]) -> None:
    keys = [t.key for t in tasks]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise ValueError(f"task_key {duplicates[0]!r} is used twice")
    for task in tasks:
        for dep in task.depends_on:
            if dep not in keys:
                raise ValueError(f"task {task.key!r} depends on unknown task {dep!r}")
    try:
        graphlib.TopologicalSorter({t.key: t.depends_on for t in tasks}).prepare()
    except graphlib.CycleError as exc:
        raise ValueError(
            f"tasks depend on each other in a cycle: {' -> '.join(exc.args[1])}"
        ) from None


def load_job_spec(path: Path | str, job: str | None = None,
                  resolve: Callable[[str, str], str | None] | None = None) -> JobSpec:  # fmt: skip
    """Read ``path`` and check job ``job`` (optional when the file defines one job).

    Args:
        path: The YAML spec.
        job: The key under ``resources.jobs``.
        resolve: Maps (package_name, entry_point) to ``module:function`` or None;
            default: this project's console scripts.

    Raises:
        JobSpecError: Unreadable file, bad YAML, a malformed spec, an unknown job,
            dependency or reference, a cycle, or an entry point that does not exist.
    """
    path = Path(path)
    jobs = _parse(path, _read(path)).resources.jobs
    if job is None and len(jobs) > 1:
        raise JobSpecError(
            f"{path} defines several jobs ({', '.join(jobs)}): choose one with --job"
        )
    name = job if job is not None else next(iter(jobs))
    if name not in jobs:
        raise JobSpecError(f"{path} has no job {name!r} (jobs: {', '.join(jobs)})")
    raw = jobs[name]
    parameters = {p.name: p.default for p in raw.parameters}
    try:
        tasks = tuple(_task_spec(t, parameters, resolve or resolve_entry_point) for t in raw.tasks)
        _check_graph(tasks)
    except ValueError as exc:
        raise JobSpecError(f"{path}: job {name}: {exc}") from None
    return JobSpec(name, path.resolve(), parameters, tasks)
