"""Seeing everything the local brain holds: entities, projects, stats, backlinks, timelines, a fact's history,
and the audited repairs: where facts are filed (`move-facts`), bringing a forgotten fact back
(`restore-fact`) and one fact's visibility (`fact-visibility`).

These read the brain directly as the trusted local caller (private rows included, and marked);
they are CLI views, not MCP tools, so no wire shape changes with them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from memverbs.cli.output import fail, print_json
from memverbs.cli.style import day, emit, paint
from memverbs.cli.target import LocalTarget, TargetError
from memverbs.server.errors import FactEditRefused
from memverbs.server.plural import plural
from memverbs.server.timeparse import iso, now_ms, parse_instant

if TYPE_CHECKING:
    import argparse

    from memverbs.server.brain.base import Brain, FactFilter


def fmt_of(args: argparse.Namespace) -> str:
    return "json" if getattr(args, "json", False) else (getattr(args, "format", None) or "table")


def run_browse(args: argparse.Namespace) -> int:
    from memverbs.cli.target import on_local_brain  # noqa: PLC0415

    return on_local_brain(args, "reads the brain directly and works on the local brain only",
                          lambda target: _COMMANDS[args.command](args, target))


# -- entities -------------------------------------------------------------------------------


def _entities(args: argparse.Namespace, target: LocalTarget) -> int:
    with_page = True if args.with_page else (False if args.facts_only else None)
    rows = target.brain().entities(target.source, now_ms(), with_page=with_page, type_=args.type, prefix=args.prefix)
    if args.project:
        from memverbs.cli.projects import project_slug  # noqa: PLC0415

        ours = target.brain().project_entities(target.source, project_slug(target.brain(), target.source, args.project))
        rows = [r for r in rows if r["slug"] in ours]
    if args.since:
        cut = parse_instant(args.since)
        assert cut is not None, "--since is an ISO instant already (checked while parsing)"
        rows = [r for r in rows if (r["last_touched"] or 0) >= cut]
    total = len(rows)
    rows = rows[args.offset : args.offset + args.limit]
    out = [
        {
            "slug": r["slug"],
            "title": r["title"],
            "type": r["type"],
            "page": bool(r["has_page"]),
            "visibility": r["visibility"],
            "facts": r["facts"],
            "active": r["active"],
            "private": r["private"],
            "last_touched": iso(r["last_touched"]) if r["last_touched"] else None,
        }
        for r in rows
    ]
    emit(out, ["slug", "type", "page", "active", "facts", "private", "last_touched", "title"], fmt_of(args), empty="(no entities)")
    _more(args, len(out), total)
    return 0


def _projects(args: argparse.Namespace, target: LocalTarget) -> int:
    rows = [
        {
            "slug": r["slug"],
            "name": r["name"],
            "facts": r["facts"],
            "last_fact": iso(r["last_fact"]) if r["last_fact"] else None,
            "root": r["root"],
            "key": r["key"],
        }
        for r in target.brain().projects(target.source, now_ms())
    ]
    emit(rows, ["slug", "facts", "last_fact", "root", "key"], fmt_of(args), empty="(no projects yet: one is recorded when "
         "something is first remembered in a git repository)")
    return 0


def _more(args: argparse.Namespace, shown: int, total: int) -> None:
    if fmt_of(args) == "table" and total > args.offset + shown:
        print(paint(f"{shown} of {total} (next: --offset {args.offset + shown})", "dim"))


# -- stats ----------------------------------------------------------------------------------


def _stats(args: argparse.Namespace, target: LocalTarget) -> int:
    brain = target.brain()
    s = brain.stats(target.source, now_ms())
    size = s["brain_bytes"]
    s["brain"] = brain.describe()
    s["source"] = target.source
    for key in ("last_page_write", "last_fact_write"):
        s[key] = iso(s[key]) if s[key] else None
    if args.json:
        print_json(s)
        return 0
    print(paint(f"{s['brain']}", "bold") + f"  (source {s['source']}, {_bytes(size)})")
    print(f"pages     {s['pages']} live ({s['private_pages']} private), {s['deleted_pages']} deleted")
    print(
        f"facts     {s['facts']}: {s['active_facts']} active, {s['superseded_facts']} superseded, "
        f"{s['expired_facts']} forgotten, {s['lapsed_facts']} past their ttl; {s['private_facts']} private"
    )
    print(f"entities  {s['entities']} (with or without a page)")
    print(f"links     {s['links']}, aliases {s['aliases']}, timeline entries {s['timeline_entries']}")
    print(f"vectors   {s['text_vectors']} text, {s['fact_vectors']} fact ({plural(s['chunks'], 'chunk')})")
    print(f"last write  page {day(s['last_page_write']) or '—'}, fact {day(s['last_fact_write']) or '—'}")
    return 0


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


# -- backlinks and timeline -----------------------------------------------------------------


def _backlinks(args: argparse.Namespace, target: LocalTarget) -> int:
    rows = target.brain().backlinks(target.source, args.slug, args.limit)
    out = [
        {
            "slug": r["slug"],
            "title": r["title"],
            "link_type": r["link_type"],
            "link_source": r["link_source"],
            "visibility": r["visibility"],
            "created_at": iso(r["created_at"]),
        }
        for r in rows
    ]
    emit(out, ["slug", "link_type", "link_source", "visibility", "created_at", "title"], fmt_of(args), empty=f"(nothing links to {args.slug})")
    return 0


def _timeline(args: argparse.Namespace, target: LocalTarget) -> int:
    """A page's timeline entries and the facts about it, newest first, one list."""
    from memverbs.server.brain.base import FactFilter  # noqa: PLC0415

    brain = target.brain()
    events = [
        {"date": r["date"], "what": "timeline", "text": r["summary"], "fact_id": None, "visibility": None}
        for r in brain.timeline_entries(target.source, args.slug, args.limit)
    ]
    f = FactFilter(arm="entity", now=now_ms(), world_only=False, active_only=not args.include_expired,
                   limit=args.limit, entity_slug=args.slug)
    for r in brain.facts(target.source, f):
        events.append(
            {
                "date": iso(r["valid_from"])[:10],
                "what": r["kind"],
                "text": r["fact"],
                "fact_id": str(r["id"]),
                "visibility": r["visibility"],
            }
        )
    if args.since:
        cut = args.since[:10]
        events = [e for e in events if e["date"] >= cut]
    events.sort(key=lambda e: e["date"], reverse=True)
    events = events[: args.limit]
    if fmt_of(args) != "table":
        emit(events, ["date", "what", "text", "fact_id", "visibility"], fmt_of(args))
        return 0
    if not events:
        print(f"(no timeline entries or facts for {args.slug})")
        return 0
    for e in events:
        mark = " " + paint("(private)", "yellow") if e["visibility"] == "private" else ""
        ref = paint(f"  #{e['fact_id']}", "dim") if e["fact_id"] else ""
        print(f"{e['date']}  {paint(e['what'], 'cyan')}: {e['text']}{mark}{ref}")
    return 0


