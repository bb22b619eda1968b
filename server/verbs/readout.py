"""What the model reads: the pack, the pointers and the delta text, decided in one place.

Every text memverbs puts before a model is chosen here, and nowhere else:

* **The pack** — at a session's start and after a compaction (the hooks), for every `context_pack`
  call (an MCP client, the CLI), and for the inspector's preview. Whom it is about (`standing`:
  the configured entities, the project's, what the session touched, the user's, then what the brain
  learned about recently), their cards (cards.py builds one), their open threads, the hot facts
  (hot_facts.py), cut to the budget (budget.py), in one text (render.py).
* **A heartbeat's text** — what changed since the session's cursor: `delta`'s keyset picks the
  pages and facts (verbs/delta.py: the cursor is the protocol's); here, its entities' threads
  (`threads_of`), this project's news first (`project_first`), and for a hook's session what it was
  not shown yet, with another project's news left out (`beat`).
* **The pointers** a prompt earns (the reflex): which of the entities it names are news to the
  session (name_index.py says which it names), and which one or two of their facts the prompt is about
  (pointers.py, beside this module: small enough for the hooks' fast path to load alone).

**One entry point**, `read_out(side, ask, session)`: each moment that tells a model something — a
session's start, a compaction, a prompt, Grok's tool call, the inspector's preview — asks it,
whichever brain it reaches. A `Side` is that brain: the local brain through the dispatcher (the
same verbs every caller calls, on the trusted `'local'` lane), or a remote brain over HTTP. The verbs
`context_pack` and `delta` are its server half: their handlers build their bodies with `pack` and
`threads_of`, on the brain's named operations. A trusted in-process caller (a local hook, the
inspector) hands its `Ask` to a verb beside the wire parameters (the dispatcher's `extras`), so the
verb does the reads the moment needs in the same call — the standing entities, the project's slug
once, the cards' page times, whether the session has a cursor — and says what it found in the
outcome's `aside`, never on the wire. A remote brain cannot be asked that (its wire is the protocol's):
there the pack's standing entities are chosen without reads (`standing` with no project reads), which
is the one difference between the two, decided here.

Imports only the records and the pointers at module level (a hook's moment loads it before the
brain is opened); what the server half needs is imported where it is used.
"""

from __future__ import annotations

from memverbs.server.record import Record
from memverbs.server.verbs.pointers import (
    card_key,
    fact_key,
    give,
    lines,
    page_key,
    pointers,
    pointers_for,
    wait,
)

# Not `typing.TYPE_CHECKING`: a hook's moment loads this module, and typing would cost it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any, Protocol

    from memverbs.server.brain.base import Brain, Row
    from memverbs.server.context import VerbContext
    from memverbs.server.verbs.pointers import Reads, Session

    class Calls(Protocol):
        """A dispatcher as a side calls it (server/dispatch.py's, a room above this one): its outcome has
        `is_error`, `body` and `aside`."""

        def call(self, name: str, arguments: dict | None, *, extras: dict | None = None) -> Any: ...

    class Side(Protocol):
        """A brain as a moment reaches it: the local brain through the dispatcher, or a remote one over HTTP."""

        in_process: bool  # a verb it calls reads the `Ask` beside its parameters and answers an `aside`
        source: str

        def call(self, verb: str, params: dict, ask: Ask | None = None) -> tuple[dict, dict]: ...
        def reads(self) -> Reads | None: ...


# -- the moments ---------------------------------------------------------------------------------

START = "start"  # a session's start, after a compaction, the inspector's preview: the pack
BEAT = "beat"  # a prompt or a tool call: what changed, and what the prompt names

PACK_BUDGET_TOKENS = 2_000  # ~8,000 chars of text: inside every harness's injection limit
DELTA_BUDGET_TOKENS = 1_500

MAX_STANDING = 8
MAX_LINKED = 3  # a project's people and components: room stays for the session's own and the user


