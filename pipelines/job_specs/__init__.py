"""Job specs in the shape of a Databricks Jobs / Asset Bundle definition, run locally."""

from __future__ import annotations

from pipelines.job_specs.runner import JobRun, TaskResult, run_job
from pipelines.job_specs.spec import JobSpec, JobSpecError, TaskSpec, load_job_spec

__all__ = [
    "JobRun",
    "JobSpec",
    "JobSpecError",
    "TaskResult",
    "TaskSpec",
    "load_job_spec",
    "run_job",
]
