"""The pointers a prompt earns (the reflex): which of the entities it names are news to the session.

Part of what the model reads (server/verbs/readout.py is its one entry point, `read_out`): a prompt's
pointers go into the same message as the delta's news. This module holds their choice and the keys of
what a session was shown, so the hooks' fast path (an unchanged heartbeat answering a prompt on a plain
connection: hooks/reflex.py) loads these few lines and nothing of the server.

Imports only `time` at module level; type-only imports are behind a constant the checkers read.
"""

from __future__ import annotations

import time

# Not `typing.TYPE_CHECKING`: the hooks' fast path loads this module, and typing would cost it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import ModuleType
    from typing import Protocol

    from memverbs.server.brain.base import Brain
    from memverbs.server.name_index import Named

    class Session(Protocol):
        """What a hook's session was shown (hooks/state.SessionState): digests, never text."""

        entities: list[str]  # banked: what it touched, most recent first
        pending: list[str]  # slugs whose pointers wait for a moment that reaches the model (Grok)
        cursor_set: bool  # a remote brain's delta cursor for the session exists

        def given(self, key: str) -> bool: ...
        def unseen(self, items: list[dict], key: Callable[[dict], str]) -> list[dict]: ...
        def bank(self, slugs: list[str]) -> None: ...

    class Reads(Protocol):
        """The pointers' reads (a plain connection, server/brain/plain.py, or an open brain: `BrainReads`)."""

        def named(self, source: str, keys: list[str]) -> Iterable[tuple]: ...
        def pages(self, source: str, slugs: list[str]) -> dict[str, tuple]: ...
        def facts(self, source: str, slug: str, now: int, limit: int) -> list[tuple]: ...


def _render() -> ModuleType:
    """server/verbs/render.py, imported where a text is written."""
    from memverbs.server.verbs import render  # noqa: PLC0415

    return render


# -- the pointers a prompt earns (the reflex) -----------------------------------------------------
#
# For each page the prompt names that this session has not been shown yet: the slug, its title and
# one-line summary, and at most the one or two of its facts most related to the prompt.
# * Nothing named, nothing said. A name two pages share is never guessed (name_index's rules).
# * A pointer already given in this session, or a page whose card its pack showed, is not given again
#   while nothing about it changed (the page, or its newest fact): a re-mention is not news. Named
#   beside new ones, only the new ones get pointers.
# * World-visible pages and facts of the session's source only, as the packs read them.
# * The prompt is read here and dropped: never stored, logged or sent anywhere. The session's state
#   keeps digests of what was given, never text.
# * Bounded: at most MAX_POINTERS pointers (further names as bare slugs, up to MAX_MORE), MAX_FACTS facts
#   in all; cost by the prompt's length, not the brain's size.

MAX_POINTERS = 5
MAX_MORE = 8
MAX_FACTS = 4
FACTS_PER_POINTER = 2
FACTS_READ = 24  # an entity's newest facts read to pick the related ones from
SUMMARY_CHARS = 160
FACT_CHARS = 180
MIN_RELATED = 1  # content words a fact must share with the prompt to be shown

# Word endings stripped before comparing a prompt's words with a fact's ("pricing" ~ "priced"). The
# index's Snowball stemmer would cost the hook its import (~35 ms); a rough root is enough to rank a
# handful of facts.
_ENDINGS = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s", "e")


class BrainReads:
    """The pointers' reads on an open brain, either backend (a heartbeat that also delivers a delta)."""

    def __init__(self, brain: Brain) -> None:
        self.brain = brain

    def named(self, source: str, keys: list[str]) -> list[tuple]:
        return [tuple(r) for r in self.brain.named_pages(source, keys, allow_private=False)]

    def pages(self, source: str, slugs: list[str]) -> dict[str, tuple]:
        rows = self.brain.pages_by_slugs(source, slugs, allow_private=False)
        return {s: (r["title"], r["summary"], None if r["summary"] else r["body"][:2000], r["updated_at"])
                for s, r in rows.items()}

    def facts(self, source: str, slug: str, now: int, limit: int) -> list[tuple]:
        rows = self.brain.entity_facts(source, [slug], world_only=True, now=now, limit=limit)
        return [(r["id"], r["fact"], r["kind"], r["valid_from"]) for r in rows]