class Ask(Record):
    """What a moment asks beside a verb's parameters: whom the session is, what it has, what it says.

    `configured` and `user`: the `hooks.entities` and `hooks.user` settings; `banked`: what the session
    touched, most recent first (its state's); `project`: the project's
    own slug where the brain's registry cannot be read (a remote brain; the local verbs read it);
    `prompt`: the user's prompt, read for the pointers and dropped; `changed`: False when a change
    check already found nothing new (no delta is asked for); `delivers`: whether what this moment
    prints reaches the model (Grok's prompt hook does not: its pointers wait); `waiting`: give the
    pointers that waited."""

    __slots__ = ("banked", "changed", "configured", "delivers", "moment", "now_ms", "project", "prompt",
                 "session_id", "user", "waiting")
    moment: str
    session_id: str
    configured: str
    user: str
    banked: list[str]
    project: str | None
    prompt: str | None
    now_ms: int
    changed: bool
    delivers: bool
    waiting: bool

    def __init__(self, moment: str, session_id: str, *, configured: str = "", user: str = "", banked: list[str] | None = None,
                 project: str | None = None, prompt: str | None = None, now_ms: int = 0, changed: bool = True,
                 delivers: bool = True, waiting: bool = False) -> None:
        super().__init__(moment=moment, session_id=session_id, configured=configured, user=user,
                         banked=[] if banked is None else banked, project=project, prompt=prompt, now_ms=now_ms,
                         changed=changed, delivers=delivers, waiting=waiting)


class Readout(Record):
    """What a moment reads out: the text (empty: say nothing), the body it came from, and what the verb
    said beside it (`aside`: the pack's project slug, cards' page times, whether the session has a cursor)."""

    __slots__ = ("aside", "body", "text")
    text: str
    body: dict
    aside: dict

    def __init__(self, text: str, body: dict | None = None, aside: dict | None = None) -> None:
        super().__init__(text=text, body={} if body is None else body, aside={} if aside is None else aside)


class LocalSide:
    """The local brain through a trusted dispatcher, as an in-process caller reaches it (a `Side`): its verbs
    read the moment's `Ask` and answer an `aside`. A refused verb raises `refused(body)`; a caller with its own
    error family (the inspector) passes its own. A local hook's `Hook` (hooks/runner.py) is the same side with
    the hook's failure classes and the pointers' reads."""

    in_process = True

    def __init__(self, dispatcher: Calls, source: str = "default", *,
                 refused: Callable[[dict], Exception] | None = None) -> None:
        self.dispatcher, self.source = dispatcher, source
        self._refused = refused or (lambda body: RuntimeError(f"{body.get('error')}: {body.get('message')}"))

    def call(self, verb: str, params: dict, ask: Ask | None = None) -> tuple[dict, dict]:
        outcome = self.dispatcher.call(verb, params, extras={"ask": ask} if ask is not None else None)
        if outcome.is_error:
            raise self._refused(outcome.body)
        return outcome.body, outcome.aside

    def reads(self) -> None:
        return None  # no pointers' reads: a preview or a test names nothing through the fast path

    def own_project(self) -> None:
        return None  # the verbs read the project's slug from the brain's registry themselves


def read_out(side: Side, ask: Ask, session: Session | None = None) -> Readout:
    """The one entry point: what `ask`'s moment tells the model, read from `side`, with `session` (a
    hook's; None for the inspector's preview, which banks nothing) brought up to date."""
    if ask.moment == START:
        return _start(side, ask, session)
    if ask.moment == BEAT and session is not None:
        return _beat(side, ask, session)
    raise ValueError(f"no such moment: {ask.moment}")


def _start(side: Side, ask: Ask, session: Session | None) -> Readout:
    """The pack. In process, the verb chooses the standing entities itself from the `Ask`, with the brain's
    reads (the wire's required `entities` is left empty for it); a remote brain is sent them, chosen
    without reads."""
    entities = ""
    if not side.in_process:
        own = [ask.project] if ask.project else None
        entities = ",".join(standing(ask.configured, ask.banked, project=own, user=ask.user))
    params = {"entities": entities, "budget_tokens": PACK_BUDGET_TOKENS, "session_id": ask.session_id}
    body, aside = side.call("context_pack", params, ask)
    if session is None:
        return Readout(body["text"], body, aside)
    has_cursor = aside.get("cursor") if side.in_process else session.cursor_set
    if not has_cursor:
        side.call("delta", {"session_id": ask.session_id})  # a first wake: establishes the cursor, reports nothing
        session.cursor_set = True
    after_pack(session, shown(body, aside.get("stamps", [])))
    text = body["text"]
    if ask.waiting and session.pending:  # a prompt's pointers that waited for this moment (Grok's first tool call)
        text = _render().with_named(text, _named_lines(side, ask, session))
    return Readout(text, body, aside)


