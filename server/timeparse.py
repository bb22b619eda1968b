"""Instants on the wire: parsing what callers send, formatting what we emit.

Storage keeps integer epoch milliseconds (exact, index-friendly); every emitted
timestamp is `YYYY-MM-DDTHH:MM:SS.mmmZ`, the form JS `Date.toISOString()` gives.
Input is as lenient as the reference's `Date.parse`: ISO 8601 dates and
datetimes (a datetime without an offset is read as UTC, so a result never
depends on the server's time zone), RFC 2822 dates, and "Month D, YYYY [time]".
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = r"(\d+)\s*(s|sec|seconds?|m|min|minutes?|h|hr|hours?|d|days?)"
# The forms below are pattern strings, matched case-blind through `re`'s own cache of compiled
# patterns: compiled at their first use, not at import. Most processes that import this module (a
# hook's session start among them) write instants and never parse one, and compiling the five cost
# a millisecond of every start.
DURATION = rf"^{_DURATION}$"
AGO = rf"^{_DURATION}(?:\s+ago)?$"
ISO_DURATION_START = r"^P(T|\d)"
ISO_DURATION_FULL = r"^P(?:\d+[YMWD])*(?:T(?:\d+[HMS])+)?$"

_ISO = (
    r"^(?P<y>[+-]\d{6}|\d{4})(?:-(?P<mo>\d{2})(?:-(?P<d>\d{2}))?)?"
    r"(?:[T ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d+))?)?"
    r"\s*(?P<tz>Z|z|[+-]\d{2}(?::?\d{2})?)?)?$"
)
_WORDY_FORMATS = (
    "%B %d, %Y %H:%M:%S",
    "%B %d, %Y %H:%M",
    "%B %d, %Y",
    "%b %d, %Y %H:%M:%S",
    "%b %d, %Y",
    "%d %B %Y",
    "%d %b %Y",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d",
)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# The instants an ISO timestamp can name (years 0001–9999), in epoch ms.
MIN_MS = -62_135_596_800_000
MAX_MS = 253_402_300_799_999


def _iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    dt = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    # Formatted by hand: strftime's %Y does not zero-pad years before 1000 on glibc.
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}."
        f"{dt.microsecond // 1000:03d}Z"
    )


TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from typing import overload

    @overload
    def iso(ms: int) -> str: ...
    @overload
    def iso(ms: int | None) -> str | None: ...
    def iso(ms: int | None) -> str | None:
        return _iso(ms)
else:
    iso = _iso  # an instant on the wire; None for none (the overloads above say so to the type checker)


def _to_ms(dt: datetime) -> int:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    delta = dt - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


def parse_instant(text: str) -> int | None:
    """Epoch ms for an absolute timestamp, or None when it does not parse."""
    s = text.strip()
    if not s:
        return None
    m = re.match(_ISO, s)
    if m:
        try:
            return _in_range(_iso_ms(m))
        except (ValueError, OverflowError):  # 9999-12-31T23:59-23:59 lands past the last instant
            return None
    # email.utils costs more to import (socket, random, calendar, locale, …) than a hook spends on its work:
    # only an input that is not ISO pays for it.
    from email.utils import parsedate_to_datetime  # noqa: PLC0415

    try:
        return _in_range(_to_ms(parsedate_to_datetime(s)))
    except (TypeError, ValueError, IndexError, OverflowError):
        pass
    cleaned = re.sub(r"\s+(GMT|UTC|Z)$", "", s, flags=re.IGNORECASE)
    for fmt in _WORDY_FORMATS:
        try:
            return _in_range(_to_ms(datetime.strptime(cleaned, fmt)))
        except (ValueError, OverflowError):
            continue
    return None


def _in_range(ms: int) -> int:
    if not MIN_MS <= ms <= MAX_MS:
        raise ValueError("outside the years 0001-9999")
    return ms


def _iso_ms(m: re.Match) -> int:
    year = int(m["y"])
    if not 1 <= year <= 9999:
        raise ValueError("year out of range")
    frac = (m["f"] or "0")[:6].ljust(6, "0")
    dt = datetime(
        year,
        int(m["mo"] or 1),
        int(m["d"] or 1),
        int(m["h"] or 0),
        int(m["mi"] or 0),
        int(m["s"] or 0),
        int(frac),
        tzinfo=UTC,
    )
    tz = m["tz"]
    if tz and tz not in ("Z", "z"):
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        dt = dt - sign * offset
    return _to_ms(dt)


def duration_ms(match: re.Match) -> int:
    n = int(match.group(1))
    unit = match.group(2).lower()
    key = "m" if unit.startswith("mi") or unit == "m" else unit[0]
    return n * _UNIT_SECONDS[key] * 1000


WHEN_FORMS = ("a date (2026-08-11), a month (2026-08), a datetime (2026-08-11T09:30:00Z), a time ago (24h, 7d, -7d, "
              "30m ago, 2w) or today / yesterday")
_WEEKS = r"^(\d+)\s*(w|wk|weeks?)(?:\s+ago)?$"


def parse_when(text: str, now: int | None = None) -> int | None:
    """A time as a person types it: every form `parse_since` reads, and "-7d" (seven days back), "2w",
    "now", "today" and "yesterday" (midnight UTC). The CLI's --since/--until, and delta's and
    context_pack's `since` on the wire (docs/protocol.md Part B); None when it is none of them."""
    now = now if now is not None else now_ms()
    s = text.strip().lower()
    if not s:
        return None
    midnight = datetime.fromtimestamp(now / 1000, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if s == "now":
        return now
    if s == "today":
        return _to_ms(midnight)
    if s == "yesterday":
        return _to_ms(midnight - timedelta(days=1))
    raw = text.strip()
    if re.match(r"^-\s*\d+\s*[a-z]", s):  # -5d: five days back, as a person writes it
        s, raw = s[1:].strip(), raw[1:].strip()
    m = re.match(_WEEKS, s, re.IGNORECASE)
    if m:
        at = now - int(m.group(1)) * 7 * 86_400_000
        return at if MIN_MS <= at <= MAX_MS else None
    return parse_since(raw, now)


def parse_since(text: str, now: int | None = None) -> int | None:
    """recall's `since`: an absolute instant, or "N units [ago]" meaning now minus N units; None when it
    does not parse or lands outside the years 0001-9999 ("99999999999d" is no instant any store can hold)."""
    at = parse_instant(text)
    if at is not None:
        return at
    m = re.match(AGO, text.strip(), re.IGNORECASE)
    if m:
        at = (now if now is not None else now_ms()) - duration_ms(m)
        return at if MIN_MS <= at <= MAX_MS else None
    return None
