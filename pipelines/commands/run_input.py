"""What ``dkg run`` processes: a generated dataset, a CSV file of yours, or a topic as it is.

A generated dataset and a CSV file are produced into a topic first (once: a topic
that already holds them is reused) and their tuple rate is known; a topic named
with ``--format`` is read as it is, and its rate, which the queue model's load
needs, comes from a read-only sample.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from bronze.datasets.base import MessageSource
from core.config import Settings
from pipelines.commands.common import UsageError

__all__ = ["RunInput", "run_input"]


@dataclass(frozen=True)
class RunInput:
    """The topic a run reads and what it holds.

    Attributes:
        topic: the Kafka topic.
        source: what ``gold.runs`` records as the source (dataset, file or format name).
        source_type: how its messages are parsed.
        described: how the job's summary names the messages.
        messages: what to produce into the topic first; None: the topic as it is.
        count: how many messages ``messages`` holds.
        tuples_per_s: tuples per second of event time, when known without the topic.
    """

    topic: str
    source: str
    source_type: str
    described: str
    messages: MessageSource | None = None
    count: int = 0
    tuples_per_s: float | None = None


def _file_topic(path: Path) -> str:
    """A topic named after the file and its content: another file, another topic."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:8]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-")[:200] or "input"
    return f"csv-{stem}-{digest}"


def _from_file(path: Path, topic: str | None, settings: Settings) -> RunInput:
    from bronze.datasets.csv_input import CsvMessages, read_csv_tuples
    from pipelines.simulate import tuples_per_second
    from silver.parsers.registry import source_type_for

    messages = CsvMessages(path)  # a missing file or a bad line fails here, before Kafka
    rate = tuples_per_second(list(read_csv_tuples(path, settings.simulate.batch_size)))
    return RunInput(topic or _file_topic(path), path.name, source_type_for("keyed-json"),
                    f"{messages.tuples:,} rows of {path.name}", messages, messages.tuples, rate)  # fmt: skip


def _generated(topic: str | None, settings: Settings) -> RunInput:
    from bronze.datasets.registry import canonical_name, make_dataset
    from pipelines.commands.simulate import dataset_spec
    from silver.parsers.registry import parser_for

    spec = dataset_spec(settings)
    dataset = make_dataset(spec)  # an unknown dataset fails here, before Kafka and Spark
    source_type = canonical_name(spec.name)
    parser_for(source_type)
    return RunInput(topic or f"{spec.name.lower()}-{spec.messages}-s{spec.seed}", spec.name,
                    source_type, f"{spec.messages:,} {spec.name} messages", dataset,
                    spec.messages, dataset.tuples_per_second())  # fmt: skip


def run_input(args: argparse.Namespace, settings: Settings) -> RunInput:
    """What the command line and the settings ask the job to process.

    Raises:
        UsageError: ``--input`` with ``--format``, or ``--format`` without ``--topic``.
        CsvInputError: the ``--input`` file is missing or has a bad line.
        UnknownDatasetError: no dataset has that name.
    """
    from silver.parsers.registry import source_type_for

    message_format = settings.run.format
    if args.input is not None:
        if message_format is not None:
            raise UsageError("--input produces your file into a topic; --format reads a topic as "
                             "it is: give one")  # fmt: skip
        return _from_file(args.input, args.topic, settings)
    if message_format is None:
        return _generated(args.topic, settings)
    if not args.topic:
        raise UsageError("--format processes a topic as it is: name it with --topic")
    return RunInput(args.topic, message_format, source_type_for(message_format),
                    f"{message_format} messages")  # fmt: skip
