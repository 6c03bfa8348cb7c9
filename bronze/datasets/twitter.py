"""TWITTER_TICKER and TWITTER_ELECTION: JSON tweets whose tokens are the keys.

Both emit one UTF-8 JSON object per message::

    {"id": 2008746003906289664, "created_at": 1767225600000,
     "text": "Watching $AAPL $TSLA into the close", "lang": "en"}

``created_at`` is the event time in epoch milliseconds (equal to the Kafka
timestamp) and ``id`` a snowflake-style id built from it. The keys:

- TWITTER_TICKER: each distinct cashtag, without the ``$`` and upper case
  (``AAPL``), in order of appearance. A tweet has 1-3 distinct cashtags drawn
  Zipf-skewed (``spec.zipf_exponent``) from ``TICKERS``.
- TWITTER_ELECTION: each distinct ``@mention`` and ``#hashtag``, lower case
  with its sigil (``@govavamorgan``, ``#debate``), in order of appearance. A
  tweet mentions exactly one candidate (skewed over ``CANDIDATE_HANDLES``)
  followed by 0-2 distinct skewed hashtags, so a candidate always comes first.

Every key gives one tuple with count 1. Silver parses these with
``silver.parsers.json_tweets``.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from dataclasses import dataclass

import numpy as np

from bronze.datasets.base import TupleBatch
from bronze.datasets.chunked import ChunkedDataset
from bronze.datasets.sampling import draw_distinct, draw_ranks, zipf_cdf
from bronze.datasets.vocabulary import (
    CANDIDATE_HANDLES,
    ELECTION_CLOSERS,
    ELECTION_HASHTAGS,
    ELECTION_OPENERS,
    TICKER_CLOSERS,
    TICKER_OPENERS,
    TICKERS,
)

__all__ = ["TwitterElectionDataset", "TwitterTickerDataset", "render_tweet"]

# Twitter's snowflake epoch (2010-11-04T01:42:54.657Z); ids put time in the high bits.
_SNOWFLAKE_EPOCH_MS = 1_288_834_974_657
_SEQUENCE_MASK = (1 << 22) - 1


def render_tweet(tweet_id: int, created_at_ms: int, text: str) -> bytes:
    """One tweet message (non-ASCII text kept as UTF-8)."""
    return (
        f'{{"id": {tweet_id}, "created_at": {created_at_ms}, '
        f'"text": {json.dumps(text, ensure_ascii=False)}, "lang": "en"}}'
    ).encode()


@dataclass(frozen=True, slots=True)
class _TweetDraw:
    tokens: np.ndarray  # (tweets, width) indices into the key vocabulary
    per_tweet: np.ndarray  # how many leading columns of each row are used
    openers: np.ndarray
    closers: np.ndarray


def _draw_counts(
    rng: np.random.Generator, probabilities: tuple[float, ...], size: int
) -> np.ndarray:
    # Inverse CDF rather than rng.choice: explicit, and stable across numpy versions.
    return np.searchsorted(np.cumsum(probabilities), rng.random(size), side="right").astype(
        np.int64
    )


class _TweetDataset(ChunkedDataset[_TweetDraw]):
    """Tweets carrying several key tokens; subclasses choose the tokens and the text."""

    openers: tuple[str, ...]
    closers: tuple[str, ...]

    @abstractmethod
    def _keys(self) -> np.ndarray:
        """Tuple key of each token index (object array of ``str``)."""

    @abstractmethod
    def _text(self, tokens: list[int], opener: str, closer: str) -> str:
        """The tweet text containing ``tokens`` in order."""

    @abstractmethod
    def _draw_tokens(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
        """``(tokens, per_tweet)`` for ``count`` tweets."""

    def _draw(self, rng: np.random.Generator, first: int, timestamps: np.ndarray) -> _TweetDraw:
        count = len(timestamps)
        tokens, per_tweet = self._draw_tokens(rng, count)
        openers = rng.integers(0, len(self.openers), count)
        closers = rng.integers(0, len(self.closers), count)
        return _TweetDraw(tokens, per_tweet, openers, closers)

    def _chunk_tuples(
        self, draw: _TweetDraw, timestamps: np.ndarray
    ) -> tuple[TupleBatch, np.ndarray]:
        used = np.arange(draw.tokens.shape[1]) < draw.per_tweet[:, None]
        # Boolean masking walks rows in order, so tokens stay in text order.
        keys = self._keys()[draw.tokens[used]]
        batch = TupleBatch(
            keys, np.ones(len(keys), dtype=np.int64), np.repeat(timestamps, draw.per_tweet)
        )
        return batch, draw.per_tweet

    def _chunk_messages(
        self, draw: _TweetDraw, timestamps: np.ndarray, first: int
    ) -> tuple[list[bytes], list[bytes]]:
        keys_of = self._keys()
        keys, payloads = [], []
        rows = zip(
            draw.tokens.tolist(), draw.per_tweet.tolist(), draw.openers.tolist(),
            draw.closers.tolist(), timestamps.tolist(), strict=True,
        )  # fmt: skip
        for offset, (row, used, opener, closer, stamp) in enumerate(rows):
            tokens = row[:used]
            text = self._text(tokens, self.openers[opener], self.closers[closer])
            tweet_id = (max(stamp - _SNOWFLAKE_EPOCH_MS, 0) << 22) | (
                (first + offset) & _SEQUENCE_MASK
            )
            keys.append(keys_of[tokens[0]].encode())
            payloads.append(render_tweet(tweet_id, stamp, text))
        return keys, payloads


class TwitterTickerDataset(_TweetDataset):
    """Tweets with 1-3 distinct Zipf-skewed cashtags; key = the ticker symbol."""

    openers = TICKER_OPENERS
    closers = TICKER_CLOSERS
    # Share of tweets with 1, 2 and 3 cashtags.
    tags_per_tweet = (0.6, 0.3, 0.1)
    _symbols = np.array(TICKERS, dtype=object)
    _cashtags = tuple(f"${symbol}" for symbol in TICKERS)

    def _keys(self) -> np.ndarray:
        return self._symbols

    def _draw_tokens(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
        cdf = zipf_cdf(len(TICKERS), self.spec.zipf_exponent)
        tokens = draw_distinct(rng, cdf, count, len(self.tags_per_tweet))
        return tokens, 1 + _draw_counts(rng, self.tags_per_tweet, count)

    def _text(self, tokens: list[int], opener: str, closer: str) -> str:
        return f"{opener} {' '.join(self._cashtags[token] for token in tokens)} {closer}"


class TwitterElectionDataset(_TweetDataset):
    """Tweets naming one skewed candidate plus 0-2 hashtags; keys = lower-cased tokens."""

    openers = ELECTION_OPENERS
    closers = ELECTION_CLOSERS
    # Share of tweets with 0, 1 and 2 hashtags.
    hashtags_per_tweet = (0.3, 0.45, 0.25)
    # Token indices: candidates first, then hashtags (as written in the text).
    _tokens = CANDIDATE_HANDLES + ELECTION_HASHTAGS
    _token_keys = np.array([token.lower() for token in _tokens], dtype=object)

    def _keys(self) -> np.ndarray:
        return self._token_keys

    def _draw_tokens(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
        exponent = self.spec.zipf_exponent
        # One candidate column plus as many hashtag columns as the most a tweet has.
        width = len(self.hashtags_per_tweet)
        tokens = np.empty((count, width), dtype=np.int64)
        tokens[:, 0] = draw_ranks(rng, zipf_cdf(len(CANDIDATE_HANDLES), exponent), count)
        hashtag_cdf = zipf_cdf(len(ELECTION_HASHTAGS), exponent)
        tokens[:, 1:] = len(CANDIDATE_HANDLES) + draw_distinct(rng, hashtag_cdf, count, width - 1)
        return tokens, 1 + _draw_counts(rng, self.hashtags_per_tweet, count)

    def _text(self, tokens: list[int], opener: str, closer: str) -> str:
        hashtags = "".join(f" {self._tokens[token]}" for token in tokens[1:])
        return f"{opener} {self._tokens[tokens[0]]} {closer}{hashtags}"
