"""Load the settings from their layers, remembering where each value came from.

Layers, each over the one before: the models' defaults, ``conf/base.yaml``, a
profile (``conf/<name>.yaml``), ``--config`` files, the standard ``AWS_*``
environment variables (into ``warehouse.storage_options``, as delta-rs reads
them), ``DKG_<SECTION>__<FIELD>`` environment variables, then command-line
options. The ``local`` profile holds what the embedded broker needs; it applies
only when no layer names a Kafka (``kafka.bootstrap_servers``).

Secrets never come from YAML: a typed secret comes from its environment
variable or from the file its ``*_file`` field names, and a YAML option map
refuses a value whose name marks it as a secret.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, SecretStr, ValidationError

from core.config.models import Settings
from core.config.secrets import is_secret_key
from core.config.suggest import unknown_name
from core.errors import DkgError

__all__ = [
    "AWS_ENVIRONMENT",
    "ENV_PREFIX",
    "ConfigError",
    "LoadedSettings",
    "default_conf_dir",
    "load_settings",
    "yaml_problem",
]

ENV_PREFIX = "DKG_"
AWS_ENVIRONMENT = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID",
                   "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                   "AWS_DEFAULT_REGION", "AWS_ALLOW_HTTP")  # fmt: skip
"""Environment variables delta-rs reads for S3, carried into ``warehouse.storage_options``."""

LOCAL_PROFILE = "local"
_FILE_SECRETS = {("kafka", "sasl_password"): "sasl_password_file",
                 ("kafka", "ssl_key_password"): "ssl_key_password_file"}  # fmt: skip
_OPTION_MAPS = {("kafka", "client"), ("kafka", "consumer"), ("kafka", "producer"),
                ("kafka", "admin"), ("kafka", "topics", "config"), ("spark", "conf"),
                ("warehouse", "storage_options")}  # fmt: skip

Path_ = tuple[str, ...]


class ConfigError(DkgError, ValueError):
    """The configuration cannot be read or is invalid."""


def default_conf_dir() -> Path:
    """The project's ``conf/`` folder: the checkout's (an editable install), else the one a
    wheel installed under ``<prefix>/share/dkg-lakehouse/conf`` (pyproject.toml's data-files)."""
    checkout = Path(__file__).resolve().parents[2] / "conf"
    if checkout.is_dir():
        return checkout
    return Path(sys.prefix) / "share" / "dkg-lakehouse" / "conf"


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def yaml_problem(exc: yaml.YAMLError | UnicodeDecodeError) -> str:
    """What is wrong with a YAML file's text, on one line: ``line 3: not valid YAML (...)``.

    PyYAML's own messages span several lines (the problem, then where it is).
    """
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start})"
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}: " if mark is not None else ""
    problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
    return f"{where}not valid YAML ({problem})"


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {yaml_problem(exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _dotted(path: Path_) -> str:
    return ".".join(path)


def _leaves(value: Any, path: Path_) -> Iterator[Path_]:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)))
    else:
        yield path


@dataclass
class _Merged:
    data: dict[str, Any] = field(default_factory=dict)
    origins: dict[Path_, str] = field(default_factory=dict)

    def add(self, layer: Mapping[str, Any], label: str | Mapping[Path_, str],
            path: Path_ = ()) -> None:  # fmt: skip
        target = self.data
        for key in path:
            target = target.setdefault(key, {})
        for key, value in layer.items():
            here = (*path, str(key))
            if isinstance(value, dict) and isinstance(target.get(key), dict):
                self.add(value, label, here)
                continue
            target[key] = value
            for old in [p for p in self.origins if p[: len(here)] == here]:
                del self.origins[old]
            for leaf in _leaves(value, here):
                self.origins[leaf] = label if isinstance(label, str) else label[leaf]


def _normalized(data: Mapping[str, Any]) -> dict[str, Any]:
    # Grouping names are case-insensitive: one spelling, so layers merge.
    groupings = data.get("groupings")
    if not isinstance(groupings, dict):
        return dict(data)
    return {**data, "groupings": {str(k).upper(): v for k, v in groupings.items()}}


def _refuse_yaml_secrets(data: Mapping[str, Any], source: str) -> None:
    for secret, file_field in _FILE_SECRETS.items():
        section = data.get(secret[0])
        if isinstance(section, dict) and section.get(secret[1]) is not None:
            env = f"{ENV_PREFIX}{secret[0].upper()}__{secret[1].upper()}"
            raise ConfigError(f"{source}: {_dotted(secret)} is a secret; set it with {env} or "
                              f"{secret[0]}.{file_field}, not in YAML")  # fmt: skip
    for option_map in _OPTION_MAPS:
        values: Any = data
        for key in option_map:
            values = values.get(key) if isinstance(values, dict) else None
        names = values if isinstance(values, dict) else {}
        for name in names:
            if is_secret_key(str(name)):
                raise ConfigError(f"{source}: {_dotted(option_map)}.{name} is a secret; set it "
                                  "in the environment, not in YAML")  # fmt: skip


