"""remember's `ttl`: shorthand durations or an absolute instant; ISO-8601 durations are a trap."""

from __future__ import annotations

import re

from memverbs.server.errors import invalid
from memverbs.server.timeparse import (
    DURATION,
    ISO_DURATION_FULL,
    ISO_DURATION_START,
    MAX_MS,
    duration_ms,
    parse_instant,
)

_FORMS = 'Use a duration shorthand ("30d", "12h", "45m") or an absolute ISO 8601 expiry timestamp ("2026-12-31T00:00:00Z").'


def parse_ttl(raw: str | None, now: int) -> int | None:
    """valid_until in epoch ms, or None for "never expires"."""
    if raw is None or not raw.strip():
        return None
    s = raw.strip()
    if re.match(ISO_DURATION_START, s, re.IGNORECASE) and re.match(ISO_DURATION_FULL, s, re.IGNORECASE):
        shorthand = s[2:] if s[:2].upper() == "PT" else s[1:]
        raise invalid(
            f'ttl "{raw}" looks like an ISO-8601 duration, which is not accepted.',
            f'ttl takes the shorthand form: "{shorthand.lower()}" instead of "{raw}" '
            '(e.g. "30d", "12h"), or an absolute ISO 8601 expiry timestamp.',
        )
    m = re.match(DURATION, s, re.IGNORECASE)
    at = now + duration_ms(m) if m else parse_instant(s)
    if at is not None and at > MAX_MS:
        raise invalid(
            f'ttl "{raw[:60]}" is beyond the year 9999.',
            f"Choose a nearer expiry, or omit ttl for a fact that never expires. {_FORMS}",
        )
    if at is not None:
        return at
    raise invalid(f'Cannot parse ttl "{raw}".', f"ttl was not understood. {_FORMS} Omit ttl for a fact that never expires.")
