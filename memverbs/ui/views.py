"""The inspector's views: each one a function of the request's query, answering HTML.

Every read goes through what the CLI already uses — the local dispatcher (the trusted
caller, lane 'local') for the verbs and page ops, the brain's browse reads for what no tool
answers (every entity, a fact's audit trail, the live feed) — so what the page shows is what
`memverbs recall`, `entity`, `entities` and `history` show.

A view answers (title, body) or (title, body, lede): the server puts them in the frame
(server.py `_page`). A view that finds nothing to show answers None, and the server a 404.
"""

from __future__ import annotations

import json
import re
from html import escape
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote, urlencode

from memverbs.server.errors import MemverbsError
from memverbs.server.timeparse import iso, now_ms, parse_since
from memverbs.ui import markdown
from memverbs.ui.charts import bar_chart, latency_over_time
from memverbs.ui.links import PageLinks

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from memverbs.server.brain.base import Brain, Row
    from memverbs.ui.app import InspectorApp

PAGE_SIZE = 50
FEED_LIMIT = 200
HARNESSES = ("claude", "codex", "grok", "opencode", "openclaw", "plain")

# The keyboard, as ui.js reads it: shown in the help dialog (`?`) and documented in docs/ui.md.
KEYS = (
    ("/", "search: the view's own search box, or the Search view"),
    ("j k", "next / previous row of a list or table"),
    ("o", "open the current row (Enter also follows its focused link)"),
    ("x", "show or hide the current row's actions"),
    ("[ ]", "newer / older page"),
    ("g t", "go to Timeline (g e Entities, g p Pack preview, g s Search, g c Conflicts, g a Access, g h Health)"),
    ("t", "switch between the light and the dark theme (remembered in this browser)"),
    ("?", "this list"),
    ("Esc", "leave a text box, close this list"),
)


def _kbd(keys: str) -> str:
    return " ".join(f"<kbd>{escape(k)}</kbd>" for k in keys.split())


KEYS_DIALOG = (
    '<dialog id="keys" aria-labelledby="keys-h"><h2 id="keys-h">Keyboard</h2><dl>'
    + "".join(f"<dt>{_kbd(k)}</dt><dd>{escape(what)}</dd>" for k, what in KEYS)
    + '</dl><form method="dialog"><button type="submit" id="keys-close">Close</button></form></dialog>'
)
KEYS_FOOTER = (
    '<footer class="keys">Keyboard: <kbd>/</kbd> search · <kbd>j</kbd> <kbd>k</kbd> move · <kbd>o</kbd> open · '
    "<kbd>x</kbd> actions · <kbd>t</kbd> theme · <kbd>?</kbd> every key</footer>"
)


def e(value: object) -> str:
    return escape("" if value is None else str(value))


def href(path: str, **query: object) -> str:
    q = {k: v for k, v in query.items() if v not in (None, "")}
    return path + ("?" + urlencode(q) if q else "")


def entity_href(slug: str) -> str:
    return "/entity/" + quote(slug, safe="/")


def private_badge(visibility: str | None) -> str:
    return '<span class="badge badge-private" title="private: no MCP caller sees this">private</span>' if visibility == "private" else ""


def when(ms: int | None) -> str:
    """A moment as <time>: UTC in the HTML, the reader's own zone once ui.js has run."""
    if not ms:
        return ""
    text = iso(ms)
    return f'<time datetime="{e(text)}">{e(text[:16].replace("T", " "))} UTC</time>'


def when_text(text: str | None) -> str:
    """A moment the wire gives as text: an instant as `when` draws it; a day (a date, or the midnight
    an open thread's dated row becomes) as that date, in no time zone."""
    if not text:
        return ""
    if len(text) == 10 or text[10:] in ("T00:00:00.000Z", "T00:00:00Z"):
        return f'<time datetime="{e(text[:10])}" data-day>{e(text[:10])}</time>'
    from memverbs.server.timeparse import parse_instant  # noqa: PLC0415

    at = parse_instant(text)
    return when(at) if at is not None else e(text)


def fact_state(row: Row, now: int) -> str:
    if row["superseded_by"] is not None:
        return "superseded"
    if row["expired_at"] is not None:
        return "forgotten"
    if row["valid_until"] is not None and row["valid_until"] <= now:
        return "lapsed"
    return "active"


def not_found(what: str) -> tuple[str, str]:
    return "Not found", (
        f'<div class="panel"><p class="error" role="alert">{e(what)}</p>'
        '<p>Try the <a href="/timeline">timeline</a>, the <a href="/entities">entities</a> or '
        '<a href="/search">search</a>.</p></div>'
    )


# -- timeline -------------------------------------------------------------------------------


def feed_filters(q: dict) -> dict:
    """The timeline's filters from the query string; times as the CLI reads them (7d, 2026-08-11…)."""
    since = _when(q, "since")
    until = _when(q, "until")
    return {
        "entity": q.get("entity") or None,
        "kind": q.get("kind") or None,
        "visibility": q.get("visibility") or None,
        "source": q.get("source") or None,
        "since": since,
        "until": until,
    }


FILTERS = ("entity", "kind", "visibility", "source", "since", "until")


class FilterError(MemverbsError, ValueError):
    """A timeline filter that does not parse: said on the page, the filter not applied."""


def _when(q: dict, key: str) -> int | None:
    text = (q.get(key) or "").strip()
    if not text:
        return None
    at = parse_since(text)
    if at is None:
        raise FilterError(f'{key}: "{text}" is not a time; use 2026-08-11, 2026-08-11T09:30:00Z, 24h, 7d or 30m ago')
    return at


class Position(NamedTuple):
    """Where a change sits in the timeline: newest first by its moment, ties broken the same way
    on every read (facts by id, pages by slug), so a page of the timeline ends at a position and
    the next page starts just after it."""

    at: int
    kind: int  # 1 fact, 0 page
    fact_id: int
    slug: str

    def token(self) -> str:
        return f"{self.at}-{'f' if self.kind else 'p'}-{self.fact_id if self.kind else self.slug}"

    @classmethod
    def parse(cls, text: str | None) -> Position | None:
        parts = (text or "").split("-", 2)
        if len(parts) != 3 or not parts[0].isdigit() or parts[1] not in ("f", "p"):
            return None
        if parts[1] == "f":
            return cls(int(parts[0]), 1, int(parts[2]), "") if parts[2].isdigit() else None
        return cls(int(parts[0]), 0, 0, parts[2])


