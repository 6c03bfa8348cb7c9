"""A ``dkg`` job as the crash harness drives it: started, watched step by step, killed whole.

The job's stderr goes to a file; its step lines (:mod:`pipelines.steps`) say
which run and step it is in, and how many micro-batches the step committed. A
kill freezes the whole process tree first (SIGSTOP: the driver, the Spark JVM,
the Python workers; none can start another process or write another line),
reads the step it was in from the log, checks the driver is alive and stopped,
then SIGKILLs every frozen process at once and checks that the driver died of
that signal. So each kill is known to have hit a running job in a known step.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from bench.procfs import descendants, session_processes
from pipelines.steps import STEP_LINE

__all__ = ["JobProcess", "Kill", "Landing", "StepEvent", "landed_step"]


@dataclass(frozen=True)
class StepEvent:
    """A step line of the job, and when the harness saw it.

    Attributes:
        run_id: the run.
        step: the step.
        event: ``started``, ``done`` or ``batch`` (the step's streaming query committed ``batch``).
        seen_s: harness clock.
        batch: the micro-batch's id, for ``batch`` events.
    """

    run_id: str
    step: str
    event: str
    seen_s: float
    batch: int | None = None


@dataclass(frozen=True)
class Landing:
    """Where a job was when it was frozen.

    Attributes:
        run_id: the run of ``step`` (None before the first step).
        step: the step open at the freeze; ``start`` before the first step; ``after X``
            between X's end and the next step.
        since_s: when (harness clock) the job entered it (None for ``start``).
        batches: micro-batches the step committed in this life before the freeze.
    """

    run_id: str | None
    step: str
    since_s: float | None
    batches: int = 0


@dataclass(frozen=True)
class Kill:
    """One kill, confirmed: where it was aimed, where the job was, and what died.

    Attributes:
        target: where it was aimed (a run's step and its micro-batch).
        delay_s: seconds after the target's point was reached that the kill was due.
        landed: where the job was when it was frozen.
        in_step_s: seconds the job had been in the landed step (None for ``start``).
        processes: processes frozen and killed (driver, JVM, Python workers).
        unit: where it landed, named as the target is (set by the harness, which knows
            what earlier lives committed).
    """

    target: str
    delay_s: float
    landed: Landing
    in_step_s: float | None
    processes: int
    unit: str = ""


def landed_step(events: Sequence[StepEvent]) -> Landing:
    """The step a job is in after ``events`` (one life's), and since when."""
    open_steps: list[StepEvent] = []
    last: StepEvent | None = None
    batches = 0
    for event in events:
        if event.event == "batch":
            batches += 1
            continue
        if event.event == "started":
            open_steps.append(event)
        elif open_steps and open_steps[-1].step == event.step:
            open_steps.pop()
        last, batches = event, 0
    if open_steps:
        step = open_steps[-1]
        return Landing(step.run_id, step.step, step.seen_s, batches)
    if last is None:
        return Landing(None, "start", None)
    return Landing(last.run_id, f"after {last.step}", last.seen_s)


def _state(pid: int) -> str | None:
    """The process state letter (``R``, ``S``, ``T``, ``Z``, ...), None if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


@dataclass
class JobProcess:
    """A running ``dkg`` command; its step lines are read from its stderr file."""

    argv: Sequence[str]
    log: Path
    env: Mapping[str, str]
    cwd: Path
    events: list[StepEvent] = field(default_factory=list)
    _process: subprocess.Popen[bytes] | None = None
    _read: int = 0
    _partial: bytes = b""

    def start(self) -> JobProcess:
        """Start the command (its own session: a Ctrl-C of the harness is not its)."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as stderr:
            self._process = subprocess.Popen(list(self.argv), cwd=self.cwd, env=dict(self.env),  # noqa: S603
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                             stderr=stderr, start_new_session=True)  # fmt: skip
        return self

    @property
    def pid(self) -> int:
        """The driver's process id."""
        assert self._process is not None, "not started"
        return self._process.pid

    def returncode(self) -> int | None:
        """The exit status once the driver has ended (negative: killed by that signal)."""
        assert self._process is not None, "not started"
        return self._process.poll()

    def poll_steps(self) -> list[StepEvent]:
        """Read the log's new complete lines; every step event so far."""
        with self.log.open("rb") as log:
            log.seek(self._read)
            chunk = log.read()
        self._read += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        now = time.monotonic()
        for line in lines:
            match = STEP_LINE.match(line.decode(errors="replace"))
            if match:
                batch = None if match["batch"] is None else int(match["batch"])
                self.events.append(StepEvent(match["run_id"], match["step"],
                                             "batch" if batch is not None else match["event"],
                                             now, batch))  # fmt: skip
        return self.events

    def wait(self, timeout_s: float, interval_s: float = 0.01) -> int:
        """Follow the job's steps until the driver and every other process of its session
        ended (the Spark JVM outlives the driver a little); the driver's exit status.

        Raises:
            TimeoutError: it still runs after ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        while (code := self.returncode()) is None or session_processes(self.pid):
            self.poll_steps()
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{self.log.name}: the job still runs after {timeout_s:.0f} s")
            time.sleep(interval_s)
        self.poll_steps()
        return code

    def tail(self, chars: int = 3000) -> str:
        """The end of the job's stderr (for a failure's message)."""
        return self.log.read_text(errors="replace")[-chars:]

    def _freeze(self, timeout_s: float = 10.0) -> list[int]:
        """SIGSTOP the driver and every process below it, until no new one appears and
        every one has stopped (a signal is delivered asynchronously)."""
        frozen: list[int] = []
        deadline = time.monotonic() + timeout_s
        while True:
            fresh = [p for p in (self.pid, *descendants(self.pid)) if p not in frozen]
            for pid in fresh:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                frozen.append(pid)
            running = [p for p in frozen if _state(p) not in (None, "T", "Z")]
            if not fresh and not running:
                return frozen
            assert time.monotonic() < deadline, f"processes {running} did not stop"
            time.sleep(0.001)

    def kill(self, target: str, delay_s: float, timeout_s: float = 60.0) -> Kill | None:
        """Kill the whole job now; None if it had already ended on its own (a missed kill).

        Raises:
            AssertionError: the kill cannot be confirmed (the driver was not stopped
                while frozen, did not die of SIGKILL, or a process outlived it).
        """
        if self.returncode() is not None:
            self.poll_steps()  # its last lines: how long its steps took
            return None
        frozen = self._freeze()
        if self.returncode() is not None:  # it ended between the check and the freeze
            for pid in frozen:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            return None
        state = _state(self.pid)
        assert state == "T", f"driver {self.pid} not stopped before the kill (state {state})"
        # Stopped: nothing more reaches the log, so its last step line is where the job is.
        landed = landed_step(self.poll_steps())
        in_step = None if landed.since_s is None else time.monotonic() - landed.since_s
        for pid in frozen:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        code = self.wait(timeout_s)
        assert code == -signal.SIGKILL, f"driver {self.pid} ended with {code}, not by SIGKILL"
        deadline = time.monotonic() + timeout_s
        while alive := [p for p in frozen if _state(p) not in (None, "Z")]:
            assert time.monotonic() < deadline, f"processes {alive} outlived the kill"
            time.sleep(0.05)
        return Kill(target, delay_s, landed, in_step, len(frozen))

    def stop(self) -> None:
        """Kill what is left of the job (cleanup after a failure of the harness)."""
        if self._process is not None and self._process.poll() is None:
            self.kill("cleanup", 0.0)
