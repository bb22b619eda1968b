"""A page text's words and prose lines, read once and kept: what search asks of every hit it shows.

For an untrusted caller search re-reads each hit's world view: did the query match there,
which line is the snippet, how many of the query's terms does the page hold (its evidence).
Every answer depends on the text alone, and the same pages come back query after query, so a
text is split once into its words and its prose lines with theirs, and kept in a small cache
bounded by the characters it holds. The answers are the plain definitions' (tests hold them to
those): a word of a text is one of `\\w+`'s runs of it lowercased; a prose line is a line of
`str.splitlines()`, stripped, neither blank nor a heading nor an HTML comment.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from memverbs.server.terms import spaceless, stem

_TERM = re.compile(r"\w+", re.UNICODE)
KEEP_CHARS = 2_000_000  # per cache: a few thousand pages of a session log's size
_V = TypeVar("_V")


class PageText:
    """One text's words (of the whole text lowercased) and prose lines (each with its own words)."""

    __slots__ = ("_sorted", "lines", "low", "words")

    def __init__(self, text: str) -> None:
        self.low = text.lower()
        self.words = frozenset(_TERM.findall(self.low))
        self._sorted: list[str] | None = None
        # (stripped, lowercased, its words) of each prose line, in order
        self.lines: list[tuple[str, str, frozenset[str]]] = []
        for line in text.splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith(("#", "<!--")):
                low = stripped.lower()
                self.lines.append((stripped, low, frozenset(_TERM.findall(low))))

    def has_word(self, word: str) -> bool:
        """Whether `word` is one of the text's words."""
        return word in self.words

    def has_stem(self, stemmed: str) -> bool:
        """Whether a word of the text that begins with `stemmed` has it as its stem (what a keyword index's
        prefix query matched, kept to the word's own family): only those words are stemmed, found by
        bisection in the text's words sorted once."""
        if self._sorted is None:
            self._sorted = sorted(self.words)
        ordered = self._sorted
        i = bisect_left(ordered, stemmed)
        while i < len(ordered) and ordered[i].startswith(stemmed):
            if stem(ordered[i]) == stemmed:
                return True
            i += 1
        return False

    def best_line(self, words: list[str]) -> str | None:
        """The first prose line holding the most of `words` (distinct words of it, plus each spaceless-script
        term found inside it); None when no line holds any."""
        wanted = frozenset(words) & self.words  # a word the whole text lacks is on no line
        spaced = [w for w in words if spaceless(w)]
        best, most = None, 0
        for stripped, low, line_words in self.lines:
            hits = len(line_words & wanted) if wanted else 0
            if spaced:
                hits += sum(1 for w in spaced if w in low)
            if hits > most:
                best, most = stripped, hits
        return best


class Kept(Generic[_V]):
    """What `build` makes of a text, kept for the texts seen last (least recently used out first),
    up to `chars` characters of them; a text longer than a tenth of that is built each time."""

    def __init__(self, build: Callable[[str], _V], chars: int = KEEP_CHARS) -> None:
        self.build, self.limit = build, chars
        self._held: OrderedDict[str, _V] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()  # HTTP workers share it

    def __call__(self, text: str) -> _V:
        with self._lock:
            value = self._held.get(text)
            if value is not None:
                self._held.move_to_end(text)
                return value
        value = self.build(text)
        if len(text) * 10 <= self.limit:
            with self._lock:
                if text not in self._held:
                    self._held[text] = value
                    self._chars += len(text)
                    while self._chars > self.limit:
                        old, _ = self._held.popitem(last=False)
                        self._chars -= len(old)
        return value


page_text: Kept[PageText] = Kept(PageText)


def holds(title: str | None, text: PageText, word: str) -> bool:
    """Whether `word` (one `\\w+` run) is a word of f"{title} {text}" lowercased: of the title's or the text's
    (the space between them is no word character, and lowercasing is per character except a final Σ, whose
    rule a space ends on both sides)."""
    if text.has_word(word):
        return True
    return bool(title) and word in _TERM.findall((title or "").lower())


def holds_stem(title: str | None, text: PageText, stemmed: str) -> bool:
    """Whether a word of f"{title} {text}" lowercased begins with `stemmed` and has it as its stem."""
    return text.has_stem(stemmed) or (
        bool(title) and any(w.startswith(stemmed) and stem(w) == stemmed for w in _TERM.findall((title or "").lower()))
    )


def inside(title: str | None, text: PageText, word: str) -> bool:
    """Whether `word` (no spaces) is inside f"{title} {text}" lowercased."""
    return word in text.low or word in (title or "").lower()
