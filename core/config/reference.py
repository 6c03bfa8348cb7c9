"""The configuration reference (``docs/config.md``), generated from the models.

Every setting with its type, default, environment variable and description, one
table per section. ``dkg config reference`` prints it; a test keeps the file in
``docs/`` equal to what the models say.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from core.config.loader import ENV_PREFIX
from core.config.models import Settings

__all__ = ["config_reference"]

_INTRO = """# Configuration reference

Generated from the models in `core/config/models.py` by `dkg config reference`; do not edit.

Each setting can be set, lowest precedence first, in `conf/base.yaml`, in a profile
(`conf/local.yaml` applies when no Kafka is named; `--profile NAME` picks another), in
`--config FILE` overlays, in an environment variable (`DKG_<SECTION>__<FIELD>`; a map
takes JSON, e.g. `DKG_KAFKA__CONSUMER='{"fetch.min.bytes": "1"}'`), or by a command-line
option. `dkg config show` prints the effective value of every setting and where it came
from. Secrets (marked *secret*) come only from the environment or from the file their
`*_file` setting names, and print as `**********`. `warehouse.storage_options` also
takes the standard `AWS_*` variables delta-rs reads (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ALLOW_HTTP`, ...).
"""


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin in (types.UnionType, typing.Union):
        names = [_type_name(a) for a in typing.get_args(annotation) if a is not type(None)]
        nullable = type(None) in typing.get_args(annotation)
        return " \\| ".join(names) + (" \\| null" if nullable else "")
    if origin is typing.Literal:
        return " \\| ".join(f"`{v}`" for v in typing.get_args(annotation))
    if origin in (dict, tuple, list):
        return "map" if origin is dict else "list"
    name = getattr(annotation, "__name__", str(annotation))
    return {"SecretStr": "*secret*", "PosixPath": "path", "Path": "path", "str": "text",
            "int": "integer", "float": "number", "bool": "true \\| false"}.get(name, name)  # fmt: skip


def _default(info: FieldInfo) -> str:
    value = info.default
    if isinstance(value, BaseModel):
        return ""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict | tuple | list):
        return "`{}`" if not value else f"`{list(value) if isinstance(value, tuple) else value}`"
    return f"`{value}`"


def _section(name: str, model: type[BaseModel], lines: list[str], path: tuple[str, ...]) -> None:
    lines += ["", f"## `{'.'.join(path)}`", "", (model.__doc__ or "").strip().splitlines()[0], "",
              "| setting | type | default | environment | description |",
              "|---|---|---|---|---|"]  # fmt: skip
    nested = []
    for field, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            nested.append((field, annotation))
            continue
        env = ENV_PREFIX + "__".join(p.upper() for p in (*path, field))
        lines.append(f"| `{field}` | {_type_name(annotation)} | {_default(info)} | `{env}` | "
                     f"{info.description or ''} |")  # fmt: skip
    for field, sub in nested:
        _section(field, sub, lines, (*path, field))


def config_reference() -> str:
    """The whole reference as Markdown."""
    lines = [_INTRO.rstrip()]
    for name, info in Settings.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            _section(name, annotation, lines, (name,))
        else:
            lines += ["", f"## `{name}`", "", info.description or "", "",
                      f"A map by grouping name; see `conf/base.yaml`. Environment: "
                      f"`{ENV_PREFIX}{name.upper()}__<GROUPING>__<PARAMETER>`."]  # fmt: skip
    return "\n".join(lines) + "\n"