def iso(ms: int) -> str:
    """server/timeparse.iso, without its imports (typing): the keys below must read as its."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def find_named(reads: Reads, source: str, prompt: str) -> Named:
    """The prompt's mentions (server/name_index.py), looked up through `reads`."""
    from memverbs.server.name_index import find  # noqa: PLC0415

    return find(prompt, lambda keys: reads.named(source, keys))


def pointers(reads: Reads, source: str, prompt: str, session: Session, now_ms: int, *, mark: bool = True,
             named: Named | None = None) -> list[dict]:
    """The pointers this prompt earns, in the order it names their pages; each `{slug, title, summary,
    facts: [{fact, kind, valid_from}], key}`. With `mark` they are recorded in the session as given (and
    their pages banked); without it (a harness that cannot show them now) the caller keeps their slugs for
    `pointers_for` to give later. `named`: the prompt's mentions, when already found."""
    from memverbs.server.name_index import key_of  # noqa: PLC0415

    named = named or find_named(reads, source, prompt)
    if not named.mentions:
        return []
    drop = {w for m in named.mentions for w in key_of(f"{m.title or ''} {m.text}").split()}
    given = pointers_for(reads, source, [m.slug for m in named.mentions], session, now_ms, _roots(prompt, drop))
    if mark:
        give(session, given)
    return given


def pointers_for(reads: Reads, source: str, slugs: list[str], session: Session, now_ms: int,
                 asked: set[str] | None = None) -> list[dict]:
    """Pointers to `slugs` this session has not been given; `asked`: the prompt's content words, which
    choose each pointer's related facts (None: no facts)."""
    pages = reads.pages(source, slugs[: MAX_POINTERS + MAX_MORE])
    out: list[dict] = []
    facts_left = MAX_FACTS
    for slug in slugs[: MAX_POINTERS + MAX_MORE]:
        rows = reads.facts(source, slug, now_ms, FACTS_READ)
        # An entity with facts and no page is pointed to by its slug, its facts speaking for it.
        page = pages.get(slug) or ((None, None, None, 0) if rows else None)
        if page is None:
            continue
        title, summary, body_head, updated_at = page
        key = pointer_key(slug, updated_at, max((r[0] for r in rows), default=0))
        if session.given(key) or (session.given(card_key_of(slug, updated_at)) and not _news(rows, slug, session)):
            continue
        shown = len(out) < MAX_POINTERS
        related = _related(rows, slug, asked or set(), session, min(FACTS_PER_POINTER, facts_left)) if shown else []
        if shown and not related and title is None and facts_left > 0:  # no page to sum it up: its newest fact
            related = [{"fact": rows[0][1], "kind": rows[0][2], "valid_from": rows[0][3]}]
        facts_left -= len(related)
        out.append({"slug": slug, "title": title or slug.rsplit("/", 1)[-1],
                    "summary": _summary(summary, body_head) if shown else "", "facts": related, "key": key})
    return out