# -- a fact's history -----------------------------------------------------------------------


def _fact_id(raw: str) -> int | None:
    from memverbs.server.brain.fact_edits import parse_fact_ref  # noqa: PLC0415

    return parse_fact_ref(raw)


def _history(args: argparse.Namespace, target: LocalTarget) -> int:
    from memverbs.server.brain.fact_edits import trail_events  # noqa: PLC0415

    brain = target.brain()
    fact_id = _fact_id(args.id)
    if fact_id is None:
        return fail(f'"{args.id}" is not a fact id', "Pass the number from `memverbs recall` (e.g. 42).", code=2)
    row = brain.fact(fact_id)
    if row is None or row["source_id"] != target.source:
        return fail(f"no fact #{fact_id}", "List facts with `memverbs recall` (add --include-expired for old ones).")
    now = now_ms()
    events = [{"at": iso(at), "event": what, "detail": detail} for at, what, detail in trail_events(row, brain.fact_trail(fact_id), now)]
    info = {
        "fact_id": str(fact_id),
        "fact": row["fact"],
        "kind": row["kind"],
        "entity_slug": row["entity_slug"],
        "visibility": row["visibility"],
        "active": row["expired_at"] is None and (row["valid_until"] is None or row["valid_until"] > now),
        "superseded_by": str(row["superseded_by"]) if row["superseded_by"] else None,
        "events": events,
    }
    if args.json:
        print_json(info)
        return 0
    mark = " " + paint("(private)", "yellow") if row["visibility"] == "private" else ""
    state = "active" if info["active"] else paint("inactive", "red")
    print(f"{paint('#' + str(fact_id), 'bold')} {row['kind']}: {row['fact']}  [{row['entity_slug'] or 'no entity'}]{mark}  {state}")
    for e in events:
        print(f"  {day(e['at'])}  {paint(e['event'], 'cyan')}  {e['detail']}")
    if info["superseded_by"]:
        print(f"  now: fact #{info['superseded_by']} (memverbs history {info['superseded_by']})")
    return 0


