"""Progress on long work: a bar on a terminal, quiet when output is piped."""

from __future__ import annotations

import sys
from types import TracebackType

from tqdm import tqdm

__all__ = ["ProgressReporter"]


class ProgressReporter:
    """A tqdm bar on stderr, shown only when stderr is a terminal."""

    def __init__(self, total: int, unit: str = "it") -> None:
        self._bar = tqdm(total=total, unit=unit, unit_scale=True, file=sys.stderr,
                         disable=not sys.stderr.isatty(), leave=False, dynamic_ncols=True)  # fmt: skip

    def update_to(self, done: int, label: str = "") -> None:
        """Move the bar to ``done`` and show ``label``."""
        self._bar.set_description_str(label, refresh=False)
        self._bar.update(done - self._bar.n)

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._bar.close()
