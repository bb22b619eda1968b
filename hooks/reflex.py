"""The per-prompt reflex: pointers to what memory holds on the entities a prompt names.

On every prompt (Claude Code and Codex `UserPromptSubmit`, opencode's `chat.message`, OpenClaw's
`before_prompt_build`, Grok's `UserPromptSubmit` delivered at its next `PostToolUse`), the heartbeat
hands the prompt's text here. The name index (server/name_index.py) says which pages it names;
for each one this session has not been shown yet, the reflex writes a pointer: the slug, its
title and one-line summary, and at most the one or two of its facts most related to the prompt.

* Nothing named, nothing said. A name two pages share is never guessed (name_index's rules).
* A pointer already given in this session, or a page whose card its pack showed, is not given
  again while nothing about it changed (the page, or its newest fact): a re-mention is not news.
  Named beside new ones, only the new ones get pointers.
* World-visible pages and facts of the session's source only, as the packs read them: no private
  page, fact or row, nothing of another source.
* The prompt is read here and dropped: never stored, logged or sent anywhere. The session's state
  keeps digests of what was given (hooks/state.py), never text.
* Bounded: at most MAX_POINTERS pointers (further names as bare slugs, up to MAX_MORE), MAX_FACTS
  facts in all; cost by the prompt's length, not the brain's size.

It reads the brain through a small `Reads` protocol, answered by the hook's own plain connection
when nothing else changed (`PlainReads`: the launcher's fast path on SQLite, the runner on
Postgres: no brain object is opened) and by an open brain when something did (`BrainReads`:
hooks/heartbeat.py, which puts the pointers into the same message as the delta). Imports nothing
the cheap path has not loaded, but the name index.
"""

from __future__ import annotations

import time

from memverbs.server.name_index import Named, find, key_of, named_sql
from memverbs.server.terms import STOP_WORDS

# Not `typing.TYPE_CHECKING`: the cheap path loads this module, and typing would cost it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Protocol

    from memverbs.hooks.state import SessionState
    from memverbs.server.brain.base import Brain

    class Reads(Protocol):
        def named(self, source: str, keys: list[str]) -> Iterable[tuple]: ...
        def pages(self, source: str, slugs: list[str]) -> dict[str, tuple]: ...
        def facts(self, source: str, slug: str, now: int) -> list[tuple]: ...

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


# -- the brain, as the reflex reads it ------------------------------------------------------------

# The reads below, written once for a plain connection of either backend: `?` marks (psycopg's `%s` on
# Postgres), `{among}` a list of values, `{facts}` the facts table as its index is named on SQLite.
_NAMED = named_sql("n.name_key {among}")  # the name index's own lookup, world-visible only (below)
# The body's first stretch only when there is no summary to show: its first prose sentence stands in.
_PAGES = (
    "SELECT slug, title, summary, CASE WHEN summary IS NULL OR summary = '' THEN substr(body, 1, 2000) END, updated_at "
    "FROM pages WHERE source_id = ? AND slug {among} AND deleted_at IS NULL AND visibility = 'world'"
)
# facts_store.entity_facts's rows, world-visible and active, for one entity: through facts_entity.
_FACTS = (
    "SELECT id, fact, kind, valid_from FROM {facts} WHERE source_id = ? AND entity_slug = ? "
    "AND expired_at IS NULL AND (valid_until IS NULL OR valid_until > ?) AND visibility = 'world' "
    "ORDER BY valid_from DESC, id DESC LIMIT ?"
)
MAX_KEYS = 5_000  # per statement: far below SQLite's parameter limit


class PlainReads:
    """The hook's own plain connection (hooks/changes.plain_connection): sqlite3's, or psycopg's on a
    Postgres brain (whose row-level security still applies). No brain object, no dispatcher."""

    def __init__(self, db: Any, backend: str = "sqlite") -> None:
        self.db, self.postgres = db, backend == "postgres"

    def _rows(self, template: str, head: tuple, values: list, tail: tuple = ()) -> list[tuple]:
        if self.postgres:
            among, args = "= ANY(?)", (list(values),)
        else:
            among, args = f"IN ({','.join('?' * len(values))})", tuple(values)
        sql = template.format(among=among)
        return self.db.execute(sql.replace("?", "%s") if self.postgres else sql, (*head, *args, *tail)).fetchall()

    def named(self, source: str, keys: list[str]) -> list[tuple]:
        rows: list[tuple] = []
        for at in range(0, len(keys), MAX_KEYS):
            rows += self._rows(_NAMED, (source,), keys[at : at + MAX_KEYS], (False, False))
        return rows

    def pages(self, source: str, slugs: list[str]) -> dict[str, tuple]:
        return {r[0]: tuple(r[1:]) for r in self._rows(_PAGES, (source,), slugs)}

    def facts(self, source: str, slug: str, now: int) -> list[tuple]:
        sql = _FACTS.format(facts="facts" if self.postgres else "facts INDEXED BY facts_entity")
        return self.db.execute(sql.replace("?", "%s") if self.postgres else sql, (source, slug, now, FACTS_READ)).fetchall()


