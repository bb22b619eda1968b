"""synthesize: the one LLM-backed verb — gather evidence, compose an answer, report what it cost.

The window is validated before anything else runs; memverbs answers a bad
`since`/`until` with invalid_params (PROTOCOL.md B5), not `internal`.
Precedence (PROTOCOL.md §5.4), exactly:
1. no chat model configured → `unavailable` (detail NO_ANTHROPIC_API_KEY), whatever gather would find;
2. compose failed and pages were gathered → success, `extractive_fallback` quoting only those pages;
3. compose failed and nothing was gathered → `unavailable`, `compose failed: <CODE>`, warnings as detail;
4. compose ok → success, `ok`, sources = the gathered pages the answer cites.
The verb is a pure read: nothing is saved.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memverbs.server.context import VerbContext
from memverbs.server.errors import PROTOCOL_VERSION, VerbError, invalid
from memverbs.server.names import collapse
from memverbs.server.timeparse import iso, parse_instant

_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_WINDOW_FORMS = 'Use YYYY-MM-DD (a whole day), YYYY-MM (a whole month) or an ISO 8601 datetime, e.g. since: "2026-08-01".'
FALLBACK_PAGES = 5
FALLBACK_EXCERPT = 400
NO_LLM_DETAIL = "chat gateway unconfigured (NO_ANTHROPIC_API_KEY)"


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
    providers = ctx.providers
    if providers is None:
        raise _no_llm(None)
    chat = providers.chat()
    if chat is None:
        raise _no_llm(providers.chat_problem)

    from memverbs.server.verbs.compose import compose  # noqa: PLC0415 - only with a model
    from memverbs.server.verbs.gather import gather  # noqa: PLC0415

    gathered = gather(ctx, question, since, until)
    composed = compose(chat, question, gathered)
    warnings = gathered.warnings + composed.warnings
    price = providers.price()
    from memverbs.server.providers.pricing import usd_estimate  # noqa: PLC0415

    cost = {
        "model": chat.model,
        "input_tokens": composed.input_tokens,
        "output_tokens": composed.output_tokens,
        "usd_estimate": usd_estimate(price, composed.input_tokens, composed.output_tokens),
    }
    if composed.status == "ok":
        answer, sources, gaps, status = composed.answer, composed.sources, composed.gaps, "ok"
    elif gathered.pages:
        answer, sources = _extractive(gathered.pages[:FALLBACK_PAGES])
        gaps, status = [], "extractive_fallback"
    else:
        raise VerbError(
            "unavailable",
            f"retrieved {len(gathered.pages)} pages; compose failed: {composed.code}",
            "Nothing in the brain matched closely enough to quote, and the model's answer could not be used. "
            "Rephrase or broaden the question or the since/until window, or fix the model config "
            "(`memverbs doctor` checks it).",
            detail="; ".join(warnings) if warnings else None,
        )
    return {
        "answer": answer,
        "sources": sources,
        "gaps": gaps,
        "cost": cost,
        "synthesis_status": status,
        "pages_gathered": len(gathered.pages),
        "takes_gathered": len(gathered.facts),
        "warnings": warnings,
        "protocol_version": PROTOCOL_VERSION,
    }


def _extractive(pages: list[dict]) -> tuple[str, list[str]]:
    """Quotes of the gathered pages only: nothing the model said survives a failed compose."""
    lines = [f"No synthesized answer — extractive excerpts from the {len(pages)} most relevant retrieved page(s):"]
    for p in pages:
        excerpt = collapse(p["excerpt"] or "")
        if len(excerpt) > FALLBACK_EXCERPT:
            excerpt = excerpt[: FALLBACK_EXCERPT - 1] + "…"
        lines.append(f"- {p['title']} [{p['slug']}]: {excerpt}" if excerpt else f"- {p['title']} [{p['slug']}]")
    return "\n".join(lines), [p["slug"] for p in pages]


def _no_llm(problem: str | None) -> VerbError:
    if problem and "no API key" in problem:
        suggestion = (
            f"synthesize could not run: {problem}. Set MEMVERBS_LLM_API_KEY (or store the key with "
            "`keyring set memverbs llm_api_key`) and retry; meanwhile recall and entity answer lookups without one."
        )
    else:
        suggestion = (
            "synthesize could not run because this brain has no chat model configured. Set one with "
            "`memverbs config set llm.model <model>` and its key in MEMVERBS_LLM_API_KEY, then retry; "
            "meanwhile recall and entity answer lookups without one."
        )
    return VerbError("unavailable", "synthesize needs an LLM and none is configured.", suggestion, detail=NO_LLM_DETAIL)