def _fact_item(brain: Brain, r: Row, now: int) -> dict:
    label, at = fact_change(brain, r)
    pos = Position(at, 1, int(r["id"]), "")
    return _keyed(f"fact-{r['id']}", pos, fact_row(r, now, change=(label, at)))


def _page_item(r: Row) -> dict:
    pos = Position(int(r["changed_at"]), 0, 0, str(r["slug"]))
    return _keyed(f"page-{r['slug']}", pos, page_change_row(r))


def feed_items(app: InspectorApp, f: dict, after: int) -> list[dict]:
    """Fact and page changes at or after `after` (ms), newest first, each with its HTML row: the live lane."""
    brain, source, now = app.brain(), app.source, now_ms()
    start = max(after, f["since"] or 0)
    items = [_fact_item(brain, r, now) for r in brain.fact_changes(
        source, start, entity=f["entity"], kind=f["kind"], visibility=f["visibility"], provenance=f["source"],
        until=f["until"], limit=FEED_LIMIT)]
    if not f["kind"] and not f["source"]:  # pages have neither a kind nor an agent source
        items += [_page_item(r) for r in brain.page_changes(
            source, start, entity=f["entity"], visibility=f["visibility"], until=f["until"], limit=FEED_LIMIT)]
    items.sort(key=lambda i: i["pos"], reverse=True)
    return items[:FEED_LIMIT]


def feed_page(app: InspectorApp, f: dict, before: Position | None, size: int = PAGE_SIZE) -> tuple[list[dict], Position | None]:
    """One page of the timeline: the `size` newest changes older than `before` (all of them when
    None), and the position the next page starts after (None on the last page).

    The brain reads the newest N changes by their latest moment; an older page asks for the changes
    recorded by `before` (a change's moment is never earlier than its recording) and drops those
    changed since, reading further back until the page is full or the brain has no more.
    """
    brain, source, now = app.brain(), app.source, now_ms()
    until = f["until"]
    if before is not None:
        until = before.at if until is None else min(until, before.at)

    def below(pos: Position) -> bool:
        return before is None or pos < before

    def read(fetch: Callable[[int], list], item: Callable[[Row], dict]) -> list[dict]:
        limit = size + 1
        while True:
            rows = fetch(limit)
            kept = [i for i in (item(r) for r in rows) if below(i["pos"])]
            if len(kept) > size or len(rows) < limit:
                return kept
            limit *= 4

    items = read(lambda n: brain.fact_changes(source, f["since"] or 0, entity=f["entity"], kind=f["kind"],
                                              visibility=f["visibility"], provenance=f["source"], until=until, limit=n),
                 lambda r: _fact_item(brain, r, now))
    if not f["kind"] and not f["source"]:
        items += read(lambda n: brain.page_changes(source, f["since"] or 0, entity=f["entity"], visibility=f["visibility"],
                                                   until=until, limit=n), _page_item)
    items.sort(key=lambda i: i["pos"], reverse=True)
    more = len(items) > size
    items = items[:size]
    return items, (items[-1]["pos"] if more and items else None)


def _keyed(key: str, pos: Position, row: str) -> dict:
    """A feed item: its row carries its key and moment, so a later change to the same fact or page
    replaces it, and the same change read again is known as already shown."""
    html = row.replace("<li ", f'<li data-key="{e(key)}" data-at="{pos.at}" ', 1)
    return {"key": key, "at": pos.at, "pos": pos, "html": html}


def fact_change(brain: Brain, r: Row) -> tuple[str, int]:
    """What the change that puts the fact where it is in the timeline was, and when.

    `changed_at` is the latest of its recording, its expiry and its audited edits (restore,
    visibility); the timeline orders by it, so it shows that moment and says which change it was.
    """
    at = int(r["changed_at"]) if "changed_at" in r.keys() else int(r["created_at"])  # noqa: SIM118 - `in` on a row tests its values
    if r["expired_at"] is not None and at == r["expired_at"]:
        if r["superseded_by"] is not None:
            return "superseded", at
        why = (r["expiry_reason"] if "expiry_reason" in r.keys() else "") or ""  # noqa: SIM118
        return ("expired as a duplicate" if why.startswith("duplicate") else "forgotten"), at
    if at != r["created_at"]:
        edits = [a for a in brain.fact_trail(int(r["id"]))["audit"] if a["at"] == at]
        if edits:
            last = edits[-1]
            return ("restored" if last["action"] == "restored" else f"made {last['new_value']}"), at
        return "changed", at
    return "remembered", at


def _fact_forms(r: Row, state: str) -> str:
    fid = r["id"]
    forms = ""
    if state == "active":
        forms += (
            f'<form class="inline-form" method="post" action="/forget"><input type="hidden" name="id" value="{fid}">'
            f'<label>reason <input name="reason" required size="16" aria-label="why forget fact #{fid}"></label>'
            '<button type="submit" class="danger">Forget</button></form>'
        )
    elif state == "forgotten":
        forms += (
            f'<form class="inline-form" method="post" action="/restore"><input type="hidden" name="id" value="{fid}">'
            f'<label>reason <input name="reason" required size="16" aria-label="why restore fact #{fid}"></label>'
            '<button type="submit">Restore</button></form>'
        )
    other = "world" if r["visibility"] == "private" else "private"
    forms += (
        f'<form class="inline-form" method="post" action="/fact-visibility">'
        f'<input type="hidden" name="id" value="{fid}"><input type="hidden" name="visibility" value="{other}">'
        f'<button type="submit" class="quiet make-{other}" aria-label="make fact #{fid} {other}">Make {other}</button></form>'
    )
    return f'<div class="actions">{forms}</div>'


