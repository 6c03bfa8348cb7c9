"""Typed configuration: ``conf/base.yaml`` plus optional overlays, loaded once.

Models are frozen and forbid unknown fields, so a typo in YAML is an error that
names the file and the field, never a silently ignored setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "AppConfig",
    "ConfigError",
    "JoinConfig",
    "QualityConfig",
    "SimulateConfig",
    "default_conf_dir",
    "load_config",
]


class ConfigError(ValueError):
    """The configuration cannot be read or is invalid."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SimulateConfig(_Frozen):
    """Defaults of ``dkg simulate``."""

    dataset: str = "ZIPF"
    messages: int = Field(default=100_000, ge=1)
    rate: float = Field(default=2000.0, gt=0)
    seed: int = 42
    zipf_exponent: float = Field(default=1.4, gt=0)
    keys: int = Field(default=10_000, ge=1)
    shift_interval_s: float = Field(default=60.0, gt=0)
    workers: int = Field(default=10, ge=1)
    splitters: int = Field(default=1, ge=1)
    batch_size: int = Field(default=10_000, ge=1)
    window_ms: int = Field(default=60_000, gt=0)
    process_ms: float = Field(default=1.0, gt=0)
    speed: float = Field(default=1.0, gt=0)


class QualityConfig(_Frozen):
    """Thresholds of the data-quality suites (``<layer>/expectations.py``).

    Metric ranges are the formulas' own bounds; ``tolerance`` widens them only
    by floating-point rounding. The upper bounds that depend on the run (worker
    ids below W, ``dist_cost`` at most W) come from the run itself.
    """

    mostly: float = Field(default=1.0, gt=0, le=1)
    min_count: int = Field(default=1, ge=0)
    skew_s: tuple[float, float] = (0.0, 1.0)
    dist_cost_min: float = 1.0
    stddev_pct_min: float = 0.0
    imbalance_min: float = 0.0
    tolerance: float = Field(default=1e-9, ge=0)
    examples: int = Field(default=3, ge=1, le=20)


class JoinConfig(_Frozen):
    """Defaults of ``dkg join`` (the stream-stream join; times in ms of creation time)."""

    lefts: int = Field(default=200_000, ge=1)
    match_ratio: float = Field(default=0.9, ge=0, le=1)
    rate: float = Field(default=20_000.0, gt=0)
    partitions: int = Field(default=4, ge=1)
    gap_mean_ms: float = Field(default=200.0, ge=0)
    gap_max_ms: int = Field(default=1_000, ge=0)
    jump_fraction: float = Field(default=0.02, ge=0, le=1)
    jump_max_ms: int = Field(default=300, ge=0)
    stall_at_fraction: float = Field(default=0.5, ge=0, le=1)
    seed: int = 42
    window_ms: int = Field(default=2_000, ge=0)
    sync_delay_ms: int = Field(default=500, ge=0)
    shards: int = Field(default=2, ge=1)
    max_offsets_per_trigger: int = Field(default=200_000, ge=1)
    stats_window_ms: int = Field(default=10_000, gt=0)


class AppConfig(_Frozen):
    """The whole configuration."""

    simulate: SimulateConfig = SimulateConfig()
    quality: QualityConfig = QualityConfig()
    join: JoinConfig = JoinConfig()
    groupings: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def grouping_params(self, name: str) -> dict[str, Any]:
        """Configured parameters of a grouping (case-insensitive name)."""
        for configured, params in self.groupings.items():
            if configured.upper() == name.upper():
                return dict(params or {})
        return {}


def default_conf_dir() -> Path:
    """The repository's ``conf/`` folder."""
    return Path(__file__).resolve().parents[1] / "conf"


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(
            f"{path}{where}: not valid YAML ({getattr(exc, 'problem', exc)})"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_config(*paths: Path | str) -> AppConfig:
    """Load ``conf/base.yaml`` (or the first path given) and merge later paths over it.

    Raises:
        ConfigError: unreadable file, bad YAML, or a setting that fails validation.
    """
    files = [Path(p) for p in paths] or [default_conf_dir() / "base.yaml"]
    data: dict[str, Any] = {}
    for path in files:
        data = _merge(data, _read_yaml(path))
    try:
        return AppConfig(**data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"{', '.join(map(str, files))}: {problems}") from None
