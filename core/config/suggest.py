"""Unknown names in settings and specs: said as such, with the nearest known name."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

__all__ = ["unknown_name"]


def _model_of(annotation: Any) -> Any:
    """The model an annotation holds directly (``X``, ``X | None``), else the annotation."""
    if hasattr(annotation, "model_fields"):
        return annotation
    models = [a for a in getattr(annotation, "__args__", ()) if hasattr(a, "model_fields")]
    return models[0] if models and type(None) in annotation.__args__ else annotation


def _fields_at(model: type[BaseModel], path: Sequence[str]) -> list[str]:
    """The field names allowed beside ``path``'s last part."""
    current: Any = model
    for part in path[:-1]:
        current = _model_of(current)
        fields = getattr(current, "model_fields", None)
        if fields is not None:
            info = fields.get(part)
            current = info.annotation if info is not None else None
        else:  # a list index or a map key: step into the elements
            current = (getattr(current, "__args__", None) or (None,))[-1]
    return list(getattr(_model_of(current), "model_fields", {}))


def unknown_name(model: type[BaseModel], path: Sequence[str], what: str = "setting") -> str:
    """``unknown setting run.wrokers (did you mean run.workers?)`` for an extra field at ``path``."""
    near = difflib.get_close_matches(path[-1], _fields_at(model, path), n=1)
    dotted = ".".join(path)
    hint = f" (did you mean {'.'.join([*path[:-1], near[0]])}?)" if near else ""
    return f"unknown {what} {dotted}{hint}"