def fact_row(r: Row, now: int, *, change: tuple[str, int] | None = None, actions: str = "menu", filed: bool = True) -> str:
    """One fact as a row: when and what changed, the text, where it is filed (unless `filed` is
    False: the entity's own view), its marks, and its actions (`menu`: behind an Actions
    disclosure; `open`: shown; `none`)."""
    state = fact_state(r, now)
    label, at = change or ("remembered", r["created_at"])
    entity = f'<a class="entity" href="{e(entity_href(r["entity_slug"]))}">{e(r["entity_slug"])}</a>' if r["entity_slug"] and filed else ""
    state_badge = "" if state in ("active", label) else f'<span class="badge badge-{state}">{state}</span>'
    why = r["expiry_reason"] if "expiry_reason" in r.keys() else None  # noqa: SIM118 - `in` on a row tests its values
    reason = f'<span class="reason">reason: {e(why)}</span>' if state != "active" and why else ""
    acts = ""
    if actions == "menu":
        acts = (f'<details class="acts"><summary>Actions<span class="sr"> for fact #{r["id"]}</span></summary>'
                f"{_fact_forms(r, state)}</details>")
    elif actions == "open":
        acts = f'<div class="acts acts-open">{_fact_forms(r, state)}</div>'
    return (
        f'<li class="fact state-{state}{" is-private" if r["visibility"] == "private" else ""}" data-fact-id="{r["id"]}">'
        f'<div class="row-when">{when(at)}<span class="change change-{label.replace(" ", "-")}">{e(label)}</span></div>'
        f'<div class="row-body"><p class="text">{e(r["fact"])}</p><p class="meta">'
        f'<a class="id primary" href="/fact/{r["id"]}">#{r["id"]}</a><span class="kind">{e(r["kind"])}</span>{entity}'
        f'<span class="provenance">{e(r["provenance"])}</span>{private_badge(r["visibility"])}{state_badge}{reason}</p></div>'
        f"{acts}</li>"
    )


def page_change_row(r: Row) -> str:
    what = "page deleted" if r["deleted_at"] else "page written"
    title = e(r["title"] or r["slug"])
    # A deleted page has no view to open (its address answers 404, saying so): its title is text.
    shown = f'<span class="primary gone">{title}</span>' if r["deleted_at"] else f'<a class="primary" href="{e(markdown.page_href(r["slug"]))}">{title}</a>'
    return (
        f'<li class="page-change{" is-private" if r["visibility"] == "private" else ""}">'
        f'<div class="row-when">{when(r["changed_at"])}<span class="change change-{what.replace(" ", "-")}">{what}</span></div>'
        f'<div class="row-body"><p class="text">{shown}</p>'
        f'<p class="meta"><span class="slug">{e(r["slug"])}</span><span>{e(r["type"] or "")}</span>{private_badge(r["visibility"])}</p></div></li>'
    )


def timeline(app: InspectorApp, q: dict) -> tuple[str, str, str]:
    problem = ""
    try:
        f = feed_filters(q)
    except FilterError as exc:
        problem = f'<p class="error" role="alert">{e(exc)}</p>'
        q = {k: v for k, v in q.items() if k not in ("since", "until")}
        f = feed_filters(q)
    before = Position.parse(q.get("before"))
    items, older = feed_page(app, f, before)
    from memverbs.server.protocol.verb_defs import KINDS  # noqa: PLC0415

    active = [k for k in FILTERS if q.get(k)]
    form = (
        f'<details class="filter-box"{" open" if active or problem else ""}><summary>Filter'
        + (f" ({len(active)} on: {e(', '.join(active))})" if active else "")
        + '</summary><form class="filters" method="get" action="/timeline">'
        f'<label>entity <input name="entity" value="{e(q.get("entity"))}" placeholder="people/alice"></label>'
        f'<label>kind <select name="kind">{options(("", *KINDS), q.get("kind") or "")}</select></label>'
        f'<label>visibility <select name="visibility">{options(("", "world", "private"), q.get("visibility") or "")}</select></label>'
        f'<label>source <input name="source" value="{e(q.get("source"))}" placeholder="claude" size="10"></label>'
        f'<label>since <input name="since" value="{e(q.get("since"))}" placeholder="7d" size="10"></label>'
        f'<label>until <input name="until" value="{e(q.get("until"))}" placeholder="2026-08-11" size="10"></label>'
        '<button type="submit">Filter</button>'
        + (' <a href="/timeline">clear</a>' if active else "")
        + "</form></details>"
    )
    kept = {k: q.get(k) for k in FILTERS}
    pager = []
    if before is not None:
        pager.append(f'<a rel="prev" href="{e(href("/timeline", **kept))}">← newest</a>')
    if older is not None:
        pager.append(f'<a rel="next" href="{e(href("/timeline", **kept, before=older.token()))}">older changes →</a>')
    if before is None:
        # The live lane: polls from the newest change shown (ui.js).
        feed_url = href("/api/feed", **kept)
        cursor = max((i["at"] for i in items), default=0)
        status = ('<p class="live" role="status" aria-live="polite" id="live-status"><span class="dot" aria-hidden="true"></span>'
                  "<span>live: new facts and page changes appear at the top</span></p>")
        attrs = f'data-feed="{e(feed_url)}" data-cursor="{cursor}"'
    else:
        status = ('<p class="live off" id="live-status"><span class="dot" aria-hidden="true"></span>'
                  "<span>older changes: live updates show on the newest page</span></p>")
        attrs = ""
    body = (
        form + problem + status
        + f'<ol id="feed" class="rows" {attrs}{"" if items else " hidden"}>' + "".join(i["html"] for i in items) + "</ol>"
        + ("" if items else f'<div class="empty" id="feed-empty">{_empty_feed(f)}</div>')
        + (f'<nav class="pager" aria-label="timeline pages">{"".join(pager)}</nav>' if pager else "")
    )
    lede = "Every change to facts and pages, newest first."
    return "Timeline", body, lede


def _empty_feed(f: dict) -> str:
    """What an empty timeline says: that the filters leave nothing (and how to clear them), or how memory gets in."""
    if any(f.values()):
        return '<p>No change matches these filters. <a href="/timeline">Clear them</a> to see every change.</p>'
    return "<p>Nothing yet: changes appear here, live, as agents and you remember facts and write pages.</p>" + EMPTY_BRAIN


def options(values: Iterable[str], chosen: str) -> str:
    return "".join(f'<option value="{e(v)}"{" selected" if v == chosen else ""}>{e(v or "any")}</option>' for v in values)


def feed_json(app: InspectorApp, q: dict) -> dict:
    try:
        f = feed_filters(q)
    except FilterError:
        f = feed_filters({k: v for k, v in q.items() if k not in ("since", "until")})
    try:
        after = int(q.get("after") or 0)
    except ValueError:
        after = 0
    items = feed_items(app, f, after)
    cursor = max([after, *(i["at"] for i in items)])
    return {"cursor": cursor, "items": [{k: i[k] for k in ("key", "at", "html")} for i in items]}


# -- entities -------------------------------------------------------------------------------