# -- restore-fact and fact-visibility ---------------------------------------------------------


def _refused(args: argparse.Namespace, exc: FactEditRefused) -> int:
    """A refusal names its code (FACT_EDIT_REFUSALS), the problem and the fix; nothing was written."""
    if getattr(args, "json", False):
        print_json({"refused": exc.code, "message": exc.message, "fix": exc.fix})
        return 1
    return fail(exc.message, exc.fix)  # the code is for scripts (--json), not for a person


def _restore_fact(args: argparse.Namespace, target: LocalTarget) -> int:
    from memverbs.server.brain.fact_edits import local_actor  # noqa: PLC0415

    fact_id = _fact_id(args.id)
    if fact_id is None:
        return fail(f'"{args.id}" is not a fact id', "Pass the number from `memverbs recall --include-expired` (e.g. 42).", code=2)
    reason = args.reason.strip()
    if not reason:
        return fail("say why it holds again: --reason is kept in the fact's history", "e.g. --reason 'forgotten by mistake'", code=2)
    try:
        row = target.brain().restore_fact(target.source, fact_id, reason=reason, actor=local_actor("memverbs restore-fact"),
                                          now=now_ms())
    except FactEditRefused as exc:
        return _refused(args, exc)
    if args.json:
        print_json({"fact_id": str(fact_id), "restored": True, "fact": row["fact"], "entity_slug": row["entity_slug"],
                    "visibility": row["visibility"]})
        return 0
    mark = " " + paint("(private)", "yellow") if row["visibility"] == "private" else ""
    print(f"restored fact #{fact_id}: {row['fact']}  [{row['entity_slug'] or 'no entity'}]{mark}")
    print(paint(f"the expiry it undid is in its history: memverbs history {fact_id}", "dim"))
    return 0


def _fact_visibility(args: argparse.Namespace, target: LocalTarget) -> int:
    from memverbs.server.brain.fact_edits import local_actor  # noqa: PLC0415

    fact_id = _fact_id(args.id)
    if fact_id is None:
        return fail(f'"{args.id}" is not a fact id', "Pass the number from `memverbs recall` (e.g. 42).", code=2)
    reason = (args.reason or "").strip() or "no reason given"
    try:
        changed = target.brain().set_fact_visibility(
            target.source, fact_id, args.visibility, widen=args.widen, reason=reason,
            actor=local_actor("memverbs fact-visibility"), now=now_ms(),
        )
    except FactEditRefused as exc:
        return _refused(args, exc)
    if args.json:
        print_json({"fact_id": str(fact_id), "visibility": args.visibility, "changed": changed})
        return 0
    if not changed:
        print(f"fact #{fact_id} is already {args.visibility}")
    elif args.visibility == "private":
        print(f"fact #{fact_id} is private now: no MCP caller sees it (recall, packs, delta)")
    else:
        print(f"fact #{fact_id} is world now: every MCP caller may see it")
    return 0


# -- move-facts -----------------------------------------------------------------------------


