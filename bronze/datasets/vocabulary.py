"""Fixed word lists the generators draw their keys and filler text from.

Plain data, no logic beyond building Wikipedia-like page titles. The lists are
fixed so a seed means the same stream on every machine and version; changing an
entry changes every generated run, so append rather than edit.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = [
    "CANDIDATE_HANDLES",
    "CLICKSTREAM_EXTERNAL_SOURCES",
    "CLICKSTREAM_OTHER_SOURCES",
    "COUNTRIES",
    "ELECTION_CLOSERS",
    "ELECTION_HASHTAGS",
    "ELECTION_OPENERS",
    "LANGUAGES",
    "TICKERS",
    "TICKER_CLOSERS",
    "TICKER_OPENERS",
    "page_titles",
]

# The first entry is the hot country of COUNTRY_SKEW_R*. A few names carry
# non-ASCII letters and apostrophes so the formats' escaping is exercised.
COUNTRIES: tuple[str, ...] = (
    "Turkey", "Argentina", "Australia", "Austria", "Bangladesh", "Belgium", "Brazil",
    "Bulgaria", "Canada", "Chile", "China", "Colombia", "Côte d'Ivoire", "Croatia",
    "Czechia", "Denmark", "Egypt", "Estonia", "Ethiopia", "Finland", "France", "Germany",
    "Ghana", "Greece", "Hungary", "Iceland", "India", "Indonesia", "Iran", "Ireland",
    "Israel", "Italy", "Japan", "Kenya", "Latvia", "Lithuania", "Malaysia", "Mexico",
    "Morocco", "Netherlands", "New Zealand", "Nigeria", "Norway", "Pakistan", "Peru",
    "Philippines", "Poland", "Portugal", "Romania", "Saudi Arabia", "Senegal", "Serbia",
    "Singapore", "Slovakia", "South Africa", "South Korea", "Spain", "Sweden",
    "Switzerland", "Thailand", "Tunisia", "Ukraine", "United Kingdom", "United States",
    "Uruguay", "Vietnam", "São Tomé and Príncipe",
)  # fmt: skip

# Listed roughly by popularity, so Zipf rank 1 (AAPL) is the hottest ticker.
TICKERS: tuple[str, ...] = (
    "AAPL", "TSLA", "NVDA", "AMZN", "MSFT", "META", "GOOGL", "AMD", "SPY", "QQQ",
    "NFLX", "BABA", "PLTR", "COIN", "GME", "AMC", "INTC", "BA", "DIS", "NIO",
    "UBER", "PYPL", "SHOP", "SQ", "SNAP", "F", "GM", "JPM", "BAC", "WMT",
    "KO", "PEP", "MCD", "NKE", "SBUX", "T", "VZ", "XOM", "CVX", "PFE",
    "MRNA", "JNJ", "ABBV", "LLY", "UNH", "V", "MA", "GS", "MS", "C",
    "WFC", "ORCL", "CRM", "ADBE", "CSCO", "IBM", "QCOM", "AVGO", "MU", "TSM",
    "ASML", "ARM", "SMCI", "RIVN", "LCID", "SOFI", "HOOD", "RBLX", "ROKU", "ZM",
    "DOCU", "SPOT", "ABNB", "DASH", "LYFT", "PINS", "ETSY", "EBAY", "TGT", "COST",
    "HD", "LOW", "CAT", "DE", "GE", "MMM", "HON", "LMT", "RTX", "NOC",
    "DAL", "UAL", "AAL", "CCL", "RCL", "MARA", "RIOT", "MSTR", "ARKK", "IWM",
)  # fmt: skip

TICKER_OPENERS: tuple[str, ...] = (
    "Watching", "Bought more", "Trimmed my position in", "Big volume on",
    "Earnings today for", "Charts look strong for", "Loading up on", "Options flow on",
    "Gap up for", "Taking profits on", "Long", "Short",
)  # fmt: skip
TICKER_CLOSERS: tuple[str, ...] = (
    "into the close", "today", "after hours", "this week", "before the open",
    "on the dip", "🚀", "📉", "for the long run", "no position yet",
)  # fmt: skip

# Fictional candidates: the dataset studies key skew, not politics.
CANDIDATE_HANDLES: tuple[str, ...] = (
    "@GovAvaMorgan", "@SenLeoHart", "@RepMayaChen", "@MayorSamOrtiz",
    "@JudgeEllaReed", "@DrOmarBaker", "@NoraKingForUS", "@TheoWalshHQ",
)  # fmt: skip
ELECTION_HASHTAGS: tuple[str, ...] = (
    "#Election2028", "#Debate", "#Vote", "#Polls", "#EarlyVoting", "#Economy",
    "#Healthcare", "#Climate", "#Jobs", "#TownHall", "#SwingStates", "#GOTV",
    "#Ballot", "#Primaries", "#Caucus", "#Education", "#Housing", "#Taxes",
    "#Infrastructure", "#ElectionNight",
)  # fmt: skip
# No '@', '#' or '$' in filler text: only the drawn tokens may look like keys.
ELECTION_OPENERS: tuple[str, ...] = (
    "Just watched", "Listening to", "Big rally for", "New poll numbers for",
    "Debate night with", "Interview with", "Strong answer from", "Fact check on",
)  # fmt: skip
ELECTION_CLOSERS: tuple[str, ...] = (
    "tonight", "at the town hall", "on the economy", "in Ohio", "on healthcare",
    "this morning", "in the swing states", "on the debate stage",
)  # fmt: skip

# Wikipedia language editions, roughly by traffic (rank 1 = en).
LANGUAGES: tuple[str, ...] = (
    "en", "ja", "de", "es", "ru", "fr", "it", "zh", "pt", "pl", "nl", "ar", "fa",
    "sv", "id", "uk", "ko", "vi", "he", "tr", "cs", "fi", "hu", "no", "ro", "th",
    "da", "el", "bn", "hi",
)  # fmt: skip

CLICKSTREAM_EXTERNAL_SOURCES: tuple[str, ...] = ("other-search", "other-external", "other-empty")
CLICKSTREAM_OTHER_SOURCES: tuple[str, ...] = ("other-internal", "other-other")

# The hottest titles, then titles composed from words.
_FIXED_TITLES: tuple[str, ...] = (
    "Main_Page", "Special:Search", "United_States", "Deaths_in_2026", "Pokémon",
    "Ludwig_van_Beethoven", "Café", "Wikipedia", "YouTube", "Taylor_Swift",
)  # fmt: skip
_TITLE_WORDS: tuple[str, ...] = (
    "History", "Geography", "Music", "Film", "River", "Mountain", "Battle", "Empire",
    "Kingdom", "Republic", "University", "Library", "Bridge", "Castle", "Island",
    "Lake", "Festival", "Theory", "Algebra", "Physics", "Chemistry", "Biology",
    "Railway", "Airport", "Football", "Cricket", "Opera", "Novel", "Poetry",
    "Painting", "Cathedral", "Temple", "Harbor", "Desert", "Forest", "Volcano",
    "Comet", "Galaxy", "Planet", "Language", "Dynasty", "Revolution", "Treaty",
    "Election", "Parliament", "Museum", "Garden", "Tower", "Valley", "Canal",
)  # fmt: skip


@lru_cache(maxsize=4)
def page_titles(count: int) -> np.ndarray:
    """``count`` distinct Wikipedia-style titles (no spaces), rank 1 first.

    Titles past the fixed ones spell their index in bijective base-``len(words)``
    (``History``, ..., ``History_History``, ...), so they are distinct by construction.

    Args:
        count: how many titles.

    Returns:
        An object array of ``str``; cached, treat it as read-only.
    """
    words, base = _TITLE_WORDS, len(_TITLE_WORDS)
    titles = list(_FIXED_TITLES[:count])
    for index in range(count - len(titles)):
        parts, number = [], index
        while number >= 0:
            parts.append(words[number % base])
            number = number // base - 1
        titles.append("_".join(parts))
    return np.array(titles, dtype=object)