def _root(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _roots(text: str, drop: set[str]) -> set[str]:
    from memverbs.server.name_index import key_of  # noqa: PLC0415
    from memverbs.server.terms import STOP_WORDS  # noqa: PLC0415

    return {_root(w) for w in key_of(text).split() if w not in STOP_WORDS and w not in drop and len(w) > 2}


def _clip(text: str, size: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 1].rstrip() + "…"


def _summary(summary: str | None, body_head: str | None) -> str:
    if summary:
        return _clip(summary, SUMMARY_CHARS)
    if not body_head:
        return ""
    from memverbs.server.pages.synopsis import safe_summary  # noqa: PLC0415 - only for a page without a summary

    return _clip(safe_summary(body_head, None, include_private=False), SUMMARY_CHARS)


def _news(rows: list[tuple], slug: str, session: Session) -> bool:
    """Whether the entity has a fact this session was not shown (its pack showed the page before it)."""
    return any(not session.given(fact_key_of(slug, r[1], r[3])) for r in rows[:FACTS_PER_POINTER])


def _related(rows: list[tuple], slug: str, asked: set[str], session: Session, room: int) -> list[dict]:
    """The entity's facts sharing the most content words with the prompt, newest first among equals,
    leaving out what this session was shown already."""
    if room <= 0 or not asked:
        return []
    scored = []
    for order, (_, fact, kind, valid_from) in enumerate(rows):
        shared = len(asked & _roots(fact, set()))
        if shared >= MIN_RELATED and not session.given(fact_key_of(slug, fact, valid_from)):
            scored.append((-shared, order, {"fact": fact, "kind": kind, "valid_from": valid_from}))
    scored.sort(key=lambda s: (s[0], s[1]))
    return [f for _, _, f in scored[:room]]


def give(session: Session, given: list[dict]) -> None:
    """Record the pointers as given in this session, their facts as shown, and bank their pages."""
    if not given:
        return
    session.unseen([{"k": p["key"]} for p in given], lambda item: item["k"])
    session.unseen([{"k": fact_key_of(p["slug"], f["fact"], f["valid_from"])} for p in given for f in p["facts"]],
                   lambda item: item["k"])
    session.bank([p["slug"] for p in given])


def wait(session: Session, later: list[dict]) -> None:
    """Keep the pointers' slugs for the harness's next moment that reaches the model (Grok's PostToolUse)."""
    session.pending = list(dict.fromkeys([*session.pending, *(p["slug"] for p in later)]))[: MAX_POINTERS + MAX_MORE]


def lines(given: list[dict]) -> list[str]:
    """The section's lines: a pointer per page, its related facts beneath it; past MAX_POINTERS, bare slugs."""
    render = _render()
    out = []
    for p in given[:MAX_POINTERS]:
        out.append(render.card_line({"title": p["title"], "slug": p["slug"], "summary": p["summary"]}))
        for f in p["facts"]:
            line = render.fact_line({"fact": _clip(f["fact"], FACT_CHARS), "kind": f["kind"], "valid_from": iso(f["valid_from"])})
            out.append("  " + line)
    rest = [p["slug"] for p in given[MAX_POINTERS:]]
    if rest:
        out.append("- also named: " + ", ".join(f"`{s}`" for s in rest[:MAX_MORE]))
    return out


def pointers_text(given: list[dict]) -> str:
    """The pointers' message on its own (a heartbeat with no delta to send)."""
    return _render().render_delta("", [], [], [], named=lines(given))


# -- what a session was shown: the keys its digests are of ----------------------------------------


def page_key(page: dict) -> str:
    return f"page\0{page['slug']}\0{page['updated_at']}"


def card_key(page: dict) -> str:
    """A page whose card (title, summary, facts) a pack showed: the reflex need not point to it again."""
    return f"card\0{page['slug']}\0{page['updated_at']}"


def fact_key(fact: dict) -> str:
    return f"fact\0{fact['entity_slug']}\0{fact['fact']}\0{fact['valid_from']}"


def card_key_of(slug: str, updated_at: int) -> str:
    """card_key of a page row (its time in milliseconds), as a pack showed its card."""
    return f"card\0{slug}\0{iso(updated_at)}"


def fact_key_of(slug: str, fact: str, valid_from: int) -> str:
    """fact_key of a fact row (its time in milliseconds), as a pack or delta showed it."""
    return f"fact\0{slug}\0{fact}\0{iso(valid_from)}"


def pointer_key(slug: str, updated_at: int, newest_fact: int) -> str:
    return f"pointer\0{slug}\0{updated_at}\0{newest_fact}"
