"""The words a fact is searched by: one tokeniser for the index and the query, on both backends.

The keyword index over facts does not trust either database's tokeniser: FTS5's
unicode61 and Postgres's 'simple' parser split and fold text differently, neither
stems, and both keep a run of Chinese, Japanese or Thai (written without spaces)
as one token, so a word inside a longer run is never found. memverbs turns the
text into index terms itself (`index_text`), stores them beside the fact, and
both backends index those terms split on spaces; a query goes through the same
steps (`query_terms`), so what matches is decided here, once:

* Unicode NFKC, case-folded; accents dropped from Latin, Greek and Cyrillic letters
  (`café` = `cafe`), never from scripts whose marks are letters of their own (Thai vowels);
* words are runs of letters and digits (`Caroline's` → `caroline`, `s`); English words
  are stemmed with the Snowball English stemmer (`painting`, `paints` → `paint`);
* a run of a script written without spaces (Han, Hiragana, Katakana, Hangul, Thai,
  Lao, Khmer, Myanmar) is cut into overlapping pairs of characters (`北京烤鸭` →
  `北京 京烤 烤鸭`), the usual bigram indexing of CJK search engines: any word of two
  or more characters inside a run is found by its pairs;
* a query drops function words (`the`, `did`, `when`, …) unless nothing else is left.
"""

from __future__ import annotations

import _thread
import re
from functools import lru_cache

# Not `typing.TYPE_CHECKING`: the hooks import this module, and typing would cost them its import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class _Stemmer(Protocol):
        def stemWord(self, word: str) -> str: ...  # noqa: N802 - snowballstemmer's name

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Scripts written without spaces between words: a run is indexed by its character pairs. The class
# spans most of Unicode's planes, and compiling it costs a cold process milliseconds: it is compiled
# by the first text that is not plain ASCII (a hook's is usually plain ASCII).
_SPACELESS_CLASS = (
    "["
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    "\u31f0-\u31ff\uff66-\uff9f"  # Katakana extensions, half-width
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"  # Hangul
    "\U00020000-\U0003134f"  # Han extensions
    "]+"
)
_FOLDED_SCRIPTS_END = 0x0530  # Latin, Greek, Cyrillic: their accents are marks to drop
MAX_QUERY_TERMS = 32

# Function words and question words: they say how a question is asked, not what about.
STOP_WORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "about", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done", "doing", "have", "has", "had", "having", "it", "its", "this", "that", "these", "those", "there", "here", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all", "any", "each", "some", "no", "not", "only", "so", "than", "too", "very", "can", "will", "just", "should", "would", "could", "may", "might", "must", "shall", "we", "us", "you", "your", "yours", "he", "him", "his", "she", "her", "hers", "they", "them", "their", "theirs", "i", "me", "my", "mine", "our", "ours", "know", "tell", "say", "said", "anything", "something", "everything", "ever", "s", "t"]
)


@lru_cache(maxsize=1)
def _spaceless() -> re.Pattern[str]:
    return re.compile(_SPACELESS_CLASS)


# The HTTP server's worker threads may stem their first word at the same instant, and lru_cache does not
# serialize the loads: one thread's stand-in package (below) would be another's half-made
# `snowballstemmer`. `_thread` is built in, so the hooks' start-up pays nothing for the lock.
_STEMMER_LOAD = _thread.allocate_lock()
_LEAN_PACKAGE = "_memverbs_snowball"


@lru_cache(maxsize=1)
def _stemmer() -> _Stemmer:
    with _STEMMER_LOAD:
        return _load_stemmer()


def _load_stemmer() -> _Stemmer:
    """Snowball's English stemmer, loaded alone: the package's `__init__` imports all of its ~30
    languages (most of a CLI search's start-up), so its English module is imported from the package's
    folder under a private package name whose `__init__` never runs. The name is ours alone: an
    `import snowballstemmer` elsewhere, in this thread or another, runs the real package as usual."""
    import importlib  # noqa: PLC0415 - only where text is indexed or searched
    import importlib.util  # noqa: PLC0415
    import sys  # noqa: PLC0415

    found = importlib.util.find_spec("snowballstemmer")
    if found is not None and found.submodule_search_locations:
        if _LEAN_PACKAGE not in sys.modules:
            lean = importlib.util.spec_from_file_location(
                _LEAN_PACKAGE, found.origin, submodule_search_locations=list(found.submodule_search_locations)
            )
            if lean is not None:
                sys.modules[_LEAN_PACKAGE] = importlib.util.module_from_spec(lean)  # its __init__ not run
        if _LEAN_PACKAGE in sys.modules:
            english = importlib.import_module(f"{_LEAN_PACKAGE}.english_stemmer")
            stemmer: _Stemmer = english.EnglishStemmer()
            return stemmer
    import snowballstemmer  # noqa: PLC0415

    stemmer = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    if not word.isascii() or len(word) <= 2 or not word.isalpha():
        return word
    return _stemmer().stemWord(word)


def stem(word: str) -> str:
    """A lowercased word's Snowball English stem (`turtles` → `turtl`); a word that is not plain ASCII letters as it is."""
    return _stem(word)


def fold(text: str) -> str:
    """NFKC, case-folded, accents dropped from Latin, Greek and Cyrillic letters."""
    if text.isascii():  # NFKC leaves ASCII as it is, and case-folds it as lower() does
        return text.lower()
    import unicodedata  # noqa: PLC0415 - a cold hook's prompt is usually ASCII: ~1 ms it need not load

    text = unicodedata.normalize("NFKC", text).casefold()
    if text.isascii():
        return text
    out: list[str] = []
    base = 0
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch):
            if base < _FOLDED_SCRIPTS_END:
                continue
        else:
            base = ord(ch)
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def _pairs(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def words(text: str) -> list[str]:
    """The text's index terms in order, repeats kept (a term's count is its frequency)."""
    out: list[str] = []
    for token in _WORD.findall(fold(text)):
        if token.isascii():
            out.append(_stem(token))
            continue
        pos = 0
        for m in _spaceless().finditer(token):
            if m.start() > pos:
                out.append(_stem(token[pos : m.start()]))
            out.extend(_pairs(m.group()))
            pos = m.end()
        if pos < len(token):
            out.append(_stem(token[pos:]))
    return out


def index_text(text: str) -> str:
    """What the keyword index stores for a text: its terms, joined by spaces."""
    return " ".join(words(text))


def query_terms(text: str, cap: int | None = MAX_QUERY_TERMS) -> list[str]:
    """A query's distinct terms in order, without function words (unless nothing else is left), at most `cap`."""
    kept: list[str] = []
    every: list[str] = []
    for token in _WORD.findall(fold(text)):
        for term in words(token):
            if term not in every:
                every.append(term)
            if token not in STOP_WORDS and term not in kept:
                kept.append(term)
    return (kept or every)[:cap]


def spaceless(text: str) -> bool:
    """Whether the text holds a script written without spaces (its words are found by character pairs)."""
    return not text.isascii() and _spaceless().search(text) is not None


def around(text: str, needles: list[str], size: int = 300) -> str:
    """The `size` characters of `text` around the first needle found in it (case-folded), "…" where it goes on."""
    flat = " ".join(text.split())
    low = flat.casefold()
    at = min((i for i in (low.find(n) for n in needles) if i >= 0), default=0)
    start = max(0, min(at - size // 4, len(flat) - size))
    return ("…" if start else "") + flat[start : start + size] + ("…" if start + size < len(flat) else "")
