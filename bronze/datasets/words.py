"""WORDS_<LANG>: natural-language word streams drawn from real word frequencies.

The key universe is the ``spec.keys`` most frequent words of a language in the
``wordfreq`` package's ``best`` list (``top_n_list``: no multi-digit tokens) (its frequencies come from Wikipedia,
subtitles, news, books, web text and social media); a message is word ``w``
with probability proportional to ``wordfreq``'s frequency of ``w``, renormalized
over that universe. Unlike ZIPF these heads are flat: in English the hottest
word ("the") carries about 6 % of the tokens and a dozen more sit between 1 and
3 %, so at W = 50 many keys weigh about one worker's fair share.

The word lists come from the pinned ``wordfreq`` release, so a seed means the
same stream wherever that release is installed. Messages are keyed JSON
(:mod:`bronze.datasets.keyed`), one word per message.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from bronze.datasets.base import DatasetSpec
from bronze.datasets.keyed import KeyedDataset
from bronze.datasets.sampling import draw_ranks

__all__ = ["WORD_DATASETS", "WordsDataset", "word_frequencies"]

# wordfreq language code of each dataset: two Germanic, two Romance, one
# Cyrillic and one non-space-delimited language, so the heads differ in shape.
WORD_DATASETS: dict[str, str] = {
    "WORDS_EN": "en",
    "WORDS_DE": "de",
    "WORDS_ES": "es",
    "WORDS_FR": "fr",
    "WORDS_RU": "ru",
    "WORDS_JA": "ja",
}


@lru_cache(maxsize=8)
def word_frequencies(language: str, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` most frequent words of ``language`` and their renormalized shares.

    Args:
        language: a wordfreq language code such as ``en``.
        count: how many words (fewer if the list is shorter).

    Returns:
        ``(words, shares)``: an object array of ``str``, most frequent first (ties
        in wordfreq's own order), and float64 shares summing to 1. Cached; treat
        both as read-only.
    """
    # Imported here: loading the package's lists costs about a second, and only
    # these datasets need them.
    from wordfreq import get_frequency_dict, top_n_list

    # top_n_list leaves out multi-digit placeholders ("00", "0000"): wordfreq keeps
    # them to estimate numbers, they are not words.
    ranked = top_n_list(language, count, wordlist="best")
    frequencies = get_frequency_dict(language, wordlist="best")
    shares = np.array([frequencies[word] for word in ranked], dtype=np.float64)
    return np.array(ranked, dtype=object), shares / shares.sum()


@lru_cache(maxsize=8)
def _word_cdf(language: str, count: int) -> np.ndarray:
    cdf = np.cumsum(word_frequencies(language, count)[1])
    cdf[-1] = 1.0  # an inverse-CDF lookup never falls off the end through rounding
    return cdf


class WordsDataset(KeyedDataset):
    """Words of one language, each drawn with its real frequency."""

    def __init__(self, spec: DatasetSpec, name: str) -> None:
        """Bind the spec.

        Args:
            spec: what to generate (``spec.keys`` sizes the vocabulary).
            name: the canonical dataset name, a key of ``WORD_DATASETS``.
        """
        super().__init__(spec, name)
        self.language = WORD_DATASETS[name]

    def _vocabulary(self) -> np.ndarray:
        return word_frequencies(self.language, self.spec.keys)[0]

    def _draw(self, rng: np.random.Generator, first: int, timestamps: np.ndarray) -> np.ndarray:
        return draw_ranks(rng, _word_cdf(self.language, self.spec.keys), len(timestamps))