def entities(app: InspectorApp, q: dict) -> tuple[str, str, str]:
    text = (q.get("q") or "").strip().lower()
    try:
        offset = max(0, int(q.get("offset") or 0))
    except ValueError:
        offset = 0
    total, window = app.brain().entity_window(app.source, now_ms(), search=text, offset=offset, limit=PAGE_SIZE)
    form = (
        '<form class="filters" method="get" action="/entities" role="search">'
        f'<label class="grow">find <input type="search" name="q" value="{e(q.get("q"))}" placeholder="slug or title" autofocus></label>'
        '<button type="submit">Search</button></form>'
    )
    lines = "".join(
        f'<tr><td><a class="slug primary" href="{e(entity_href(r["slug"]))}">{e(r["slug"])}</a></td><td>{e(r["title"])}</td>'
        f'<td>{e(r["type"])}</td><td>{"page" if r["has_page"] else "facts only"} {private_badge(r["visibility"])}</td>'
        f'<td class="num" data-label="active / facts">{r["active"]} / {r["facts"]}</td>'
        f'<td class="num" data-label="private">{r["private"] or ""}</td><td>{when(r["last_touched"])}</td></tr>'
        for r in window
    )
    nav = []
    if offset > 0:
        nav.append(f'<a rel="prev" href="{e(href("/entities", q=q.get("q"), offset=max(0, offset - PAGE_SIZE)))}">← previous</a>')
    if offset + PAGE_SIZE < total:
        nav.append(f'<a rel="next" href="{e(href("/entities", q=q.get("q"), offset=offset + PAGE_SIZE))}">next →</a>')
    lede = "Everything the brain knows about, with or without a page."
    if not window:
        if text:
            said = (f'<p>No entity’s slug or title holds “{e(q.get("q"))}”.</p><p><a href="/entities">Every entity</a> · '
                    f'<a href="{e(href("/search", q=q.get("q")))}">search the pages and facts for it</a></p>')
        elif offset:
            said = '<p>No entities this far: <a href="/entities">back to the first page</a>.</p>'
        else:
            said = EMPTY_BRAIN
        return "Entities", form + f'<div class="empty">{said}</div>', lede
    shown = f"{offset + 1}–{offset + len(window)} of {total}"
    body = (
        form
        + f'<p class="count">{shown} {"entity" if total == 1 else "entities"}</p>'
        + '<div class="table-wrap"><table class="listing"><thead><tr><th scope="col">slug</th><th scope="col">title</th><th scope="col">type</th>'
        '<th scope="col">page</th><th scope="col" class="num">active / facts</th><th scope="col" class="num">private</th>'
        '<th scope="col">last touched</th></tr></thead><tbody>'
        + lines
        + "</tbody></table></div>"
        + (f'<nav class="pager" aria-label="entity pages">{" ".join(nav)}</nav>' if nav else "")
    )
    return "Entities", body, lede


# What every view of an empty brain says to do next: the three ways memory gets in.
EMPTY_BRAIN = (
    "<p><strong>The brain is empty.</strong> Memory gets in three ways:</p>"
    '<ul class="next-steps"><li>an agent remembers it: <code>memverbs install claude</code> (or codex, grok, opencode, openclaw) '
    "wires the server and the hooks;</li>"
    '<li>you tell it: <code>memverbs remember "Dana owns billing" --provenance me --entity people/dana</code>;</li>'
    "<li>your notes: <code>memverbs sync ~/notes --prefix notes</code> keeps a markdown folder and the brain in step.</li></ul>"
)


def _as_written(app: InspectorApp, slug: str, aka: list[str], frontmatter: dict) -> list[str]:
    """The card's aliases (kept normalised, for matching) as the page or `add-alias` wrote them."""
    from memverbs.server.names import normalize_alias  # noqa: PLC0415

    declared = frontmatter.get("aliases")
    written: dict[str, str] = {}
    for alias in [*([declared] if isinstance(declared, str) else declared or []), *app.brain().manual_aliases(app.source, slug)]:
        if isinstance(alias, str):
            written.setdefault(normalize_alias(alias), alias)
    return [written.get(normalize_alias(a), a) for a in aka]


THREAD_KINDS = {"recent_event": "event", "commitment": "commitment"}  # as server/verbs/render.py labels them


def _card(app: InspectorApp, card: dict, page_row: Row | None) -> str:
    """The card `entity` answers an agent, drawn once: summary, aliases, open threads, edges, counts."""
    ent = card["entity"]
    frontmatter = json.loads(page_row["frontmatter"]) if page_row is not None else {}
    links = page_links(app, page_row) if page_row is not None else None
    aka = _as_written(app, ent["slug"], card["aka"], frontmatter)
    rows = []
    if aka:
        rows.append("<dt>also known as</dt><dd>" + "".join(f'<span class="chip">{e(a)}</span>' for a in aka) + "</dd>")
    if card["open_threads"]:
        rows.append("<dt>open threads</dt><dd><ul class=\"edges\">" + "".join(
            f'<li><span class="edge-type">{e(THREAD_KINDS.get(t["kind"], t["kind"]))}</span> {markdown.inline(t["text"], links)} '
            f'<span class="note">{when_text(t["date"])}</span></li>'
            for t in card["open_threads"]) + "</ul></dd>")
    for direction, name in (("out", "links to"), ("in", "linked from")):
        edges = [x for x in card["edges"] if x["direction"] == direction]
        if edges:
            rows.append(f"<dt>{name}</dt><dd><ul class=\"edges\">" + "".join(
                f'<li><span class="edge-type">{e(x["type"])}</span> <a href="{e(entity_href(x["slug"]))}">{e(x["slug"])}</a>'
                + (f' <span class="note">{e(x["context"])}</span>' if x.get("context") else "") + "</li>"
                for x in edges) + "</ul></dd>")
    touched = (card.get("last_touched") or {}).get("updated_at")
    summary = (f'<p class="card-summary">{markdown.inline(card["summary"], links)}</p>' if card["summary"]
               else '<p class="note">No summary: the page has no <code>summary:</code> and no sentence under its title.</p>')
    return (
        '<section class="panel card" aria-labelledby="card-h">'
        '<p class="eyebrow" id="card-h">Card (as an agent sees it)</p>'
        + summary + (f"<dl>{''.join(rows)}</dl>" if rows else "")
        + f'<p class="card-counts">{card["active_fact_count"]} active fact{"" if card["active_fact_count"] == 1 else "s"} · '
        f'{card["backlink_count"]} backlink{"" if card["backlink_count"] == 1 else "s"}'
        + (f" · updated {e(touched[:10])}" if touched else "")
        + f' · <a href="{e(markdown.page_href(ent["slug"]))}">read the page</a></p>'
        '<details><summary>Exactly what the entity tool returns</summary>'
        f'<pre class="mono">{e(json.dumps(card, ensure_ascii=False, indent=2))}</pre></details></section>'
    )