class BrainReads:
    """An open brain, either backend (the full path: a heartbeat that also delivers a delta)."""

    def __init__(self, brain: Brain) -> None:
        self.brain = brain

    def named(self, source: str, keys: list[str]) -> list[tuple]:
        return [tuple(r) for r in self.brain.named_pages(source, keys, allow_private=False)]

    def pages(self, source: str, slugs: list[str]) -> dict[str, tuple]:
        rows = self.brain.pages_by_slugs(source, slugs, allow_private=False)
        return {s: (r["title"], r["summary"], None if r["summary"] else r["body"][:2000], r["updated_at"])
                for s, r in rows.items()}

    def facts(self, source: str, slug: str, now: int) -> list[tuple]:
        rows = self.brain.entity_facts(source, [slug], world_only=True, now=now, limit=FACTS_READ)
        return [(r["id"], r["fact"], r["kind"], r["valid_from"]) for r in rows]


# -- what is said ----------------------------------------------------------------------------------


def iso(ms: int) -> str:
    """server/timeparse.iso, without its imports (typing): the keys below must read as its."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _root(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _roots(text: str, drop: set[str]) -> set[str]:
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


def card_key(slug: str, updated_at: int) -> str:
    """hooks/heartbeat.card_key of the page as a pack showed its card (a delta's page line says less)."""
    return f"card\0{slug}\0{iso(updated_at)}"


def fact_key(slug: str, fact: str, valid_from: int) -> str:
    """hooks/heartbeat.fact_key of the fact as a pack or delta showed it."""
    return f"fact\0{slug}\0{fact}\0{iso(valid_from)}"


def pointer_key(slug: str, updated_at: int, newest_fact: int) -> str:
    return f"pointer\0{slug}\0{updated_at}\0{newest_fact}"


def pointers(reads: Reads, source: str, prompt: str, state: SessionState, now_ms: int, *, mark: bool = True,
             named: Named | None = None) -> list[dict]:
    """The pointers this prompt earns, in the order it names their pages; each `{slug, title, summary,
    facts: [{fact, kind, valid_from}], key}`. With `mark` they are recorded in the session's state as
    given (and their pages banked); without it (a harness that cannot show them now) the caller keeps
    their slugs for `pointers_for` to give later. `named`: the prompt's mentions, when already found."""
    named = named or find(prompt, lambda keys: reads.named(source, keys))
    if not named.mentions:
        return []
    drop = {w for m in named.mentions for w in key_of(f"{m.title or ''} {m.text}").split()}
    given = pointers_for(reads, source, [m.slug for m in named.mentions], state, now_ms, _roots(prompt, drop))
    if mark:
        give(state, given)
    return given


def pointers_for(reads: Reads, source: str, slugs: list[str], state: SessionState, now_ms: int,
                 asked: set[str] | None = None) -> list[dict]:
    """Pointers to `slugs` this session has not been given; `asked`: the prompt's content words, which
    choose each pointer's related facts (None: no facts)."""
    pages = reads.pages(source, slugs[: MAX_POINTERS + MAX_MORE])
    out: list[dict] = []
    facts_left = MAX_FACTS
    for slug in slugs[: MAX_POINTERS + MAX_MORE]:
        rows = reads.facts(source, slug, now_ms)
        # An entity with facts and no page is pointed to by its slug, its facts speaking for it.
        page = pages.get(slug) or ((None, None, None, 0) if rows else None)
        if page is None:
            continue
        title, summary, body_head, updated_at = page
        key = pointer_key(slug, updated_at, max((r[0] for r in rows), default=0))
        if state.given(key) or (state.given(card_key(slug, updated_at)) and not _news(rows, slug, state)):
            continue
        shown = len(out) < MAX_POINTERS
        related = _related(rows, slug, asked or set(), state, min(FACTS_PER_POINTER, facts_left)) if shown else []
        if shown and not related and title is None and facts_left > 0:  # no page to sum it up: its newest fact
            related = [{"fact": rows[0][1], "kind": rows[0][2], "valid_from": rows[0][3]}]
        facts_left -= len(related)
        out.append({"slug": slug, "title": title or slug.rsplit("/", 1)[-1], "summary": _summary(summary, body_head) if shown else "",
                    "facts": related, "key": key})
    return out


def _news(rows: list[tuple], slug: str, state: SessionState) -> bool:
    """Whether the entity has a fact this session was not shown (its pack showed the page before it)."""
    return any(not state.given(fact_key(slug, r[1], r[3])) for r in rows[:FACTS_PER_POINTER])


def _related(rows: list[tuple], slug: str, asked: set[str], state: SessionState, room: int) -> list[dict]:
    """The entity's facts sharing the most content words with the prompt, newest first among equals,
    leaving out what this session was shown already."""
    if room <= 0 or not asked:
        return []
    scored = []
    for order, (_, fact, kind, valid_from) in enumerate(rows):
        shared = len(asked & _roots(fact, set()))
        if shared >= MIN_RELATED and not state.given(fact_key(slug, fact, valid_from)):
            scored.append((-shared, order, {"fact": fact, "kind": kind, "valid_from": valid_from}))
    scored.sort(key=lambda s: (s[0], s[1]))
    return [f for _, _, f in scored[:room]]


def give(state: SessionState, given: list[dict]) -> None:
    """Record the pointers as given in this session, their facts as shown, and bank their pages."""
    if not given:
        return
    state.unseen([{"k": p["key"]} for p in given], lambda item: item["k"])
    state.unseen([{"k": fact_key(p["slug"], f["fact"], f["valid_from"])} for p in given for f in p["facts"]],
                 lambda item: item["k"])
    state.bank([p["slug"] for p in given])


def lines(given: list[dict]) -> list[str]:
    """The section's lines: a pointer per page, its related facts beneath it; past MAX_POINTERS, bare slugs."""
    from memverbs.server.verbs.render import card_line, fact_line  # noqa: PLC0415

    out = []
    for p in given[:MAX_POINTERS]:
        out.append(card_line({"title": p["title"], "slug": p["slug"], "summary": p["summary"]}))
        for f in p["facts"]:
            line = fact_line({"fact": _clip(f["fact"], FACT_CHARS), "kind": f["kind"], "valid_from": iso(f["valid_from"])})
            out.append("  " + line)
    rest = [p["slug"] for p in given[MAX_POINTERS:]]
    if rest:
        out.append("- also named: " + ", ".join(f"`{s}`" for s in rest[:MAX_MORE]))
    return out


def text(given: list[dict]) -> str:
    """The reflex's message on its own (a heartbeat with no delta to send)."""
    from memverbs.server.verbs.render import render_delta  # noqa: PLC0415

    return render_delta("", [], [], [], named=lines(given))


def answer(reads: Reads, root: str, harness: str, session: str, source: str, prompt: str) -> str:
    """A prompt's answer when nothing else changed, on a plain connection (the launcher's fast path, or
    the runner on a brain it need not open): the harness's output with the pointers, or "" (nothing
    new named, or a harness that shows them at a later moment)."""
    named = find(prompt, lambda keys: reads.named(source, keys))
    if not named.mentions:
        return ""  # the common case: nothing named, and nothing more loaded or read
    import os  # noqa: PLC0415 - loaded with the interpreter

    from memverbs.hooks.adapters import ADAPTERS  # noqa: PLC0415
    from memverbs.hooks.events import Harness, HookEvent, Moment  # noqa: PLC0415
    from memverbs.hooks.state import SessionState  # noqa: PLC0415

    adapter = ADAPTERS[Harness(harness)]
    state = SessionState.load(os.path.join(root, "hooks", "sessions"), harness, session)
    now = time.time_ns() // 1_000_000
    if not adapter.delivers_prompt:
        later = pointers(reads, source, prompt, state, now, mark=False, named=named)
        if later:
            wait(state, later)
            state.save()
        return ""
    given = pointers(reads, source, prompt, state, now, named=named)
    if not given:
        return ""
    state.save()
    return adapter.render(text(given), HookEvent(adapter.harness, Moment.HEARTBEAT, session))


def wait(state: SessionState, later: list[dict]) -> None:
    """Keep the pointers' slugs for the harness's next moment that reaches the model (Grok's PostToolUse)."""
    state.pending = list(dict.fromkeys([*state.pending, *(p["slug"] for p in later)]))[: MAX_POINTERS + MAX_MORE]
