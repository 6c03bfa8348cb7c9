"""The join end to end: Kafka -> Spark (partition-aware join) -> Delta, pairs/s and memory.

Produces the two generated topics into a local broker, lets the broker settle,
then drains them through the job ``dkg join`` runs (the same ``run_join``), and
reports joined pairs per second of the join's own time, each micro-batch's
time, and the resident memory of the driver, the Spark JVM and its Python
workers, sampled every second (largest in the first and in the last quarter of
the run). The first micro-batch also starts Spark's Python workers and warms the
JVM's compiler; ``warm_pairs_per_s`` leaves it out.

    PYTHONPATH=. python bench/join_pipeline_bench.py --lefts 2000000
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import tempfile
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench.console import configure_logging
from bench.procfs import cpu_seconds, descendants, rss_mb, wait_until_idle
from bronze.join_data import JoinDataSpec, generate
from pipelines.core.broker import LocalBroker
from pipelines.core.paths import Warehouse
from pipelines.core.spark import build_spark
from pipelines.core.tables import DeltaRsBackend
from pipelines.join_job import JoinRequest, ensure_phase, ground_truth_check, run_join
from silver.join.engine import JoinParams

logger = logging.getLogger("bench.join_pipeline")


class _BatchLog(logging.Handler):
    """Each micro-batch's input rows and time, from the join job's progress log."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[tuple[int, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("join batch %s: %s rows in %s ms") and record.args:
            _batch, rows, millis, _phases = record.args  # type: ignore[misc]
            self.batches.append((int(rows), int(millis)))


def _kind(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            program = cmdline.read().split(b"\0", 1)[0]
    except OSError:
        return "gone"
    return "jvm" if program.endswith(b"java") else "python_workers"


_KINDS = ("driver", "jvm", "python_workers")


class _ProcessSampler(threading.Thread):
    """Every second: resident memory per process kind (driver = this process), CPU time per process."""

    def __init__(self, exclude: set[int]) -> None:
        super().__init__(daemon=True)
        self.exclude = exclude
        self.samples: list[dict[str, float]] = []
        self.cpu_first: dict[int, tuple[str, float]] = {}
        self.cpu_last: dict[int, float] = {}
        self._done = threading.Event()

    def _sample(self) -> None:
        sample = dict.fromkeys((*_KINDS, "workers"), 0.0)
        me = os.getpid()
        for pid in [me, *descendants(me)]:
            kind = "driver" if pid == me else _kind(pid)
            if pid in self.exclude or kind not in sample:
                continue
            try:
                cpu = cpu_seconds(pid)
            except OSError:
                continue
            sample[kind] += rss_mb(pid)
            sample["workers"] += kind == "python_workers"
            # A process seen first mid-run started mid-run: all its CPU time counts.
            self.cpu_first.setdefault(pid, (kind, cpu if not self.samples else 0.0))
            self.cpu_last[pid] = cpu
        self.samples.append(sample)

    def run(self) -> None:
        self._sample()
        while not self._done.wait(1.0):
            self._sample()

    def stop(self) -> None:
        self._done.set()
        self.join()

    def cpu_by_kind(self) -> dict[str, float]:
        """CPU-seconds each process kind used while sampled."""
        used = dict.fromkeys(_KINDS, 0.0)
        for pid, (kind, first) in self.cpu_first.items():
            used[kind] += self.cpu_last[pid] - first
        return {kind: round(value, 1) for kind, value in used.items()}

    def summary(self) -> dict[str, dict[str, int]]:
        """Per process kind and in total: the largest RSS (MB) in the first and last quarter."""
        quarter = max(1, len(self.samples) // 4)
        totals = [{**s, "total": sum(s[k] for k in _KINDS)} for s in self.samples]
        return {kind: {"first_quarter_max": round(max((s[kind] for s in totals[:quarter]), default=0)),
                       "last_quarter_max": round(max((s[kind] for s in totals[-quarter:]), default=0))}
                for kind in (*_KINDS, "total")}  # fmt: skip

    def per_minute(self) -> list[dict[str, int]]:
        """The largest RSS (MB) per kind in each minute, and the most Python workers alive."""
        minutes = [self.samples[start : start + 60] for start in range(0, len(self.samples), 60)]
        return [{**{kind: round(max(s[kind] for s in minute)) for kind in _KINDS},
                 "total": round(max(sum(s[k] for k in _KINDS) for s in minute)),
                 "workers": int(max(s["workers"] for s in minute))}
                for minute in minutes]  # fmt: skip


def _produce(request: JoinRequest) -> int:
    """Both topics, in a process of their own so the generated data stays out of the driver."""
    configure_logging()
    return ensure_phase(request, generate(request.data), 0)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Produce, settle, join; the figures as one JSON-ready dict."""
    root = Path(tempfile.mkdtemp(prefix="dkg-join-bench-"))
    data = JoinDataSpec(lefts=args.lefts)
    topics = (f"bench-{args.lefts}-left", f"bench-{args.lefts}-right")
    with LocalBroker(root / "kafka") as broker:
        bootstrap = broker.start()
        broker_pid = broker.status().pid
        request = JoinRequest(data, topics, bootstrap, JoinParams(partitions=(4, 4)),
                              max_offsets_per_trigger=args.max_offsets)  # fmt: skip
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as producer:
            produced = producer.submit(_produce, request).result()
        settled = wait_until_idle(broker_pid)
        spark = build_spark(app_name="dkg-join-bench", master="local[2]")
        processes = _ProcessSampler(exclude={broker_pid})
        processes.start()
        warehouse, backend = Warehouse(root / "lake"), DeltaRsBackend()
        batch_log = _BatchLog()
        logging.getLogger("pipelines.join_job").addHandler(batch_log)
        result = run_join(spark, request, warehouse, backend)
        processes.stop()
        check = ground_truth_check(backend, warehouse, result.run_id, data)
        spark.stop()
    matched, batches = result.summary["matched"], batch_log.batches
    # Pairs come out in proportion to the records read (one match ratio throughout).
    warm_rows, warm_ms = sum(r for r, _ in batches[1:]), sum(m for _, m in batches[1:])
    warm = matched / produced * warm_rows / (warm_ms / 1000) if warm_ms else 0.0
    return {"lefts": args.lefts, "messages": produced, "broker_settle_s": round(settled, 1),
            "join_s": round(result.join_seconds, 1),
            "pairs_per_s": round(matched / result.join_seconds), "warm_pairs_per_s": round(warm),
            "matched": matched, "check": check, "batches": batches,
            "cpu_s": processes.cpu_by_kind(), "rss_mb": processes.summary(),
            "rss_mb_per_minute": processes.per_minute()}  # fmt: skip


def main() -> None:
    """Command line: ``--lefts``, ``--max-offsets``, ``--output``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lefts", type=int, default=2_000_000)
    parser.add_argument("--max-offsets", type=int, default=200_000, help="per topic and batch")
    parser.add_argument("--output", type=Path, default=Path("bench/results/join_pipeline.json"))
    args = parser.parse_args()
    configure_logging()
    text = json.dumps(measure(args), indent=2)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)


if __name__ == "__main__":
    main()