def entity(app: InspectorApp, slug: str) -> tuple[str, str, str] | None:
    """The card an agent gets, then every fact filed under the name, its backlinks and timeline;
    None when the name has none of these (the server answers 404)."""
    brain, source, now = app.brain(), app.source, now_ms()
    is_error, card_body = app.call("entity", {"name": slug})
    card = card_body["card"] if not is_error and card_body.get("found") else None
    if card is not None:
        slug = card["entity"]["slug"]
    rows = brain.fact_changes(source, 0, entity=slug, limit=500)
    links = brain.backlinks(source, slug, 100)
    entries = brain.timeline_entries(source, slug, 100)
    if card is None and not rows and not links and not entries:
        return None
    page_row = brain.page(source, slug) if card is not None else None
    main: list[str] = []
    if card is not None:
        main.append(_card(app, card, page_row))
    else:
        main.append(
            '<section class="panel note">No page: the facts below are filed under this name, but an agent gets no card for it. '
            f'<a href="/edit/{e(quote(slug, safe="/"))}">Write a page</a> to give it one, or move the facts to an entity that has one.</section>'
        )
    groups: dict[str, list[str]] = {"active": [], "lapsed": [], "forgotten": [], "superseded": []}
    for r in rows:
        groups[fact_state(r, now)].append(fact_row(r, now, change=fact_change(brain, r), filed=False))  # in feed order, so its moment
    main.append('<section aria-labelledby="facts-h"><h2 id="facts-h">Facts</h2>')
    for state, lines in groups.items():
        if lines:
            main.append(f'<h3>{state} ({len(lines)})</h3><ol class="rows">{"".join(lines)}</ol>')
    if not rows:
        main.append('<p class="empty">No facts are filed under this name.</p>')
    main.append("</section>")
    side: list[str] = []
    # The card already lists the links into it that an agent sees: the panel adds the rest (private ones among them).
    on_card = {(x["slug"], x["type"]) for x in card["edges"] if x["direction"] == "in"} if card is not None else set()
    bl = "".join(
        f'<li><a href="{e(entity_href(r["slug"]))}">{e(r["slug"])}</a> <span class="edge-type">{e(r["link_type"])}</span> {private_badge(r["visibility"])}</li>'
        for r in links if (r["slug"], r["link_type"]) not in on_card
    )
    threads = {(t["date"], t["text"]) for t in card["open_threads"]} if card is not None else set()
    text_links = page_links(app, page_row) if page_row is not None else None
    tl = "".join(f'<li><span class="note">{when_text(r["date"])}</span> {markdown.inline(r["summary"], text_links)}</li>'
                 for r in entries if (r["date"], r["summary"]) not in threads)
    if bl:
        side.append(f'<section class="panel" aria-labelledby="bl-h"><h2 id="bl-h">{"More backlinks" if on_card else "Backlinks"}</h2>'
                    f'<ul class="simple">{bl}</ul></section>')
    if tl:
        side.append(f'<section class="panel" aria-labelledby="tl-h"><h2 id="tl-h">{"Earlier timeline" if threads else "Timeline"}</h2>'
                    f'<ul class="simple">{tl}</ul></section>')
    if not bl and not tl:
        # Said from what is there: the card may list every backlink and thread itself.
        said = ("The card lists every page that links here and every timeline entry." if links or entries
                else "No page links here yet, and it has no timeline entries (a page's <code>## Timeline</code> rows).")
        side.append(f'<section class="panel note">{said}</section>')
    if rows:
        side.append(
            '<section class="panel" aria-labelledby="move-h"><h2 id="move-h">Move these facts</h2>'
            '<form method="post" action="/move" class="filters">'
            f'<input type="hidden" name="from" value="{e(slug)}">'
            '<label class="grow">to entity <input name="to" required placeholder="people/alice-example"></label>'
            '<label class="grow">reason <input name="reason" placeholder="filed under the wrong name"></label>'
            '<button type="submit">Move facts</button></form></section>'
        )
    title = (card["entity"]["title"] if card else None) or slug
    vis = page_row["visibility"] if page_row is not None else None
    lede = (f'<span class="slug">{e(slug)}</span> · {e((card["entity"]["type"] if card else None) or "untyped")}'
            + (f" {private_badge(vis)}" if vis else "") + (" · no page" if card is None else ""))
    body = f'<div class="two-col"><div class="stack">{"".join(main)}</div><aside>{"".join(side)}</aside></div>'
    return title, body, lede


def no_entity(slug: str) -> tuple[str, str]:
    tail = slug.rsplit("/", 1)[-1]
    return "Not found", (
        f'<div class="panel"><p class="error" role="alert">Nothing is filed under {e(slug)}: no page, no facts, nothing links to it.</p>'
        f'<p>Look for it among the <a href="{e(href("/entities", q=tail))}">entities</a> or <a href="{e(href("/search", q=tail))}">search</a> '
        f'for it, or <a href="/edit/{e(quote(slug, safe="/"))}">write a page</a> with this slug.</p></div>'
    )


def fact_history(app: InspectorApp, fact_id: int) -> tuple[str, str, str] | None:
    from memverbs.server.brain.fact_edits import trail_events  # noqa: PLC0415 - the history `memverbs history` prints

    brain = app.brain()
    row = brain.fact(fact_id)
    if row is None or row["source_id"] != app.source:
        return None
    now = now_ms()
    trail = brain.fact_trail(fact_id)
    events = trail_events(row, trail, now)
    lines = "".join(f"<li>{when(at)} <strong>{e(what)}</strong> {e(detail)}</li>" for at, what, detail in events)
    now_line = ""
    if row["superseded_by"]:
        now_line = (
            f'<p>now: <a href="/fact/{row["superseded_by"]}">fact #{row["superseded_by"]}</a>. Not restorable: both '
            "active would contradict each other; remember it again if it holds again.</p>"
        )
    body = (f'<ol class="rows">{fact_row(row, now, actions="open")}</ol>'
            f'<h2>Audit trail</h2><div class="panel"><ol class="trail">{lines}</ol>{now_line}</div>')
    return f"Fact #{fact_id}", body, "Its history, as <code>memverbs history</code> prints it."


# -- pages ----------------------------------------------------------------------------------