def shown(body: dict, stamps: list[dict]) -> dict:
    """What a pack showed, as its bookkeeping marks it: the entities, facts and pages (with their times)."""
    return {
        "touched": touched(body),
        "facts": [{"entity_slug": f["entity_slug"], "fact": f["fact"], "valid_from": f["valid_from"]} for f in body["facts"]],
        "stamps": stamps,
    }


def after_pack(session: Session, pack_shown: dict) -> None:
    """A pack shown: bank what it is about; what it showed, the next heartbeat and pointer need not repeat
    (delta re-delivers the last moments before a wake, at least once)."""
    session.bank(pack_shown["touched"])
    session.unseen(pack_shown["facts"], fact_key)
    session.unseen(pack_shown["stamps"], page_key)
    session.unseen(pack_shown["stamps"], card_key)


def _beat(side: Side, ask: Ask, session: Session) -> Readout:
    """The delta's news this session was not shown, and the pointers the prompt earns: one message.
    `ask.changed` False: the brain said nothing changed since the cursor, so no delta is asked for."""
    if not ask.changed:
        named = _named_lines(side, ask, session)
        return Readout(delta_text("", [], [], [], named=named) if named else "")
    params = {"session_id": ask.session_id, "entities": ",".join(session.entities[:8]), "budget_tokens": DELTA_BUDGET_TOKENS}
    body, aside = side.call("delta", params, ask)
    project = aside.get("project") if side.in_process else ask.project
    pages, facts, threads = beat(body, session, project, ask.configured)
    # The pointers come after the delta's lines, so what it just showed is not pointed to again.
    named = _named_lines(side, ask, session)
    if not (pages or facts or threads or named):
        return Readout("", body, aside)
    return Readout(delta_text(body["since"], pages, facts, threads, named=named), body, aside)


def beat(body: dict, session: Session, project: str | None, configured: str) -> tuple[list, list, list]:
    """A delta's pages, facts and threads this session was not shown. In a project, what is about another
    project's entity — one this session never asked about — stays out of its context as it stays out of
    its pack (the brain keeps it)."""
    from memverbs.server.projects import PROJECT_PREFIX  # noqa: PLC0415
    from memverbs.server.verbs.shapes import split_entities  # noqa: PLC0415

    facts = body["facts"]
    if project is not None:
        asked = {project, *session.entities, *split_entities(configured)}
        facts = [f for f in facts if not (f.get("entity_slug") or "").startswith(PROJECT_PREFIX) or f["entity_slug"] in asked]
    session.bank(touched({"facts": facts}))
    pages = session.unseen(body["pages"], page_key)
    facts = session.unseen(facts, fact_key)
    threads = session.unseen(body["threads"], lambda t: f"thread\0{t['kind']}\0{t['text']}\0{t['date']}")
    return pages, facts, threads


def _named_lines(side: Side, ask: Ask, session: Session) -> list[str]:
    """The pointers' lines for this moment: the prompt's, or those that waited for a moment whose output
    reaches the model (Grok's tool call)."""
    reads = side.reads()
    if reads is None:
        return []
    if ask.prompt:
        if not ask.delivers:
            wait(session, pointers(reads, side.source, ask.prompt, session, ask.now_ms, mark=False))
            return []
        return lines(pointers(reads, side.source, ask.prompt, session, ask.now_ms))
    if ask.waiting and session.pending:
        given = pointers_for(reads, side.source, session.pending, session, ask.now_ms)
        give(session, given)
        session.pending = []
        return lines(given)
    return []


def _render() -> ModuleType:
    """server/verbs/render.py, imported where a text is written."""
    from memverbs.server.verbs import render  # noqa: PLC0415

    return render


# -- whom a pack is about ------------------------------------------------------------------------


