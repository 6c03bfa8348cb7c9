"""Tiny entry points for the job spec tests (stdlib only, so task processes start fast)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["append_main", "fail_main", "sleep_main"]


def append_main(argv: list[str]) -> int:
    """Append argv[1:] to the file argv[0]; exit 3 when a file 'fail-<word>' exists beside it."""
    path = Path(argv[0])
    words = argv[1:]
    if any((path.parent / f"fail-{w}").exists() for w in words):
        print("asked to fail")
        return 3
    with path.open("a", encoding="utf-8") as out:
        out.write(" ".join(words) + "\n")
    return 0


def fail_main(argv: list[str]) -> int:
    """Always fail, saying so."""
    print("boom", argv)
    return 5


def sleep_main(argv: list[str]) -> int:
    """Sleep argv[0] seconds."""
    import time

    time.sleep(float(argv[0]))
    return 0