def page(app: InspectorApp, slug: str) -> tuple[str, str, str] | None:
    row = app.brain().page(app.source, slug)
    if row is None:
        return None
    fm = json.loads(row["frontmatter"])
    fm_rows = "".join(f"<tr><th scope='row'>{e(k)}</th><td>{e(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v)}</td></tr>"
                      for k, v in fm.items())
    vis = row["visibility"]
    other = "world" if vis == "private" else "private"
    body = (
        f'<p class="page-meta"><span class="slug">{e(slug)}</span> · {e(row["type"] or "untyped")} · {e(vis)} {private_badge(vis)} · '
        f'updated {when(row["updated_at"])}</p>'
        '<div class="toolbar">'
        f'<a class="button" href="/edit/{e(quote(slug, safe="/"))}">Edit</a>'
        f'<a class="button" href="{e(entity_href(slug))}">Entity view</a>'
        f'<a class="button" href="/history/{e(quote(slug, safe="/"))}">History</a>'
        '<form class="inline-form" method="post" action="/page-visibility">'
        f'<input type="hidden" name="slug" value="{e(slug)}"><input type="hidden" name="visibility" value="{other}">'
        f'<button type="submit" class="quiet">Make {other}</button></form></div>'
        + (f'<details><summary>frontmatter</summary><div class="table-wrap"><table class="frontmatter">{fm_rows}</table></div></details>' if fm_rows else "")
        + f'<article class="page-body{" is-private" if vis == "private" else ""}">'
        f'{markdown.render(_without_title(_readable_body(app, row), row["title"]), page_links(app, row))}</article>'
    )
    return row["title"] or slug, body, ""


def page_links(app: InspectorApp, row: Row) -> PageLinks:
    """How the links of this page's text resolve (as its stored links do)."""
    return PageLinks(app.brain(), app.source, row["slug"], private_page=row["visibility"] == "private")


def _readable_body(app: InspectorApp, row: Row) -> str:
    """The body as the brain's person may read it: another person's private facts-fence rows left out."""
    from memverbs.server.pages.markdown import without_private_rows  # noqa: PLC0415

    return row["body"] if row["owner"] == app.brain().session_person() else without_private_rows(row["body"])


def _without_title(body: str, title: str | None) -> str:
    """The body without its first line when that is the `# Title` the view's heading already shows."""
    head, _, rest = body.lstrip("\n").partition("\n")
    return rest if title and head.startswith("# ") and head[2:].strip() == title else body


def deleted_page(app: InspectorApp, slug: str) -> tuple[str, str] | None:
    """A page that was written and deleted: said so (the server answers 404); None if it never was."""
    gone = [r for r in app.brain().page_changes(app.source, 0, entity=slug, limit=1) if r["deleted_at"]]
    if not gone:
        return None
    facts = app.brain().fact_changes(app.source, 0, entity=slug, limit=1)
    left = (f'Facts are still filed under the name: <a href="{e(entity_href(slug))}">entity view</a>. ' if facts
            else "No facts are filed under the name. ")
    return "Page deleted", (
        f'<div class="panel"><p class="error" role="alert">The page {e(slug)} was deleted {when(gone[0]["deleted_at"])}.</p>'
        f'<p>{left}<a href="/edit/{e(quote(slug, safe="/"))}">Write it again</a>, or bring back a version from '
        f'<a href="/history/{e(quote(slug, safe="/"))}">its history</a>.</p></div>'
    )


def edit(app: InspectorApp, slug: str, text: str | None = None, error: str | None = None) -> tuple[str, str]:
    source = text if text is not None else (app.page_source(slug) or "")
    problem = f'<p class="error" role="alert">{e(error)}</p>' if error else ""
    body = (
        problem
        + '<form method="post" action="/edit" class="editor">'
        f'<input type="hidden" name="slug" value="{e(slug)}">'
        f'<label for="source">The whole page source (frontmatter included), as <code>memverbs get-page {e(slug)} --raw</code> prints it</label>'
        f'<textarea id="source" name="content" rows="24" spellcheck="false">{e(source)}</textarea>'
        '<button type="submit">Save page</button></form>'
    )
    return f"Edit {slug}", body


# -- pack preview, search, health -------------------------------------------------------------


def pack(app: InspectorApp, q: dict) -> tuple[str, str, str]:
    asked = q.get("harness")
    harness = asked if isinstance(asked, str) and asked in HARNESSES else "claude"
    asked_cwd = q.get("cwd")
    cwd = asked_cwd if isinstance(asked_cwd, str) else ""
    preview = app.pack_preview(harness, cwd)
    opts = "".join(f'<option{" selected" if h == harness else ""}>{h}</option>' for h in HARNESSES)
    known = app.project_roots()
    roots = "".join(f'<option value="{e(root)}">{e(slug)}</option>' for slug, root in known)
    choices = ""
    if known:
        links = [f'<a href="{e(href("/pack", harness=harness))}"{" aria-current=true" if not cwd.strip() else ""}>no project</a>']
        links += [f'<a href="{e(href("/pack", harness=harness, cwd=root))}" title="{e(root)}"'
                  f'{" aria-current=true" if cwd == root else ""}>{e(slug)}</a>' for slug, root in known]
        choices = f'<nav class="choices" aria-label="known projects"><span class="note">projects:</span>{"".join(links)}</nav>'
    body = preview["body"]
    used, budget = int(body.get("budget_used", 0) or 0), int(body.get("budget_tokens", 0) or 0)
    where = f'project {e(preview["project"])}' if preview["project"] else "no project (outside any git repository)"
    share = min(100, round(100 * used / budget)) if budget else 0
    stats = (
        '<div class="stats">'
        f'<div class="stat"><b>{used} / {budget}</b><span>tokens of the budget</span>'
        f'<svg class="meter" aria-hidden="true" viewBox="0 0 100 6" preserveAspectRatio="none"><rect width="100" height="6" class="meter-track"></rect>'
        f'<rect width="{share}" height="6" class="meter-bar"></rect></svg></div>'
        f'<div class="stat"><b>{len(body["cards"])}</b><span>cards</span></div>'
        f'<div class="stat"><b>{len(body["facts"])}</b><span>facts</span></div>'
        f'<div class="stat"><b>{len(preview["text"])}</b><span>characters ({len(preview["output"])} in the hook\'s output)</span></div>'
        "</div>"
    )
    filed, unfiled = _standing(app, preview["entities"])
    standing = ", ".join(f'<a href="{e(entity_href(s))}">{e(s)}</a>' for s in filed) or "none"
    if unfiled:
        standing += f' (asked for too, nothing filed under {"it" if len(unfiled) == 1 else "them"} yet: {e(", ".join(unfiled))})'
    if preview["text"]:
        shown = (f'<pre id="pack-output" class="pack">{e(preview["text"])}</pre>'
                 '<details><summary>Exactly what the session-start hook prints</summary>'
                 f'<pre id="hook-output" class="pack">{e(preview["output"])}</pre></details>')
    else:
        shown = ('<div id="pack-output" class="empty"><p>Nothing: a session started now would begin with no memory, and the '
                 "hook would print nothing.</p>" + EMPTY_BRAIN + "</div>")
    html = (
        f'<form class="filters" method="get" action="/pack"><label>harness <select name="harness">{opts}</select></label>'
        f'<label class="grow">working directory <input name="cwd" value="{e(cwd)}" list="project-roots" '
        'placeholder="a directory inside a repository"></label>'
        f'<datalist id="project-roots">{roots}</datalist>'
        '<button type="submit">Preview</button></form>' + choices
        + f'<p class="note">{where} · standing entities: {standing} · '
        f'budget: {used} of {budget} tokens used, {body.get("dropped_count", 0)} dropped to fit</p>' + stats
        + '<h2>What the model reads</h2>' + shown
    )
    lede = "What a new session started now reads first, for the harness and the working directory you choose."
    return "Pack preview", html, lede