def standing(configured: str, banked: list[str], recent: Callable[[], list[str]] | None = None, *,
             project: list[str] | None = None, user: str = "") -> list[str]:
    """Standing entities, in order, capped at context_pack's 8:

    1. the configured ones (`memverbs config set hooks.entities "people/me,projects/x"`);
    2. in a project: the project's entity and what hangs off it (`project`: with the brain's reads,
       `project_standing`; a remote brain gives the project's own slug alone — its registry, linked and
       recent entities would each be a round trip, and the pack's hot facts warm a new session anyway);
    3. what this session touched (banked), so after a compaction the pack brings back what the summary dropped;
    4. the user's own entity (`hooks.user`, default `people/me`);
    5. outside a project only, while room is left: what the brain learned about most recently (`recent()`),
       so a new session on a brain with no configuration still starts warm. In a project that would be any
       repository's news; the project's own facts lead the pack's facts arm instead.
    """
    from memverbs.server.verbs.shapes import split_entities  # noqa: PLC0415

    chosen = split_entities(configured, cap=MAX_STANDING)
    ahead = [s for s in dict.fromkeys(project or []) if s not in chosen]
    user_slugs = [s for s in split_entities(user, cap=1) if s not in chosen and s not in ahead]
    # The session's banked entities fill what the user's own entity leaves: it keeps its place.
    room = MAX_STANDING - len(chosen) - len(ahead) - len(user_slugs)
    taken = {*chosen, *ahead, *user_slugs}
    kept = [s for s in dict.fromkeys(banked) if s and s not in taken][: max(0, room)]
    chosen = [*chosen, *ahead, *kept, *user_slugs][:MAX_STANDING]
    if project is None and len(chosen) < MAX_STANDING and recent is not None:
        for slug in recent():
            if len(chosen) >= MAX_STANDING:
                break
            if slug not in chosen:
                chosen.append(slug)
    return chosen


def project_standing(brain: Brain, source: str, slug: str) -> list[str]:
    """The project's entity, then what hangs off it: the entities most of its facts are about, then its
    page's links (world-visible pages only: the pack is world-only)."""
    linked = brain.project_entity_slugs(source, slug, limit=MAX_LINKED)
    if len(linked) < MAX_LINKED:
        edges = brain.edges_out(source, slug, MAX_LINKED, allow_private=False, private_rows=False)
        edges += brain.edges_in(source, slug, MAX_LINKED, allow_private=False, private_rows=False)
        linked += [e["slug"] for e in edges]
    return [slug, *[s for s in dict.fromkeys(linked) if s != slug][:MAX_LINKED]]


def touched(body: dict) -> list[str]:
    """Entity slugs a pack or delta showed: its cards, then its facts' entities."""
    slugs = [c["slug"] for c in body.get("cards", [])]
    slugs += [f["entity_slug"] for f in body.get("facts", []) if f.get("entity_slug")]
    return list(dict.fromkeys(slugs))


# -- the pack (context_pack's body) --------------------------------------------------------------


def pack(ctx: VerbContext, params: dict, since: int | None = None) -> dict:
    """context_pack's body: cards, open threads (after `since`, when given), hot facts and their text. A trusted in-process caller's
    `Ask` (ctx.extras["ask"]) has the verb choose the standing entities, and puts in
    ctx.extras["aside"] what that caller needs besides: the project's slug, the cards' page times,
    whether the session has a cursor."""
    from memverbs.server.errors import PROTOCOL_VERSION  # noqa: PLC0415
    from memverbs.server.names import estimate_tokens, looks_like_slug  # noqa: PLC0415
    from memverbs.server.protocol.params import budget as parse_budget  # noqa: PLC0415
    from memverbs.server.timeparse import iso, now_ms  # noqa: PLC0415
    from memverbs.server.verbs.budget import budget_fields, pack_two  # noqa: PLC0415
    from memverbs.server.verbs.hot_facts import fact_arms, hot_facts  # noqa: PLC0415
    from memverbs.server.verbs.shapes import split_entities  # noqa: PLC0415

    asked: Ask | None = ctx.extras.get("ask")
    brain, source = ctx.brain, ctx.source
    project = ctx.project_slug()
    if asked is not None:
        own = project_standing(brain, source, project) if project else None
        names = standing(asked.configured, asked.banked, lambda: brain.recent_entity_slugs(source, limit=MAX_STANDING),
                         project=own, user=asked.user)
    else:
        names = split_entities(params["entities"])
    include_private = params.get("include_private") is True and ctx.caller.reads_private
    now = now_ms()
    pages = pack_pages(ctx, names, allow_private=include_private or ctx.remote_private_pages)
    cards = [_pack_card(ctx, page, include_private=include_private, now=now) for page in pages]
    session = (params.get("session_id") or "").strip() or None
    # Facts about every requested entity, a page or not (a project's entity often has none).
    about = list(dict.fromkeys([c["slug"] for c in cards] + [n for n in names if looks_like_slug(n)]))
    threaded = frozenset(t["text"] for c in cards for t in c["open_threads"] if t["kind"] == "commitment")
    arms = fact_arms(ctx, about, session, world_only=not include_private, now=now, project=project)
    facts = hot_facts(arms, about, now=now, project=project, threaded=threaded)

    budget = parse_budget(params.get("budget_tokens"))
    fields: dict = {}
    if budget is not None:
        a, b = pack_two(
            cards,
            lambda c: estimate_tokens(f"{c['title']} {c['summary']} {' '.join(t['text'] for t in c['open_threads'])}"),
            facts,
            lambda f: estimate_tokens(f["fact"]),
            budget,
        )
        cards, facts = a.kept, b.kept
        fields = budget_fields(budget, a, b)
    threads = [t for c in cards for t in c["open_threads"] if thread_after(t, since)]
    named = (ctx.caller.project.name, project) if ctx.caller.project is not None and project is not None else None
    body = {
        "protocol_version": PROTOCOL_VERSION,
        "entities": names,
        "cards": cards,
        "open_threads": threads,
        "facts": facts,
        "text": _render().render_pack(cards, threads, facts, project=named),
    }
    body.update(fields)
    if asked is not None:
        updated = {p["slug"]: p["updated_at"] for p in pages}
        aside: dict = {"project": project, "stamps": [{"slug": c["slug"], "updated_at": iso(updated[c["slug"]])} for c in cards]}
        if session is not None:
            aside["cursor"] = brain.cursor(source, ctx.caller.client_id, session) is not None
        ctx.extras["aside"] = aside
    return body