def do_move(brain: Brain, source: str, old: str, new: str, *, reason: str, out: TextIO | None = None) -> list[tuple[int, str]]:
    moved = brain.move_facts(source, old, new, reason, now_ms())
    dups = [str(i) for i, s in moved if s == "duplicate"]
    note = f"; {len(dups)} restated a fact already there and were expired as duplicates (#{', #'.join(dups)})" if dups else ""
    print(f"moved {len(moved)} fact{'s' if len(moved) != 1 else ''} from {old} to {new}{note}", file=out or sys.stdout)
    return moved


def _move_facts(args: argparse.Namespace, target: LocalTarget) -> int:
    from memverbs.server.names import looks_like_slug, slug_of_name  # noqa: PLC0415

    old = args.from_slug.strip()
    new = slug_of_name(args.to_slug) if not looks_like_slug(args.to_slug) else args.to_slug.strip()
    if not new:
        return fail(f'"{args.to_slug}" has no slug in it', "Pass a slug such as people/alice-example.", code=2)
    if old == new:
        return fail("FROM and TO are the same entity", "Pass the slug the facts are filed under, then the one they belong to.", code=2)
    brain = target.brain()
    count = brain.fact_count(target.source, _entity_filter(old))
    if count == 0:
        return fail(
            f"no facts are filed under {old}",
            "`memverbs entities --facts-only` lists the entities that have facts but no page.",
        )
    if args.dry_run:
        body = {"from": old, "to": new, "facts": count, "dry_run": True}
        print_json(body) if args.json else print(f"would move {plural(count, 'fact')} from {old} to {new} (nothing written)")
        return 0
    reason = args.reason or "memverbs move-facts"
    if args.json:
        moved = brain.move_facts(target.source, old, new, reason, now_ms())
        print_json({"from": old, "to": new, "moved": [{"fact_id": str(i), "status": s} for i, s in moved]})
        return 0
    do_move(brain, target.source, old, new, reason=reason)
    print(paint("each move is in the facts' history: memverbs history ID", "dim"))
    return 0


def _entity_filter(slug: str) -> FactFilter:
    from memverbs.server.brain.base import FactFilter  # noqa: PLC0415

    return FactFilter(arm="entity", now=now_ms(), world_only=False, active_only=False, limit=1, entity_slug=slug)


# -- call -----------------------------------------------------------------------------------


def run_call(args: argparse.Namespace) -> int:
    """`memverbs call TOOL JSON`: any tool, raw arguments in, the exact wire body out."""
    from memverbs.cli.target import open_target  # noqa: PLC0415
    from memverbs.server.protocol.registry import BY_NAME  # noqa: PLC0415

    tool = args.tool.replace("-", "_")
    if tool not in BY_NAME:
        return fail(f"no tool named {args.tool}", f"One of: {', '.join(sorted(BY_NAME))}.", code=2)
    text = args.arguments
    if text == "-":
        text = sys.stdin.read()
    from memverbs.server.transport.wire import loads_strict  # noqa: PLC0415

    try:
        params = loads_strict(text or "{}")  # the wire's rules: finite numbers, bounded nesting
    except ValueError as exc:
        return fail(f"the arguments are not JSON a tool takes ({str(exc)[:200]})", 'Pass one JSON object, e.g. \'{"entity": "people/me"}\'.', code=2)
    if not isinstance(params, dict):
        return fail("the arguments must be a JSON object", 'e.g. \'{"entity": "people/me"}\' (or \'{}\').', code=2)
    try:
        target = open_target(args)
    except TargetError as exc:
        return fail(exc.message, exc.fix)
    try:
        is_error, body = target.call(tool, params)
    except TargetError as exc:
        return fail(exc.message, exc.fix)
    finally:
        target.close()
    print_json(body)
    return 1 if is_error else 0


_COMMANDS = {
    "entities": _entities,
    "projects": _projects,
    "stats": _stats,
    "backlinks": _backlinks,
    "timeline": _timeline,
    "history": _history,
    "move-facts": _move_facts,
    "restore-fact": _restore_fact,
    "fact-visibility": _fact_visibility,
}
