"""`--since` / `--until` on the command line: one set of forms on every command.

The CLI turns what a person types into an ISO 8601 instant before it calls a tool, so every verb
sees the same thing whatever its own parser accepts: a date (2026-08-11), a month (2026-08), a
datetime (2026-08-11T09:30:00Z; no offset means UTC), a time ago (24h, 7d or -7d, 30m ago, 2 weeks), or
the words now, today and yesterday (midnight UTC). The forms are server/timeparse.py's `parse_when`,
which delta and context_pack read on the wire too.
"""

from __future__ import annotations

from memverbs.server.errors import MemverbsError
from memverbs.server.timeparse import WHEN_FORMS, iso, parse_when

FORMS = WHEN_FORMS


class WhenError(MemverbsError, ValueError):
    """A --since/--until value that is not a time memverbs can read."""


def to_iso(flag: str, text: str, now: int | None = None) -> str:
    """The ISO instant `text` names; raises WhenError saying which flag and the forms it takes."""
    at = parse_when(text, now)
    if at is None:
        raise WhenError(f'{flag} "{text}" is not a time: use {FORMS}'.lstrip())
    return iso(at)