def pack_pages(ctx: VerbContext, names: list[str], *, allow_private: bool) -> list[Row]:
    """The page of each resolvable name, in order; a miss adds nothing, a repeat adds nothing twice."""
    from memverbs.server.verbs.cards import find_entity  # noqa: PLC0415

    pages: list[Row] = []
    seen: set[str] = set()
    for name in names:
        found = find_entity(ctx, name, allow_private=allow_private)
        if not found or found[0].page["slug"] in seen:
            continue
        seen.add(found[0].page["slug"])
        pages.append(found[0].page)
    return pages


def _pack_card(ctx: VerbContext, page: Row, *, include_private: bool, now: int) -> dict:
    from memverbs.server.verbs.cards import build_card  # noqa: PLC0415

    c = build_card(ctx, page, include_private=include_private, allow_private=include_private or ctx.remote_private_pages,
                   now=now)
    return {
        "slug": c["entity"]["slug"],
        "title": c["entity"]["title"],
        "type": c["entity"]["type"],
        "summary": c["summary"],
        "open_threads": c["open_threads"],
        "edges": c["edges"],
        "backlink_count": c["backlink_count"],
    }


def threads_of(ctx: VerbContext, names: list[str], *, include_private: bool, now: int, since: int | None) -> list[dict]:
    """delta's threads: the open threads of its entities' cards after `since`, in order, without the rest
    of each card (its edges, aliases and counts): what a heartbeat that delivers reports for them."""
    from memverbs.server.verbs.cards import card_threads  # noqa: PLC0415

    pages = pack_pages(ctx, names, allow_private=include_private or ctx.remote_private_pages)
    return [t for page in pages for t in card_threads(ctx, page["slug"], include_private=include_private, now=now)
            if thread_after(t, since)]


def delta_text(since: str, pages: list[dict], facts: list[dict], threads: list[dict], named: list[str] | None = None) -> str:
    """What changed since `since`, as the model reads it; `named`: the pointers' lines, in the same message
    under their own heading, so a prompt gets one block of memory, not two."""
    return _render().render_delta(since, pages, facts, threads, named=named)


def thread_after(thread: dict, since: int | None) -> bool:
    from memverbs.server.timeparse import parse_instant  # noqa: PLC0415

    if since is None:
        return True
    at = parse_instant(thread["date"]) if thread.get("date") else None
    return at is not None and at > since


def project_first(facts: list[dict], rows: list[Row], project: str | None) -> list[dict]:
    """delta's facts with this project's news first (server/projects.py), each part in delivery order."""
    if project is None or not facts:
        return facts
    ours = [project in (r["project"], r["entity_slug"]) for r in rows[: len(facts)]]
    return ([f for f, mine in zip(facts, ours, strict=True) if mine]
            + [f for f, mine in zip(facts, ours, strict=True) if not mine])
