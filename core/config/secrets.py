"""Secret values in option maps: recognised by their names, hidden until handed to a client.

Typed secret fields (``kafka.sasl_password``) are pydantic ``SecretStr``. Free-form
option maps (``kafka.consumer``, ``warehouse.storage_options``) pass settings to
librdkafka and delta-rs as they are; a value whose name says it is a secret
(``sasl.password``, ``AWS_SECRET_ACCESS_KEY``) is wrapped in ``SecretStr`` as it is
read, so printing or logging the settings shows ``**********``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, SecretStr

__all__ = ["OptionMap", "is_secret_key", "protect", "reveal"]

_SECRET_NAME = re.compile(r"(?i)secret|password|token|credential|private")


def is_secret_key(name: str) -> bool:
    """Whether an option of this name holds a secret."""
    return bool(_SECRET_NAME.search(name))


def _text(value: Any) -> str:
    # YAML reads `true` and `1` as bool and int; clients take their settings as strings.
    if isinstance(value, bool):
        return str(value).lower()
    return value.get_secret_value() if isinstance(value, SecretStr) else str(value)


def protect(options: Any) -> Any:
    """Option values as strings, those under a secret name as ``SecretStr``."""
    if not isinstance(options, Mapping):
        return options  # pydantic reports the wrong type
    return {str(k): SecretStr(_text(v)) if is_secret_key(str(k)) else _text(v)
            for k, v in options.items()}  # fmt: skip


def reveal(options: Mapping[str, str | SecretStr]) -> dict[str, str]:
    """The plain values, for the client that needs them."""
    return {key: _text(value) for key, value in options.items()}


OptionMap = Annotated[dict[str, str | SecretStr], BeforeValidator(protect)]
"""Settings passed to a client as they are; secret values hidden."""