def _standing(app: InspectorApp, slugs: list[str]) -> tuple[list[str], list[str]]:
    """The standing entities the brain knows (a page or facts), and those asked for with nothing filed
    yet (the user's own `people/me` on a new brain)."""
    brain, source = app.brain(), app.source
    known = [s for s in slugs if brain.page(source, s) is not None or brain.fact_changes(source, 0, entity=s, limit=1)]
    return known, [s for s in slugs if s not in known]


_MARKUP = re.compile(r"^\s*(#{1,6}\s+|[-*+]\s+(\[[ xX]\]\s+)?|>\s*)|\*\*|__|`|<!--.*?-->", re.MULTILINE)
_WIKI_TEXT = re.compile(r"!?\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")  # `![[a#h|b]]` reads as b, or a
_MD_TEXT = re.compile(r"!?\[([^\]]*)\]\(([^)\s]+)\)")  # `[label](target)` reads as its label


def _terms(query: str) -> re.Pattern | None:
    words = sorted({w for w in re.findall(r"\w+", query.lower()) if len(w) > 1}, key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE) if words else None


def highlight(text: str, terms: re.Pattern | None) -> str:
    """`text` escaped, the query's words marked."""
    if terms is None:
        return e(text)
    out, pos = [], 0
    for m in terms.finditer(text):
        out += [e(text[pos : m.start()]), f"<mark>{e(m.group(0))}</mark>"]
        pos = m.end()
    return "".join(out) + e(text[pos:])


