"""When a commitment is due, as a date: "by Friday", said on Monday 2025-03-03, is 2025-03-07.

A stated deadline is read against the moment it was said (the transcript's time of the turn, not
the capture's): a weekday is the next one after that day ("by Friday" on a Friday is the week
after), "today", "tomorrow", "end of the week" (its Friday), "next week" (its Monday), "end of the
month", and explicit dates ("June 3", "3 June", "2026-07-10"; a month-day without a year is the
next such day). Anything else is left as said, with no date: a wrong date is worse than none.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
DEADLINE = re.compile(
    r"(?i)\b(?:by|before|on|due|until|no later than)\s+(?:the\s+)?(?:(?:this|next|coming)\s+)?"
    r"(?P<when>(?:mon|tues|wednes|thurs|fri|satur|sun)day|today|tonight|tomorrow|eod|eow|end of (?:the |this )?(?:day|week|month)|"
    r"next week|\d{4}-\d\d-\d\d|" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r")\b"
)


def due_date(sentence: str, said_at: str | None) -> str | None:
    """The ISO date `sentence`'s deadline falls on, read from when it was said; None when it has none
    or it cannot be placed."""
    m = DEADLINE.search(sentence)
    said = _day(said_at)
    if m is None or said is None:
        return None
    when = m.group("when").lower()
    resolved = _resolve(when, said)
    return resolved.isoformat() if resolved else None


def _resolve(when: str, said: date) -> date | None:
    if when in ("today", "tonight", "eod", "end of day", "end of the day", "end of this day"):
        return said
    if when == "tomorrow":
        return said + timedelta(days=1)
    if when == "eow" or (when.startswith("end of") and when.endswith("week")):
        return said + timedelta(days=(4 - said.weekday()) % 7)
    if when == "next week":
        return said + timedelta(days=7 - said.weekday())
    if when.startswith("end of") and when.endswith("month"):
        first_next = (said.replace(day=1) + timedelta(days=32)).replace(day=1)
        return first_next - timedelta(days=1)
    if when in _DAYS:
        ahead = (_DAYS.index(when) - said.weekday()) % 7 or 7
        return said + timedelta(days=ahead)
    if re.fullmatch(r"\d{4}-\d\d-\d\d", when):
        try:
            return date.fromisoformat(when)
        except ValueError:
            return None
    return _month_day(when, said)


def _month_day(when: str, said: date) -> date | None:
    words = re.findall(r"[a-z]+|\d+", when)
    month = next((n for n, name in enumerate(_MONTHS, 1) for w in words if name.startswith(w[:3]) and w.isalpha() and w != "of"), None)
    day = next((int(w) for w in words if w.isdigit()), None)
    if month is None or day is None:
        return None
    for year in (said.year, said.year + 1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            return None
        if candidate >= said:
            return candidate
    return None


def _day(stamp: str | None) -> date | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).date()
    except ValueError:
        return None