def _env_value(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _env_path(name: str) -> Path_:
    segments = name[len(ENV_PREFIX):].split("__")
    path: list[str] = []
    for segment in segments:
        # Keys of an option map keep their spelling (AWS_REGION); fields are lower case.
        keep = tuple(path) in _OPTION_MAPS or tuple(path) == ("groupings",)
        path.append(segment.upper() if tuple(path) == ("groupings",) else
                    segment if keep else segment.lower())  # fmt: skip
    return tuple(path)


def _nest(path: Path_, value: Any) -> dict[str, Any]:
    nested: Any = value
    for key in reversed(path):
        nested = {key: nested}
    return nested  # type: ignore[no-any-return]


def _environment_layers(env: Mapping[str, str], merged: _Merged) -> None:
    for name in AWS_ENVIRONMENT:
        if env.get(name):
            merged.add({"warehouse": {"storage_options": {name: env[name]}}}, f"env {name}")
    for name in sorted(env):
        if name.startswith(ENV_PREFIX) and name != f"{ENV_PREFIX}PROFILE" and env[name] != "":
            merged.add(_nest(_env_path(name), _env_value(env[name])), f"env {name}")


def _read_secret_files(merged: _Merged) -> None:
    for secret, file_field in _FILE_SECRETS.items():
        section = merged.data.get(secret[0]) or {}
        file_name = section.get(file_field)
        if file_name is None:
            continue
        if section.get(secret[1]) is not None:
            raise ConfigError(f"{_dotted(secret)} is set twice: by "
                              f"{merged.origins[secret]} and by {secret[0]}.{file_field}")  # fmt: skip
        try:
            value = Path(file_name).expanduser().read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise ConfigError(f"{secret[0]}.{file_field}: cannot read {file_name}: "
                              f"{exc.strerror or exc}") from None  # fmt: skip
        merged.add({secret[0]: {secret[1]: value}}, f"file {file_name}")


@dataclass(frozen=True)
class LoadedSettings:
    """The settings, the profile used, and where every value came from."""

    settings: Settings
    profile: str | None
    origins: Mapping[Path_, str]

    def origin(self, dotted: str) -> str:
        """Where ``dotted`` (e.g. ``run.workers``) got its value; ``default`` if from no layer."""
        return self.origins.get(tuple(dotted.split(".")), "default")

    def rows(self) -> list[tuple[str, str, str]]:
        """``(setting, value, origin)`` for every setting, secrets masked."""
        return list(_rows(self.settings, (), self.origins))


def _display(value: Any) -> str:
    if isinstance(value, SecretStr):
        return "**********"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_display(v) for v in value) + "]"
    return str(value)


def _rows(value: Any, path: Path_, origins: Mapping[Path_, str],
          name: str = "") -> Iterator[tuple[str, str, str]]:  # fmt: skip
    if isinstance(value, BaseModel):
        for field_name in type(value).model_fields:
            yield from _rows(getattr(value, field_name), (*path, field_name), origins,
                             f"{name}.{field_name}" if name else field_name)  # fmt: skip
    elif isinstance(value, dict) and value:
        for key, item in value.items():  # map keys may hold dots: shown in brackets
            yield from _rows(item, (*path, str(key)), origins, f"{name}[{key}]")
    else:
        shown = "{}" if isinstance(value, dict) else _display(value)
        yield name, shown, origins.get(path, "default")


def _profile_path(profile: str, conf_dir: Path) -> Path:
    candidate = Path(profile)
    if candidate.suffix in (".yaml", ".yml"):
        return candidate
    path = conf_dir / f"{profile}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in conf_dir.glob("*.yaml") if p.stem != "base")
        raise ConfigError(f"no profile {profile!r} (profiles: {', '.join(known)}; or a YAML path)")
    return path


def _describe_errors(exc: ValidationError, origins: Mapping[Path_, str]) -> str:
    problems = []
    for error in exc.errors():
        path = tuple(str(p) for p in error["loc"])
        where = next((origins[p] for p in origins if p[: len(path)] == path), "default")
        if error["type"] == "extra_forbidden":
            problems.append(f"{unknown_name(Settings, path)} (from {where})")
        else:
            problems.append(f"{_dotted(path)}: {error['msg']} (from {where})")
    return "; ".join(problems)


def load_settings(overlays: Sequence[Path | str] = (),
                  cli: Mapping[str, tuple[Any, str]] | None = None,
                  env: Mapping[str, str] | None = None, profile: str | None = None,
                  conf_dir: Path | None = None) -> LoadedSettings:  # fmt: skip
    """The settings of the given layers.

    Args:
        overlays: YAML files merged over the base and the profile, in order.
        cli: command-line values by dotted setting, with the option that set them.
        env: the environment (``os.environ`` for the command line; tests pass theirs).
        profile: a profile name or YAML path; None: ``local`` unless a Kafka is named.
        conf_dir: where ``base.yaml`` and the profiles are (default: the repository's).

    Raises:
        ConfigError: an unreadable file, bad YAML, a secret in YAML, an unknown
            setting or a value that fails validation; the message names its origin.
    """
    conf = conf_dir or default_conf_dir()
    env = {} if env is None else env
    upper = _Merged()  # everything above the profile, to see whether a Kafka is named
    for overlay in map(Path, overlays):
        data = _normalized(_read_yaml(overlay))
        _refuse_yaml_secrets(data, str(overlay))
        upper.add(data, _shown(overlay))
    _environment_layers(env, upper)
    for dotted, (value, option) in (cli or {}).items():
        upper.add(_nest(tuple(dotted.split(".")), value), option)
    named_kafka = (upper.data.get("kafka") or {}).get("bootstrap_servers") is not None
    profile = profile or env.get(f"{ENV_PREFIX}PROFILE") or (None if named_kafka else LOCAL_PROFILE)

    merged = _Merged()
    layers = [conf / "base.yaml"] + ([_profile_path(profile, conf)] if profile else [])
    for path in layers:
        data = _normalized(_read_yaml(path))
        _refuse_yaml_secrets(data, str(path))
        merged.add(data, _shown(path))
    merged.add(upper.data, upper.origins)
    _read_secret_files(merged)
    try:
        settings = Settings.model_validate(merged.data)
    except ValidationError as exc:
        raise ConfigError(_describe_errors(exc, merged.origins)) from None
    return LoadedSettings(settings, profile, dict(merged.origins))
