"""A topic's message format when ``--format`` is not given: from its name, else from its messages.

1. A topic ``dkg run`` generated is named ``<dataset>-<messages>-s<seed>``
   (``zipf-100000-s42``): the dataset names the format.
2. Otherwise each format's silver parser tries the sample's first messages;
   the format that reads (nearly) all of them, alone, is the answer. Two that
   read them equally well (tweets read as cashtags or as mentions, pageviews by
   title or by language) cannot be told apart: the user names one.
"""

from __future__ import annotations

import re

from bronze.datasets.registry import UnknownDatasetError, canonical_name
from core.kafka.sample import TopicSample
from silver.parsers.registry import (
    ParseError,
    UnknownSourceError,
    formats,
    parser_for,
    source_type_for,
)

__all__ = ["SNIFF_MESSAGES", "format_of", "guess_format"]

SNIFF_MESSAGES = 200
"""Messages each format's parser tries."""
_ENOUGH = 0.9  # share of them a format must read
_GENERATED = re.compile(r"(?P<dataset>.+)-[0-9]+-s-?[0-9]+")


def format_of(source_type: str) -> str:
    """The format name of a source type's messages (``ZIPF`` -> ``keyed-json``); the source
    type itself when no format name reads them."""
    parser = parser_for(source_type)
    return next((f for f in formats() if parser_for(source_type_for(f)) is parser), source_type)


def _from_name(topic: str) -> str | None:
    match = _GENERATED.fullmatch(topic)
    if match is None:
        return None
    try:
        return format_of(canonical_name(match.group("dataset")))
    except (UnknownDatasetError, UnknownSourceError):
        return None


def _reads(name: str, sample: TopicSample) -> float:
    parse = parser_for(source_type_for(name))
    tried = read = 0
    for chunk in sample.chunks:
        for value, stamp in zip(chunk.values, chunk.timestamps_ms.tolist(), strict=True):
            if tried == SNIFF_MESSAGES:
                return read / tried
            tried += 1
            try:
                read += bool(value is not None and parse(value, stamp))
            except ParseError:
                pass
    return read / tried if tried else 0.0


def guess_format(sample: TopicSample) -> str:
    """The format of the sampled topic's messages (see the module's docstring).

    Raises:
        UnknownSourceError: no format, or more than one, reads them.
    """
    named = _from_name(sample.topic)
    if named is not None:
        return named
    scores = {name: _reads(name, sample) for name in formats()}
    best = max(scores.values(), default=0.0)
    winners = [name for name, score in scores.items() if score == best]
    advice = f"name it with --format ({', '.join(formats())} or a dataset's name)"
    if best < _ENOUGH:
        raise UnknownSourceError(f"cannot tell the format of topic {sample.topic!r}: no format "
                                 f"reads {_ENOUGH:.0%} of its first messages; {advice}")  # fmt: skip
    if len(winners) > 1:
        raise UnknownSourceError(f"cannot tell the format of topic {sample.topic!r}: "
                                 f"{' and '.join(winners)} both read its messages; {advice}")  # fmt: skip
    return winners[0]
