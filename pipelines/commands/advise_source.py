"""What ``dkg advise`` reads: a topic's read-only sample, or a file's tuples."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config import LoadedSettings, Settings
from pipelines.advice.sampled import SampledTuples
from pipelines.commands.common import UsageError

__all__ = ["AdviseSource", "read_file", "read_topic"]


@dataclass(frozen=True)
class AdviseSource:
    """The tuples to advise on, and where they came from.

    Attributes:
        tuples: the tuples, in routing order.
        tuples_per_s: their tuples per second of event time (None: unknown).
        splitters: routing instances the job would use (one per partition for a topic).
        by_partition: tuples go to their partition's splitter (a topic) or round-robin (a file).
        format: the messages' format (None for a file).
        facts: what the heading and ``--json`` say about the source.
    """

    tuples: SampledTuples
    tuples_per_s: float | None
    splitters: int
    by_partition: bool
    format: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """The source's facts, for JSON."""
        return {**self.facts, "format": self.format, "tuples": len(self.tuples),
                "tuples_per_s": self.tuples_per_s, "splitters": self.splitters}  # fmt: skip

    def heading(self) -> str:
        """One line on what was read."""
        facts = self.facts
        if "file" in facts:
            return f"read {len(self.tuples):,} tuples from {facts['file']}"
        complete = "" if facts["complete"] else " (stopped at --max-seconds)"
        refused = sum(facts["unparsed"].values())
        unparsed = f", {refused:,} not readable as {self.format}" if refused else ""
        return (f"sampled {facts['messages']:,} of {facts['topic_messages']:,} messages of "
                f"{facts['topic']} at {facts['bootstrap']} ({facts['partitions']} partitions, "
                f"up to {facts['chunks']} chunks each spread over its offsets) in "
                f"{facts['seconds']:.1f} s{complete}; format {self.format}{unparsed}")  # fmt: skip


def read_file(path: Path, settings: Settings) -> AdviseSource:
    """A CSV file's tuples (``key,count,timestamp_ms``), dealt round-robin as ``dkg simulate`` does.

    Raises:
        CsvInputError: the file cannot be read.
        UsageError: it holds no tuples.
    """
    from bronze.datasets.csv_input import read_csv_tuples
    from pipelines.advice.sampled import tuples_from_batches, tuples_per_second

    tuples = tuples_from_batches(list(read_csv_tuples(path, settings.simulate.batch_size)))
    if len(tuples) == 0:
        raise UsageError(f"{path} holds no tuples")
    return AdviseSource(tuples, tuples_per_second(tuples), settings.simulate.splitters, False,
                        facts={"file": str(path)})  # fmt: skip


def read_topic(args: argparse.Namespace, loaded: LoadedSettings) -> AdviseSource:
    """A topic's sample, parsed (the format from the settings, else guessed).

    Raises:
        BrokerError: Kafka cannot be reached, or has no such topic.
        UsageError: the topic is empty, or none of its sampled messages parse.
        UnknownSourceError: the format cannot be guessed.
    """
    from core.kafka.sample import sample_topic
    from pipelines.advice.formats import guess_format
    from pipelines.advice.sampled import parse_sample, tuples_per_second
    from pipelines.pipeline_runtime import open_runtime
    from pipelines.progress import ProgressReporter
    from silver.parsers.registry import source_type_for

    settings = loaded.settings
    budget = settings.advise
    with open_runtime(loaded, app_name="dkg-advise") as runtime:
        client = runtime.kafka
        with ProgressReporter(budget.max_messages, unit="msg", label=f"sampling {args.topic}") as bar:
            sample = sample_topic(client, args.topic, budget.max_messages, budget.max_seconds,
                                  budget.chunks, bar.update_to)  # fmt: skip
    if sample.topic_messages == 0:
        written = sum(high for _, high in sample.watermarks.values())
        gone = (f": all {written:,} messages written to it were deleted (retention)"
                if written else "")  # fmt: skip
        raise UsageError(f"topic {args.topic!r} on {client.bootstrap} has no messages to "
                         f"sample{gone}")  # fmt: skip
    if sample.messages == 0:
        raise UsageError(f"read no message of topic {args.topic!r} within --max-seconds "
                         f"{budget.max_seconds:g}")  # fmt: skip
    message_format = settings.run.format or guess_format(sample)
    tuples = parse_sample(sample, source_type_for(message_format))
    if len(tuples) == 0:
        reasons = ", ".join(f"{n:,} {r}" for r, n in sorted(tuples.unparsed.items()))
        raise UsageError(f"none of the {sample.messages:,} sampled messages of {args.topic!r} "
                         f"reads as {message_format} ({reasons}); is --format right?")  # fmt: skip
    facts = {"topic": args.topic, "bootstrap": client.bootstrap, "messages": sample.messages,
             "topic_messages": sample.topic_messages, "partitions": len(sample.watermarks),
             "chunks": budget.chunks, "seconds": sample.seconds, "complete": sample.complete,
             "unparsed": dict(tuples.unparsed)}  # fmt: skip
    return AdviseSource(tuples, tuples_per_second(tuples),
                        settings.run.splitters or len(sample.watermarks), True, message_format,
                        facts)  # fmt: skip
