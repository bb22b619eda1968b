"""`--since` / `--until` on the command line: one set of forms on every command.

The CLI turns what a person types into an ISO 8601 instant before it calls a tool, so every verb
sees the same thing whatever its own parser accepts: a date (2026-08-11), a month (2026-08), a
datetime (2026-08-11T09:30:00Z; no offset means UTC), a time ago (24h, 7d or -7d, 30m ago, 2 weeks), or
the words now, today and yesterday (midnight UTC).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from memverbs.server.errors import MemverbsError
from memverbs.server.timeparse import iso, now_ms, parse_since

FORMS = "a date (2026-08-11), a month (2026-08), a datetime (2026-08-11T09:30:00Z), a time ago (24h, 7d, -7d, 30m ago, 2w) or today / yesterday"
_WEEKS = re.compile(r"^(\d+)\s*(w|wk|weeks?)(?:\s+ago)?$", re.IGNORECASE)


class WhenError(MemverbsError, ValueError):
    """A --since/--until value that is not a time memverbs can read."""


def to_iso(flag: str, text: str, now: int | None = None) -> str:
    """The ISO instant `text` names; raises WhenError saying which flag and the forms it takes."""
    now = now if now is not None else now_ms()
    s = text.strip().lower()
    midnight = datetime.fromtimestamp(now / 1000, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if s == "now":
        return iso(now)
    if s == "today":
        return iso(int(midnight.timestamp() * 1000))
    if s == "yesterday":
        return iso(int((midnight - timedelta(days=1)).timestamp() * 1000))
    raw = text.strip()
    if re.match(r"^-\s*\d+\s*[a-z]", s):  # -5d: five days back, as a person writes it
        s, raw = s[1:].strip(), raw[1:].strip()
    m = _WEEKS.match(s)
    if m:
        return iso(now - int(m.group(1)) * 7 * 86_400_000)
    at = parse_since(raw, now) if s else None
    if at is None:
        raise WhenError(f'{flag} "{text}" is not a time: use {FORMS}'.lstrip())
    return iso(at)
