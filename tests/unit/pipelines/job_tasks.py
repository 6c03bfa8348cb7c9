"""Tiny entry points for the job spec tests (stdlib only: they run in the test's process)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["append_main", "crash_main", "echo_main", "exit_main", "fail_main", "interrupt_main",
           "pid_main", "sleep_main"]


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


def echo_main(argv: list[str]) -> int:
    """Print argv on stdout (a result) and a progress line on stderr (not one)."""
    import sys

    print("working", file=sys.stderr)
    print(" ".join(argv))
    return 0


def pid_main(argv: list[str]) -> int:
    """Append this process's id to the file argv[0]."""
    import os

    with Path(argv[0]).open("a", encoding="utf-8") as out:
        out.write(f"{os.getpid()}\n")
    return 0


def crash_main(argv: list[str]) -> int:
    """Raise, as a bug would."""
    raise RuntimeError(f"bug {argv}")


def exit_main(argv: list[str]) -> int:
    """Leave through SystemExit with code argv[0]."""
    import sys

    sys.exit(int(argv[0]))


def interrupt_main(argv: list[str]) -> int:
    """Stop as Ctrl-C would."""
    raise KeyboardInterrupt
