"""Typed configuration: models, the layered loader with provenance, and its reference."""

from __future__ import annotations

from core.config.loader import (
    ConfigError,
    LoadedSettings,
    default_conf_dir,
    load_settings,
    yaml_problem,
)
from core.config.models import (
    DatasetConfig,
    JoinConfig,
    KafkaConfig,
    QualityConfig,
    RunConfig,
    Settings,
    SimulateConfig,
    SparkConfig,
    WarehouseConfig,
)

__all__ = [
    "ConfigError",
    "DatasetConfig",
    "JoinConfig",
    "KafkaConfig",
    "LoadedSettings",
    "QualityConfig",
    "RunConfig",
    "Settings",
    "SimulateConfig",
    "SparkConfig",
    "WarehouseConfig",
    "default_conf_dir",
    "load_settings",
    "yaml_problem",
]