def snippet(chunk: str, terms: re.Pattern | None, width: int = 240) -> str:
    """The part of a page's matching chunk around the first word of the query, as plain text, marked."""
    text = _WIKI_TEXT.sub(lambda m: m.group(2) or m.group(1), chunk)
    text = _MD_TEXT.sub(lambda m: m.group(1) or m.group(2).rsplit("/", 1)[-1], text)
    text = " ".join(_MARKUP.sub("", text).split())
    first = terms.search(text) if terms is not None else None
    start = max(0, (first.start() if first else 0) - width // 3)
    if start:
        start = text.find(" ", start) + 1 or start
    cut = text[start : start + width]
    return ("… " if start else "") + highlight(cut, terms) + (" …" if start + width < len(text) else "")


# Why recall returned a page (its `evidence`), in words; the wire's label is the badge's title.
EVIDENCE = {"alias_hit": "matches an alias", "exact_title_match": "matches the title", "high_vector_match": "close in meaning",
            "keyword_exact": "has the words", "weak_semantic": "loosely related"}


def search(app: InspectorApp, q: dict) -> tuple[str, str, str]:
    text = (q.get("q") or "").strip()
    form = (
        '<form class="filters" method="get" action="/search" role="search">'
        f'<label class="grow">query <input type="search" name="q" value="{e(text)}" autofocus placeholder="what do you want to recall?"></label>'
        '<button type="submit">Recall</button></form>'
    )
    lede = "<code>recall --query</code>: the pages and facts an agent would get."
    if not text:
        return "Search", form + ('<p class="note">Ask as an agent would: a name (<em>Dana</em>), a topic (<em>billing '
                                 'deploys</em>) or a question (<em>who owns invoicing?</em>).</p>'), lede
    is_error, body = app.call("recall", {"query": text})
    if is_error:
        return "Search", form + f'<p class="error" role="alert">{e(body.get("message"))} {e(body.get("suggestion"))}</p>', lede
    terms = _terms(text)
    facts = "".join(
        f'<li class="hit{" is-private" if f["visibility"] == "private" else ""}">'
        f'<p class="text">{highlight(f["fact"], terms)}</p><p class="meta"><a class="id primary" href="/fact/{e(f["fact_id"])}">#{e(f["fact_id"])}</a>'
        f'<span class="kind">{e(f["kind"])}</span>'
        + (f'<a href="{e(entity_href(f["entity_slug"]))}">{e(f["entity_slug"])}</a>' if f.get("entity_slug") else "")
        + f'<span>{e(f.get("provenance"))}</span>{private_badge(f["visibility"])}</p></li>'
        for f in body.get("facts", [])
    )
    results = "".join(
        f'<li class="hit"><p class="text"><a class="primary" href="{e(markdown.page_href(r["slug"]))}">{e(r.get("title") or r["slug"])}</a> '
        f'<span class="badge badge-evidence" title="evidence: {e(r["evidence"])}">{e(EVIDENCE.get(r["evidence"], r["evidence"]))}</span></p>'
        f'<p class="meta"><span class="slug">{e(r["slug"])}</span></p>'
        + (f'<p class="snippet">{snippet(r["chunk"], terms)}</p>' if r.get("chunk") else "")
        + "</li>"
        for r in body.get("results") or []
    )
    degraded = '<p class="note">Keyword search only: no embedding provider is configured.</p>' if body.get("search_degraded") else ""
    n_pages, n_facts = len(body.get("results") or []), len(body.get("facts", []))
    return "Search", (
        form + degraded
        + f"<h2>Pages <span class=\"note\">({n_pages})</span></h2>"
        + (f'<ol class="rows">{results}</ol>' if results else f'<p class="empty">No page matches. {_search_hint(app)}</p>')
        + f"<h2>Facts <span class=\"note\">({n_facts})</span></h2>"
        + (f'<ol class="rows">{facts}</ol>' if facts else '<p class="empty">No fact matches: try fewer or other words, or '
           '<a href="/entities">browse the entities</a>.</p>')
    ), lede


def _search_hint(app: InspectorApp) -> str:
    """What to try when no page matched: fewer words, or pages at all."""
    if not app.brain().list_pages(app.source, type_=None, prefix=None, limit=1, allow_private=True):
        return "The brain has no pages yet: <code>memverbs put-page SLUG FILE</code> writes one, <code>memverbs sync DIR</code> brings a folder of notes."
    return "Try fewer or other words: without an embedding provider, search matches words, not meaning."


def health(app: InspectorApp) -> tuple[str, str, str]:
    from memverbs.doctor import run_checks  # noqa: PLC0415
    from memverbs.server.usage import read_events  # noqa: PLC0415

    checks = run_checks(app.home)
    rows = "".join(
        f'<tr class="check-{c.status}"><td class="status">{e(c.status)}</td><th scope="row">{e(c.name)}</th><td>{e(c.detail)}'
        + (f'<br><span class="note">fix: {e(c.fix)}</span>' if c.fix else "") + "</td></tr>"
        for c in checks
    )
    events = read_events(app.home.usage_log)
    by_verb: dict[str, dict] = {}
    by_day: dict[str, int] = {}
    latency_by_day: dict[str, list[int]] = {}
    for ev in events:
        v = by_verb.setdefault(ev["verb"], {"calls": 0, "errors": 0, "latency": 0})
        v["calls"] += 1
        v["errors"] += ev.get("ok") is False
        v["latency"] += ev["latency_ms"] if isinstance(ev.get("latency_ms"), (int, float)) else 0
        by_day[ev["ts"][:10]] = by_day.get(ev["ts"][:10], 0) + 1
        if isinstance(ev.get("latency_ms"), (int, float)):
            latency_by_day.setdefault(ev["ts"][:10], []).append(ev["latency_ms"])
    usage = "".join(
        f'<tr><th scope="row">{e(verb)}</th><td class="num">{v["calls"]}</td><td class="num">{v["errors"]}</td>'
        f'<td class="num">{round(v["latency"] / v["calls"])} ms</td></tr>'
        for verb, v in sorted(by_verb.items(), key=lambda kv: -kv[1]["calls"])
    )
    said = {status: sum(1 for c in checks if c.status == status) for status in ("ok", "warn", "fail")}
    body = (
        '<h2>doctor</h2><div class="table-wrap"><table class="stacked"><thead><tr><th scope="col">status</th><th scope="col">check</th>'
        f'<th scope="col">detail</th></tr></thead><tbody>{rows}</tbody></table></div>'
        f'<h2>Usage</h2><p class="note">From {e(app.home.usage_log)}: MCP calls only.</p>'
        + ('<div class="charts">'
           + bar_chart("calls per verb", {k: v["calls"] for k, v in by_verb.items()})
           + bar_chart("average latency per verb (ms)", {k: round(v["latency"] / v["calls"]) for k, v in by_verb.items()})
           + bar_chart("errors per verb", {k: v["errors"] for k, v in by_verb.items()})
           + bar_chart("calls per day (last 30 days with calls)", dict(sorted(by_day.items())[-30:]))
           + bar_chart("average latency per day (ms)", {d: round(sum(x) / len(x)) for d, x in sorted(latency_by_day.items())[-30:]})
           + latency_over_time(events)
           + "</div>"
           + '<h3>Per verb</h3><div class="table-wrap"><table><thead><tr><th scope="col">verb</th><th scope="col" class="num">calls</th>'
           f'<th scope="col" class="num">errors</th><th scope="col" class="num">avg latency</th></tr></thead><tbody>{usage}</tbody></table></div>'
           if events else '<p class="empty">No MCP calls logged yet: they appear once an agent uses the server '
                          '(<code>memverbs install claude</code> wires it), as the verbs’ calls, errors and latency.</p>')
    )
    lede = ", ".join(f"{n} {name}" for name, n in (("passing", said["ok"]), ("warning", said["warn"]), ("failing", said["fail"])) if n)
    return "Health", body, lede


def access(app: InspectorApp) -> tuple[str, str, str]:
    """Who can reach this brain over `serve --http`: OAuth clients (with what they hold now) and static tokens."""
    from memverbs.server.oauth.clients import client_rows  # noqa: PLC0415

    clients = client_rows(app.brain())
    rows = "".join(
        f'<tr class="oauth-client"><th scope="row">{e(c["name"])}</th><td><code>{e(c["client_id"])}</code></td>'
        f'<td>{e(c["scopes"] + " / " + c["surface"]) if c["scopes"] else "none (not approved, or ended)"}</td>'
        f'<td>{e(", ".join(c["redirect_uris"]))}</td><td>{e((c["last_used_at"] or "never")[:16])}</td>'
        f'<td><form method="post" action="/revoke-client"><input type="hidden" name="client_id" value="{e(c["client_id"])}">'
        '<button type="submit" class="danger">revoke</button></form></td></tr>'
        for c in clients
    )
    tokens = "".join(
        f'<tr><th scope="row">{e(t["name"])}</th><td><code>{e(t["token_hint"])}</code></td><td>{e(t["scopes"])} / {e(t["surface"])}</td>'
        f'<td>{when(t["last_used_at"]) if t["last_used_at"] else "never"}</td></tr>'
        for t in app.brain().tokens()
    )
    body = (
        "<h2>OAuth clients</h2><p>Connectors (claude.ai, ChatGPT, …) that registered with <code>memverbs serve --http</code>; "
        "approve new ones with <code>memverbs auth approve</code>.</p>"
        + ('<div class="table-wrap"><table id="oauth-clients"><thead><tr><th scope="col">name</th><th scope="col">client id</th><th scope="col">grant</th>'
           f'<th scope="col">callback</th><th scope="col">last used</th><th scope="col"><span class="sr">revoke</span></th></tr></thead><tbody>{rows}</tbody></table></div>'
           if clients else '<p class="empty">No OAuth clients.</p>')
        + "<h2>Static tokens</h2>"
        + ('<div class="table-wrap"><table><thead><tr><th scope="col">name</th><th scope="col">token</th><th scope="col">grant</th>'
           f'<th scope="col">last used</th></tr></thead><tbody>{tokens}</tbody></table></div>'
           if tokens else '<p class="empty">No access tokens (<code>memverbs auth create NAME</code>).</p>')
    )
    return "Access", body, "Who can reach this brain over <code>memverbs serve --http</code>."
