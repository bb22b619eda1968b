"""Dates named in text: the time a question asks about, and the day a fact was said.

A question that names a time ("in June", "in May 2023", "on 13 October, 2023") asks about
what was said then; fact_search favours facts said inside that window. A fact was said
on the date its provenance names (an agent remembering a conversation writes it there:
"conversation 2026-06-12", the contract's own example), else when it was recorded
(`valid_from`). Written dates are read in English month names or ISO form; nothing else
(weekdays, "last week") is guessed at.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memverbs.server.record import Frozen

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_PATTERNS = (  # most precise first; each match is taken out before the next pattern looks
    ("day", re.compile(rf"\b{_YEAR}-(\d\d)-(\d\d)\b")),
    ("day", re.compile(rf"\b{_DAY}\s+{_MONTH}\.?,?\s+{_YEAR}\b", re.IGNORECASE)),
    ("day", re.compile(rf"\b{_MONTH}\.?\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)),
    ("month", re.compile(rf"\b{_MONTH}\.?,?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)),
    ("month", re.compile(rf"\b(?:in|during|of|since|until|by)\s+{_MONTH}\b", re.IGNORECASE)),
    ("year", re.compile(rf"\b(?:in|during|of|since|until|by)\s+{_YEAR}\b", re.IGNORECASE)),
)
DAY_MS = 86_400_000


class Window(Frozen):
    """A time a question names: a day, a month (of one year, or of any year) or a year."""

    __slots__ = ("day", "month", "text", "year")
    year: int | None
    month: int | None
    day: int | None
    text: str  # the words that named it

    def __init__(self, year: int | None, month: int | None, day: int | None, text: str) -> None:
        super().__init__(year=year, month=month, day=day, text=text)

    def holds(self, ms: int) -> bool:
        at = datetime.fromtimestamp(ms / 1000, UTC)
        if self.day is not None and self.year is not None and self.month is not None:
            named = datetime(self.year, self.month, self.day, tzinfo=UTC)
            return abs((at - named).total_seconds()) * 1000 <= DAY_MS  # a day either way: time zones, late sessions
        return (self.year is None or at.year == self.year) and (self.month is None or at.month == self.month)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(name.lower()[:3]))


def windows(text: str) -> list[Window]:
    """The times a text names, most precise first."""
    found: list[Window] = []
    rest = text
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(rest):
            g = m.groups()
            try:
                if kind == "day" and g[0].isdigit() and len(g[0]) == 4:
                    w = Window(int(g[0]), int(g[1]), int(g[2]), m.group())
                elif kind == "day" and g[0].isdigit():
                    w = Window(int(g[2]), _month(g[1]), int(g[0]), m.group())
                elif kind == "day":
                    w = Window(int(g[2]), _month(g[0]), int(g[1]), m.group())
                elif kind == "month" and len(g) == 2:
                    w = Window(int(g[1]), _month(g[0]), None, m.group())
                elif kind == "month":
                    w = Window(None, _month(g[0]), None, m.group())
                else:
                    w = Window(int(g[0]), None, None, m.group())
                if w.day is not None:
                    datetime(w.year or 2000, w.month or 1, w.day)  # a real day, or not a date at all
            except ValueError:
                continue
            found.append(w)
        rest = pattern.sub(" ", rest)
    return found


def said_on(provenance: str | None, valid_from: int) -> int:
    """When a fact was said: the first day its provenance names, else when it was recorded."""
    for w in windows(provenance or ""):
        if w.day is not None and w.year is not None and w.month is not None:
            return int(datetime(w.year, w.month, w.day, tzinfo=UTC).timestamp() * 1000)
    return valid_from
