"""synthesize: the one LLM-backed verb. With no model configured it is `unavailable`, with the fix.

The window is validated before anything else runs; memverbs answers a bad
`since`/`until` with invalid_params (PROTOCOL.md B5), not `internal`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memverbs.server.context import VerbContext
from memverbs.server.errors import VerbError, invalid
from memverbs.server.timeparse import iso, parse_instant

_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_WINDOW_FORMS = 'Use YYYY-MM-DD (a whole day), YYYY-MM (a whole month) or an ISO 8601 datetime, e.g. since: "2026-08-01".'


def window_bound(raw: str | None, *, end: bool) -> int | None:
    """since/until: whole days and months widen to their first/last millisecond."""
    if raw is None or not raw.strip():
        return None
    s = raw.strip()
    try:
        if m := _DAY.match(s):
            y, mo, d = (int(g) for g in m.groups())
            start = datetime(y, mo, d, tzinfo=UTC)
            at = int(start.timestamp() * 1000)
            return at + 86_400_000 - 1 if end else at
        if m := _MONTH.match(s):
            y, mo = (int(g) for g in m.groups())
            start = datetime(y, mo, 1, tzinfo=UTC)
            nxt = datetime(y + (mo == 12), mo % 12 + 1, 1, tzinfo=UTC)
            return int(nxt.timestamp() * 1000) - 1 if end else int(start.timestamp() * 1000)
    except ValueError:
        return None
    return parse_instant(s)


def synthesize(ctx: VerbContext, params: dict) -> dict:
    question = params["question"].strip()
    if not question:
        raise invalid(
            "question must be a non-empty string.",
            'Ask a question in words, e.g. question: "What did we decide about the payments provider?".',
        )
    since = window_bound(params.get("since"), end=False)
    until = window_bound(params.get("until"), end=True)
    for name, raw, value in (("since", params.get("since"), since), ("until", params.get("until"), until)):
        if raw is not None and raw.strip() and value is None:
            raise invalid(f'synthesize: {name} is not a parseable date: "{raw[:60]}"', _WINDOW_FORMS)
    if since is not None and until is not None and since > until:
        raise invalid(
            f"synthesize: since ({iso(since)}) is after until ({iso(until)}).",
            "Swap them, or widen the window so since comes before until.",
        )
    raise VerbError(
        "unavailable",
        "synthesize needs an LLM and none is configured.",
        "synthesize could not run because this brain has no chat model configured. Configure an LLM provider for "
        "memverbs and retry; meanwhile recall and entity answer lookups without one.",
        detail="chat gateway unconfigured (NO_ANTHROPIC_API_KEY)",
    )
