"""The inspector's views: each one a function of the request's query, answering HTML.

Every read goes through what the CLI already uses — the local dispatcher (the trusted
caller, lane 'local') for the verbs and page ops, the brain's browse reads for what no tool
answers (every entity, a fact's audit trail, the live feed) — so what the page shows is what
`memverbs recall`, `entity`, `entities` and `history` show.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode

from memverbs.server.errors import MemverbsError
from memverbs.server.timeparse import iso, now_ms, parse_since
from memverbs.ui import markdown
from memverbs.ui.charts import bar_chart, latency_over_time

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memverbs.server.brain.base import Row
    from memverbs.ui.app import InspectorApp

PAGE_SIZE = 50
FEED_LIMIT = 200
HARNESSES = ("claude", "codex", "grok", "opencode", "openclaw", "plain")


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
    if not ms:
        return ""
    text = iso(ms)
    return f'<time datetime="{e(text)}">{e(text[:19].replace("T", " "))}</time>'


def fact_state(row: Row, now: int) -> str:
    if row["superseded_by"] is not None:
        return "superseded"
    if row["expired_at"] is not None:
        return "forgotten"
    if row["valid_until"] is not None and row["valid_until"] <= now:
        return "lapsed"
    return "active"


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


def feed_items(app: InspectorApp, f: dict, after: int) -> list[dict]:
    """Fact and page changes at or after `after` (ms), newest first, each with its HTML row."""
    brain, source, now = app.brain(), app.source, now_ms()
    start = max(after, f["since"] or 0)
    items: list[dict] = []
    for r in brain.fact_changes(source, start, entity=f["entity"], kind=f["kind"], visibility=f["visibility"],
                                provenance=f["source"], until=f["until"], limit=FEED_LIMIT):
        items.append(_keyed(f"fact-{r['id']}", r["changed_at"], fact_row(r, now, feed=True)))
    if not f["kind"] and not f["source"]:  # pages have neither a kind nor an agent source
        for r in brain.page_changes(source, start, entity=f["entity"], visibility=f["visibility"], until=f["until"],
                                    limit=FEED_LIMIT):
            items.append(_keyed(f"page-{r['slug']}", r["changed_at"], page_change_row(r)))
    items.sort(key=lambda i: i["at"], reverse=True)
    return items[:FEED_LIMIT]


def _keyed(key: str, at: int, row: str) -> dict:
    """A feed item: its row carries its key, so a later change to the same fact or page replaces it."""
    return {"key": key, "at": at, "html": row.replace("<li ", f'<li data-key="{e(key)}" ', 1)}


def fact_row(r: Row, now: int, *, feed: bool = False, actions: bool = True) -> str:
    state = fact_state(r, now)
    entity = f' <a class="entity" href="{e(entity_href(r["entity_slug"]))}">{e(r["entity_slug"])}</a>' if r["entity_slug"] else ""
    state_badge = "" if state == "active" else f'<span class="badge badge-{state}">{state}</span>'
    why = r["expiry_reason"] if "expiry_reason" in r.keys() else None  # noqa: SIM118 - `in` on a row tests its values
    reason = f'<span class="reason">reason: {e(why)}</span>' if state != "active" and why else ""
    acts = ""
    if actions and state == "active":
        acts = (
            f'<form class="inline-form" method="post" action="/forget">'
            f'<input type="hidden" name="id" value="{r["id"]}">'
            f'<label>reason <input name="reason" required size="14" aria-label="why forget fact #{r["id"]}"></label>'
            f'<button type="submit">Forget</button></form>'
        )
    elif actions and state == "forgotten":
        acts = (
            f'<form class="inline-form" method="post" action="/restore">'
            f'<input type="hidden" name="id" value="{r["id"]}">'
            f'<label>reason <input name="reason" required size="14" aria-label="why restore fact #{r["id"]}"></label>'
            f'<button type="submit">Restore</button></form>'
        )
    if actions:
        other = "world" if r["visibility"] == "private" else "private"
        acts += (
            f'<form class="inline-form" method="post" action="/fact-visibility">'
            f'<input type="hidden" name="id" value="{r["id"]}"><input type="hidden" name="visibility" value="{other}">'
            f'<button type="submit" class="make-{other}" aria-label="make fact #{r["id"]} {other}">Make {other}</button></form>'
        )
    if acts:
        acts = f'<div class="actions">{acts}</div>'
    lead = '<span class="what">fact</span>' if feed else ""
    return (
        f'<li class="fact state-{state}{" is-private" if r["visibility"] == "private" else ""}" data-fact-id="{r["id"]}">'
        f'{lead}<a class="id" href="/fact/{r["id"]}">#{r["id"]}</a> <span class="kind">{e(r["kind"])}</span> '
        f'<span class="text">{e(r["fact"])}</span>{entity} {private_badge(r["visibility"])} {state_badge} {reason}'
        f'<span class="meta">{when(r["created_at"])} · {e(r["provenance"])} · '
        f'<a class="trail-link" href="/fact/{r["id"]}">history</a></span>{acts}</li>'
    )


def page_change_row(r: Row) -> str:
    what = "page deleted" if r["deleted_at"] else "page"
    return (
        f'<li class="page-change{" is-private" if r["visibility"] == "private" else ""}">'
        f'<span class="what">{what}</span> <a href="{e(markdown.page_href(r["slug"]))}">{e(r["slug"])}</a> '
        f'<span class="text">{e(r["title"])}</span> {private_badge(r["visibility"])}'
        f'<span class="meta">{when(r["changed_at"])}</span></li>'
    )


def timeline(app: InspectorApp, q: dict) -> tuple[str, str]:
    problem = ""
    try:
        f = feed_filters(q)
    except FilterError as exc:
        problem = f'<p class="error" role="alert">{e(exc)}</p>'
        q = {k: v for k, v in q.items() if k not in ("since", "until")}
        f = feed_filters(q)
    items = feed_items(app, f, 0)
    cursor = max((i["at"] for i in items), default=0)
    from memverbs.server.protocol.verb_defs import KINDS  # noqa: PLC0415

    form = (
        '<form class="filters" method="get" action="/timeline">'
        f'<label>entity <input name="entity" value="{e(q.get("entity"))}" placeholder="people/alice"></label>'
        f'<label>kind <select name="kind">{options(("", *KINDS), q.get("kind") or "")}</select></label>'
        f'<label>visibility <select name="visibility">{options(("", "world", "private"), q.get("visibility") or "")}</select></label>'
        f'<label>source <input name="source" value="{e(q.get("source"))}" placeholder="claude"></label>'
        f'<label>since <input name="since" value="{e(q.get("since"))}" placeholder="7d"></label>'
        f'<label>until <input name="until" value="{e(q.get("until"))}" placeholder="2026-08-11"></label>'
        '<button type="submit">Filter</button></form>'
    )
    feed_url = href("/api/feed", **{k: q.get(k) for k in ("entity", "kind", "visibility", "source", "since", "until")})
    body = (
        form
        + problem
        + '<p class="live" role="status" aria-live="polite" id="live-status">live: new facts and page changes appear at the top</p>'
        + f'<ol id="feed" class="rows" data-feed="{e(feed_url)}" data-cursor="{cursor}">'
        + "".join(i["html"] for i in items)
        + "</ol>"
        + ("" if items else '<p class="empty" id="feed-empty">Nothing yet: facts appear here as agents remember them.</p>')
    )
    return "Timeline", body


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
    return {"cursor": cursor, "items": items}


# -- entities -------------------------------------------------------------------------------


def entities(app: InspectorApp, q: dict) -> tuple[str, str]:
    text = (q.get("q") or "").strip().lower()
    try:
        offset = max(0, int(q.get("offset") or 0))
    except ValueError:
        offset = 0
    total, window = app.brain().entity_window(app.source, now_ms(), search=text, offset=offset, limit=PAGE_SIZE)
    form = (
        '<form class="filters" method="get" action="/entities" role="search">'
        f'<label>find <input name="q" value="{e(q.get("q"))}" placeholder="slug or title" autofocus></label>'
        '<button type="submit">Search</button></form>'
    )
    lines = "".join(
        f'<tr><td><a href="{e(entity_href(r["slug"]))}">{e(r["slug"])}</a></td><td>{e(r["title"])}</td>'
        f'<td>{e(r["type"])}</td><td>{"page" if r["has_page"] else "facts only"} {private_badge(r["visibility"])}</td>'
        f'<td>{r["active"]} / {r["facts"]}</td><td>{r["private"] or ""}</td><td>{when(r["last_touched"])}</td></tr>'
        for r in window
    )
    nav = []
    if offset > 0:
        nav.append(f'<a rel="prev" href="{e(href("/entities", q=q.get("q"), offset=max(0, offset - PAGE_SIZE)))}">← previous</a>')
    if offset + PAGE_SIZE < total:
        nav.append(f'<a rel="next" href="{e(href("/entities", q=q.get("q"), offset=offset + PAGE_SIZE))}">next →</a>')
    shown = f"{offset + 1 if window else 0}–{offset + len(window)} of {total}"
    body = (
        form
        + f'<p class="count">{shown} entities</p>'
        + '<table><thead><tr><th scope="col">slug</th><th scope="col">title</th><th scope="col">type</th>'
        '<th scope="col">page</th><th scope="col">active / facts</th><th scope="col">private facts</th>'
        '<th scope="col">last touched</th></tr></thead><tbody>'
        + lines
        + "</tbody></table>"
        + f'<nav class="pager" aria-label="entity pages">{" ".join(nav)}</nav>'
    )
    return "Entities", body


def entity(app: InspectorApp, slug: str) -> tuple[str, str]:
    brain, source, now = app.brain(), app.source, now_ms()
    is_error, card_body = app.call("entity", {"name": slug})
    parts: list[str] = []
    if not is_error and card_body.get("found"):
        card = card_body["card"]
        slug = card["entity"]["slug"]
        parts.append('<section aria-labelledby="card-h"><h2 id="card-h">Card (as an agent sees it)</h2>')
        parts.append(f'<pre class="card">{e(app.render_card(card))}</pre>')
        edges = "".join(
            f'<li>{e(x["direction"])} {e(x["type"])} <a href="{e(entity_href(x["slug"]))}">{e(x["slug"])}</a></li>'
            for x in card["edges"]
        )
        parts.append(f'<h3>Edges</h3><ul>{edges or "<li>none</li>"}</ul>')
        parts.append(f'<p><a href="{e(markdown.page_href(slug))}">read the page</a></p></section>')
    else:
        parts.append('<p class="note">No page: the facts below are filed under this name, but an agent gets no card for it.</p>')
    rows = brain.fact_changes(source, 0, entity=slug, limit=500)
    groups: dict[str, list[str]] = {"active": [], "lapsed": [], "forgotten": [], "superseded": []}
    for r in rows:
        groups[fact_state(r, now)].append(fact_row(r, now))
    parts.append('<section aria-labelledby="facts-h"><h2 id="facts-h">Facts</h2>')
    for state, lines in groups.items():
        parts.append(f'<h3>{state} ({len(lines)})</h3><ol class="rows">{"".join(lines) or "<li>none</li>"}</ol>')
    parts.append("</section>")
    if rows:
        parts.append(
            '<section aria-labelledby="move-h"><h2 id="move-h">Move these facts</h2>'
            '<form method="post" action="/move">'
            f'<input type="hidden" name="from" value="{e(slug)}">'
            '<label>to entity <input name="to" required placeholder="people/alice-example"></label> '
            '<label>reason <input name="reason" placeholder="filed under the wrong name"></label> '
            '<button type="submit">Move facts</button></form></section>'
        )
    links = brain.backlinks(source, slug, 100)
    bl = "".join(
        f'<li><a href="{e(entity_href(r["slug"]))}">{e(r["slug"])}</a> {e(r["link_type"])} {private_badge(r["visibility"])}</li>'
        for r in links
    )
    parts.append(f'<section aria-labelledby="bl-h"><h2 id="bl-h">Backlinks</h2><ul>{bl or "<li>none</li>"}</ul></section>')
    tl = "".join(f'<li>{e(r["date"])} {e(r["summary"])}</li>' for r in brain.timeline_entries(source, slug, 100))
    parts.append(f'<section aria-labelledby="tl-h"><h2 id="tl-h">Timeline</h2><ul>{tl or "<li>none</li>"}</ul></section>')
    return slug, "".join(parts)


def fact_history(app: InspectorApp, fact_id: int) -> tuple[str, str] | None:
    from memverbs.cli.browse import trail_events  # noqa: PLC0415 - the history `memverbs history` prints

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
    body = f'<ol class="rows">{fact_row(row, now)}</ol><h2>Audit trail</h2><ol class="trail">{lines}</ol>{now_line}'

    return f"Fact #{fact_id}", body


# -- pages ----------------------------------------------------------------------------------


def page(app: InspectorApp, slug: str) -> tuple[str, str] | None:
    row = app.brain().page(app.source, slug)
    if row is None:
        return None
    fm = json.loads(row["frontmatter"])
    fm_rows = "".join(f"<tr><th scope='row'>{e(k)}</th><td>{e(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v)}</td></tr>"
                      for k, v in fm.items())
    vis = row["visibility"]
    other = "world" if vis == "private" else "private"
    body = (
        f'<p class="page-meta">{e(slug)} · {e(row["type"] or "untyped")} · {e(vis)} {private_badge(vis)} · updated {when(row["updated_at"])}'
        f' · <a href="{e(entity_href(slug))}">entity view</a> · <a href="/edit/{e(quote(slug, safe="/"))}">edit</a></p>'
        '<form class="inline-form" method="post" action="/page-visibility">'
        f'<input type="hidden" name="slug" value="{e(slug)}"><input type="hidden" name="visibility" value="{other}">'
        f'<button type="submit">Make {other}</button></form>'
        f'<details><summary>frontmatter</summary><table class="frontmatter">{fm_rows}</table></details>'
        f'<article class="page-body{" is-private" if vis == "private" else ""}">{markdown.render(row["body"])}</article>'
    )
    return row["title"] or slug, body


def page_source(app: InspectorApp, slug: str) -> str | None:
    from memverbs.server.pages.markdown import stored_markdown  # noqa: PLC0415

    row = app.brain().page(app.source, slug)
    if row is None:
        return None
    return stored_markdown(json.loads(row["frontmatter"]), row["body"], row["markdown"])


def edit(app: InspectorApp, slug: str, text: str | None = None, error: str | None = None) -> tuple[str, str]:
    source = text if text is not None else (page_source(app, slug) or "")
    problem = f'<p class="error" role="alert">{e(error)}</p>' if error else ""
    body = (
        problem
        + '<form method="post" action="/edit" class="editor">'
        f'<input type="hidden" name="slug" value="{e(slug)}">'
        f'<label for="source">The whole page source (frontmatter included), as `memverbs get-page {e(slug)} --raw` prints it</label>'
        f'<textarea id="source" name="content" rows="24" spellcheck="false">{e(source)}</textarea>'
        '<button type="submit">Save page</button></form>'
    )
    return f"Edit {slug}", body


# -- pack preview, search, health -------------------------------------------------------------


def pack(app: InspectorApp, q: dict) -> tuple[str, str]:
    asked = q.get("harness")
    harness = asked if isinstance(asked, str) and asked in HARNESSES else "claude"
    asked_cwd = q.get("cwd")
    cwd = asked_cwd if isinstance(asked_cwd, str) else ""
    preview = app.pack_preview(harness, cwd)
    opts = "".join(f'<option{" selected" if h == harness else ""}>{h}</option>' for h in HARNESSES)
    roots = "".join(f'<option value="{e(root)}">{e(slug)}</option>' for slug, root in app.project_roots())
    body = preview["body"]
    where = f'project {e(preview["project"])}' if preview["project"] else "no project (outside any git repository)"
    stats = (
        f'<p>{where} · standing entities: {e(", ".join(preview["entities"]) or "none")}</p>'
        f'<p>budget: {body.get("budget_used", 0)} of {body.get("budget_tokens", 0)} tokens used, '
        f'{body.get("dropped_count", 0)} dropped · {len(body["cards"])} cards, {len(body["facts"])} facts · '
        f'{len(preview["text"])} characters of text, {len(preview["output"])} in the hook\'s output</p>'
    )
    html = (
        f'<form class="filters" method="get" action="/pack"><label>harness <select name="harness">{opts}</select></label>'
        f'<label>working directory <input name="cwd" value="{e(cwd)}" list="project-roots" size="40" '
        'placeholder="a directory inside a repository"></label>'
        f'<datalist id="project-roots">{roots}</datalist>'
        '<button type="submit">Preview</button></form>' + stats
        + '<h2>What the model reads</h2>'
        + f'<pre id="pack-output" class="pack">{e(preview["text"])}</pre>'
        + '<details><summary>Exactly what the session-start hook prints</summary>'
        + f'<pre id="hook-output" class="pack">{e(preview["output"])}</pre></details>'
    )
    return "Pack preview", html


def search(app: InspectorApp, q: dict) -> tuple[str, str]:
    text = (q.get("q") or "").strip()
    form = (
        '<form class="filters" method="get" action="/search" role="search">'
        f'<label>query <input name="q" value="{e(text)}" autofocus></label><button type="submit">Recall</button></form>'
    )
    if not text:
        return "Search", form
    is_error, body = app.call("recall", {"query": text})
    if is_error:
        return "Search", form + f'<p class="error" role="alert">{e(body.get("message"))} {e(body.get("suggestion"))}</p>'
    facts = "".join(
        f'<li class="fact{" is-private" if f["visibility"] == "private" else ""}"><a href="/fact/{e(f["fact_id"])}">#{e(f["fact_id"])}</a> '
        f'{e(f["kind"])}: {e(f["fact"])} {private_badge(f["visibility"])}'
        + (f' <a href="{e(entity_href(f["entity_slug"]))}">{e(f["entity_slug"])}</a>' if f.get("entity_slug") else "")
        + "</li>"
        for f in body.get("facts", [])
    )
    results = "".join(
        f'<li><a href="{e(markdown.page_href(r["slug"]))}">{e(r["slug"])}</a> {e(r.get("title"))} '
        f'<span class="badge badge-evidence">{e(r["evidence"])}</span></li>'
        for r in body.get("results") or []
    )
    degraded = '<p class="note">keyword search only: no embedding provider is configured.</p>' if body.get("search_degraded") else ""
    return "Search", (
        form + degraded + f"<h2>Pages</h2><ul>{results or '<li>none</li>'}</ul>" + f"<h2>Facts</h2><ol class='rows'>{facts or '<li>none</li>'}</ol>"
    )


def health(app: InspectorApp) -> tuple[str, str]:
    from memverbs.cli.doctor import run_checks  # noqa: PLC0415
    from memverbs.server.usage import read_events  # noqa: PLC0415

    checks = run_checks(app.home)
    rows = "".join(
        f'<tr class="check-{c.status}"><td>{e(c.status)}</td><th scope="row">{e(c.name)}</th><td>{e(c.detail)}</td><td>{e(c.fix)}</td></tr>'
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
        f'<tr><th scope="row">{e(verb)}</th><td>{v["calls"]}</td><td>{v["errors"]}</td><td>{round(v["latency"] / v["calls"])} ms</td></tr>'
        for verb, v in sorted(by_verb.items(), key=lambda kv: -kv[1]["calls"])
    )
    body = (
        f'<h2>doctor</h2><table><thead><tr><th scope="col">status</th><th scope="col">check</th><th scope="col">detail</th><th scope="col">fix</th></tr></thead><tbody>{rows}</tbody></table>'
        f'<h2>Usage (from {e(app.home.usage_log)}, MCP calls only)</h2>'
        + (bar_chart("calls per verb", {k: v["calls"] for k, v in by_verb.items()})
           + bar_chart("average latency per verb (ms)", {k: round(v["latency"] / v["calls"]) for k, v in by_verb.items()})
           + bar_chart("errors per verb", {k: v["errors"] for k, v in by_verb.items()})
           + bar_chart("calls per day (last 30 days with calls)", dict(sorted(by_day.items())[-30:]))
           + bar_chart("average latency per day (ms)", {d: round(sum(x) / len(x)) for d, x in sorted(latency_by_day.items())[-30:]})
           + latency_over_time(events)
           + f'<table><thead><tr><th scope="col">verb</th><th scope="col">calls</th><th scope="col">errors</th><th scope="col">avg latency</th></tr></thead><tbody>{usage}</tbody></table>'
           if events else '<p class="empty">No MCP calls logged yet.</p>')
    )
    return "Health", body


def access(app: InspectorApp) -> tuple[str, str]:
    """Who can reach this brain over `serve --http`: OAuth clients (with what they hold now) and static tokens."""
    from memverbs.cli.oauth import client_rows  # noqa: PLC0415

    clients = client_rows(app.brain())
    rows = "".join(
        f'<tr class="oauth-client"><th scope="row">{e(c["name"])}</th><td><code>{e(c["client_id"])}</code></td>'
        f'<td>{e(c["scopes"] + " / " + c["surface"]) if c["scopes"] else "none (not approved, or ended)"}</td>'
        f'<td>{e(", ".join(c["redirect_uris"]))}</td><td>{e((c["last_used_at"] or "never")[:16])}</td>'
        f'<td><form method="post" action="/revoke-client"><input type="hidden" name="client_id" value="{e(c["client_id"])}">'
        '<button type="submit">revoke</button></form></td></tr>'
        for c in clients
    )
    tokens = "".join(
        f'<tr><th scope="row">{e(t["name"])}</th><td>{e(t["token_hint"])}</td><td>{e(t["scopes"])} / {e(t["surface"])}</td>'
        f'<td>{e(when(t["last_used_at"]) if t["last_used_at"] else "never")}</td></tr>'
        for t in app.brain().tokens()
    )
    body = (
        "<h2>OAuth clients</h2><p>Connectors (claude.ai, ChatGPT, …) that registered with <code>memverbs serve --http</code>; "
        "approve new ones with <code>memverbs auth approve</code>.</p>"
        + ('<table id="oauth-clients"><thead><tr><th scope="col">name</th><th scope="col">client id</th><th scope="col">grant</th>'
           f'<th scope="col">callback</th><th scope="col">last used</th><th scope="col"></th></tr></thead><tbody>{rows}</tbody></table>'
           if clients else '<p class="empty">No OAuth clients.</p>')
        + "<h2>Static tokens</h2>"
        + ('<table><thead><tr><th scope="col">name</th><th scope="col">token</th><th scope="col">grant</th>'
           f'<th scope="col">last used</th></tr></thead><tbody>{tokens}</tbody></table>'
           if tokens else '<p class="empty">No access tokens (<code>memverbs auth create NAME</code>).</p>')
    )
    return "Access", body
