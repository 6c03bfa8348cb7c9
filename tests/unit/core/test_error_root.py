"""Every error class of the project is a user error (DkgError) unless it is one of
the few that never reach a user as such: no hand-kept list decides what the CLI
reports as one line."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import bronze
import core
import gold
import pipelines
import silver
from core.errors import DkgError, describe

# Caught where they are raised and turned into something else, never shown as they are.
INTERNAL = {
    "silver.parsers.common.ParseError",  # a malformed message: quarantined
    "core.spark.jvm_output.JvmStartError",  # re-raised as SparkSetupError
    "pipelines.job_specs.task_call.TaskTimeout",  # ends a task thread; the job reports it
}


def _project_error_classes() -> dict[str, type[BaseException]]:
    found = {}
    for package in (core, bronze, silver, gold, pipelines):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name.endswith("__main__") or info.name == "pipelines.worker_daemon":  # entry points
                continue
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if issubclass(cls, BaseException) and cls.__module__ == info.name:
                    found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


def test_every_error_class_but_the_internal_ones_is_a_user_error():
    classes = _project_error_classes()
    assert INTERNAL <= classes.keys(), "an internal error class moved: update INTERNAL"
    strays = sorted(name for name, cls in classes.items()
                    if name not in INTERNAL and not issubclass(cls, DkgError))  # fmt: skip
    assert strays == []
    assert len(classes) > 15  # the walk found the project's classes at all


def test_a_refused_setting_names_each_field():
    from pydantic import ValidationError

    from core.config.models import RunConfig

    with pytest.raises(ValidationError) as refused:
        RunConfig(workers=0, load=-1)
    assert describe(refused.value).split("; ") == [
        "workers: Input should be greater than or equal to 1",
        "load: Input should be greater than 0",
    ]
