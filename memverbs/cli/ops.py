"""Running an operation from the command line: as the trusted local caller, or against the remote brain.

The CLI calls the same dispatch as MCP (one implementation per verb), on the
'local' lane and the full surface, and never writes to the usage log. `--json`
prints the exact wire body; the human rendering adds what a person needs
around it (dates, private marks, a true total, a fact-only entity's facts)
without ever changing what a tool answers.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, TextIO

from memverbs.cli.output import fail, print_json
from memverbs.cli.projects import ProjectArgError
from memverbs.cli.style import day, emit, paint
from memverbs.cli.target import LocalTarget, Target, TargetError, open_target
from memverbs.cli.words import evidence, wire_error
from memverbs.server.errors import MemverbsError, VerbError
from memverbs.server.pages.markdown import frontmatter_block
from memverbs.server.plural import plural
from memverbs.server.protocol.registry import BY_NAME, Operation

if TYPE_CHECKING:
    import argparse

    from memverbs.server.brain.base import FactFilter
    from memverbs.server.context import VerbContext

# `memverbs delta` with neither --since nor --session-id reads this session's cursor on the
# CLI's own 'local' lane: each run shows what changed since the previous one.
CLI_SESSION = "cli"


class UsageError(MemverbsError, ValueError):
    """Arguments that parse but do not fit together: exit 2, like any usage error."""


def collect_params(op: Operation, args: argparse.Namespace) -> dict:
    params: dict = {}
    for param in op.params:
        value = getattr(args, f"p_{param.name}", None)
        if value is None:
            continue
        params[param.name] = value  # --since / --until arrive as ISO instants (checked while parsing)
    shortcut = getattr(args, "entity_arg", None)
    if shortcut:
        if params.get("entity") not in (None, shortcut):
            raise UsageError(f"recall: NAME ({shortcut}) and --entity ({params['entity']}) disagree: pass one")
        params["entity"] = shortcut
    return params

_RENDERED_HEAD = re.compile(r"^# .*  \((?P<slug>\w[\w/-]*), [^,()]+, (?:world|private)\)$")  # slugs in any script


def run_op(args: argparse.Namespace) -> int:
    op = BY_NAME[args.op]
    try:
        params = collect_params(op, args)
    except UsageError as exc:
        return fail(str(exc), None, code=2)
    if op.name == "put_page":
        try:
            params["content"] = _read_content(args.file)
        except OSError as exc:
            return fail(f"cannot read {args.file}: {exc.strerror}", "Pass the path of a markdown file, or - to read stdin.")
        except UnicodeDecodeError:
            return fail(f"{args.file} is not UTF-8 text", "Save the page as UTF-8 markdown and retry.")
    if op.name == "remember" and _lapsed_ttl(params.get("ttl")):
        return fail(f'--ttl {params["ttl"].strip()} would expire the fact as soon as it is saved',
                    "Pass a time ahead (e.g. --ttl 30d, --ttl 12h or a future date), or drop --ttl for a fact that never "
                    "expires.", code=2)
    if op.name == "forget":
        params["id"] = params["id"].strip().removeprefix("#")  # recall shows ids as #42
    if op.name == "delta" and "since" not in params and "session_id" not in params:
        params["session_id"] = CLI_SESSION
    try:
        target = open_target(args)
    except TargetError as exc:
        return fail(exc.message, exc.fix)
    try:
        return _run(op, params, args, target)
    except (TargetError, ProjectArgError) as exc:
        return fail(exc.message, exc.fix)
    finally:
        target.close()


def _run(op: Operation, params: dict, args: argparse.Namespace, target: Target) -> int:
    if op.name == "get_page" and args.raw:
        return _print_raw(params["slug"].strip(), target)
    if op.name == "put_page" and not target.remote:
        params["content"] = _unrendered(target, params["slug"].strip(), params["content"])
    if op.name == "recall" and args.project:
        if target.remote:
            return fail("--project reads the local brain only",
                        "Drop --project for a remote brain (it records no projects for its MCP clients).", code=2)
        return _recall_window(params, args, target, args.offset)
    if op.name == "recall" and args.offset:
        if target.remote:
            return fail("--offset pages through the local brain only",
                        "Drop --offset (and raise --limit, up to 100) for a remote brain.", code=2)
        return _recall_window(params, args, target, args.offset)
    if op.name == "list_pages" and (args.visibility or args.since):
        params.setdefault("limit", 500)  # filtered on this side: fetch the most the wire allows
    if op.name == "delta":
        args.first_delta = (
            params.get("session_id") == CLI_SESSION and not target.remote
            and target.brain().cursor(target.source, "local", CLI_SESSION) is None
        )
    is_error, body = target.call(op.name, params)
    if args.json:
        print_json(body)
        if op.name == "put_page" and not is_error and not target.remote:
            _offer_fact_move(body["slug"], target, move=args.move_facts, out=sys.stderr)
        # Exit 1 for "not found" as in the human rendering; the body stays the wire's. (recall's
        # empty answer is no error on the wire: scripts read `facts`, and exit 0.)
        return 1 if is_error or (op.name == "entity" and not body.get("found")) else 0
    if is_error and op.name == "get_page" and body.get("error") == "not_found":
        return _page_miss(params["slug"].strip(), target)
    if is_error:
        return fail(*wire_error(body, op))
    shown = _SHOWN.get(op.name)
    if shown is not None:
        return shown(body, params, args, target)
    print(render(op.name, body))
    return 0


# -- what the CLI shows around some answers (the wire body stays as it is) ---------------------


def _shown_entity(body: dict, params: dict, args: argparse.Namespace, target: Target) -> int:
    if not body.get("found"):
        return _entity_miss(args.p_name, body, target)
    print(render("entity", body))
    slug = body["card"]["entity"]["slug"]
    if body["card"]["active_fact_count"]:
        _card_facts(slug, target)
    if not target.remote:
        # Facts filed under a near name (dana for people/dana) are not on this card: say where they are.
        for old, count in target.brain().fact_only_slugs_ending(target.source, slug):
            print(paint(_split_note(old, count, slug), "yellow"))
    return 0


def _shown_recall(body: dict, params: dict, args: argparse.Namespace, target: Target) -> int:
    if params.get("entity") and not body["facts"] and not body.get("results"):
        missing = _no_such_entity(params["entity"], target)
        if missing is not None:
            return missing
    if args.format != "table":
        emit(body["facts"], FACT_COLUMNS, args.format)
        return 0
    print(render("recall", body))
    if not target.remote:
        _recall_footer(params, body, target)
    return 0


def _shown_delta(body: dict, params: dict, args: argparse.Namespace, target: Target) -> int:
    print(render("delta", body))
    if args.first_delta:
        print(paint("first `memverbs delta` here: the CLI's cursor starts now, so the next run shows what changed "
                    "since (for the past, pass --since, e.g. --since 1d)", "dim"))
    elif body.get("has_more"):
        print(paint("more changes are waiting: run `memverbs delta` again", "dim"))
    return 0


def _shown_put_page(body: dict, params: dict, args: argparse.Namespace, target: Target) -> int:
    print(render("put_page", body))
    if not target.remote:
        _offer_fact_move(body["slug"], target, move=args.move_facts, out=sys.stdout)
    return 0


FACT_COLUMNS = ("fact_id", "valid_from", "kind", "fact", "entity_slug", "visibility", "provenance", "expired_at")


def _shown_list_pages(body: dict, params: dict, args: argparse.Namespace, target: Target) -> int:
    """Pages with their visibility (the local brain knows it; the wire does not carry it)."""
    pages = [dict(p) for p in body["pages"]]
    if not target.remote and pages:
        rows = target.brain().pages_by_slugs(target.source, [p["slug"] for p in pages], allow_private=True)
        for p in pages:
            row = rows.get(p["slug"])
            p["visibility"] = row["visibility"] if row is not None else None
    if args.visibility:
        if target.remote:
            return fail("--visibility needs the local brain", "Drop --visibility (a remote brain shows world pages only).", code=2)
        pages = [p for p in pages if p.get("visibility") == args.visibility]
    if args.since:
        cut = args.since  # an ISO instant already (checked while parsing)
        pages = [p for p in pages if (p.get("updated_at") or "") >= cut]
    emit(pages, ("slug", "type", "visibility", "updated_at", "title"), args.format, empty="(no pages)")
    if args.format == "table" and pages:
        print(paint(_pages_shown(len(pages), params, args, target), "dim"))
    return 0


def _pages_shown(shown: int, params: dict, args: argparse.Namespace, target: Target) -> str:
    """`50 of 158 pages`: the wire's total counts what came back; the local brain knows them all."""
    limit = params.get("limit") or 50
    if target.remote:
        more = " (there may be more: --limit up to 500)" if shown >= limit else ""
        return f"{plural(shown, 'page')}{more}"
    from memverbs.server.timeparse import parse_instant  # noqa: PLC0415

    total = target.brain().count_pages(
        target.source, type_=params.get("type"), prefix=params.get("prefix"), allow_private=True,
        visibility=args.visibility, updated_since=parse_instant(args.since) if args.since else None,
    )
    if total <= shown:
        return plural(shown, "page")
    return f"{shown} of {total} pages (more: --limit up to 500, or narrow with --prefix or --type)"


def _shown_search(body: dict, params: dict, args: argparse.Namespace, target: Target) -> int:
    if args.format == "table":
        print(render("search", body))
        if body.get("search_degraded"):
            print(paint("(keyword search only: no embedding provider)", "dim"))
        return 0
    rows = [{"kind": "page", "slug": r["slug"], "fact_id": None, "title": r["title"], "evidence": evidence(r["evidence"]),
             "snippet": r.get("chunk")} for r in body["results"]]
    rows += [{"kind": "fact", "slug": f.get("entity_slug"), "fact_id": f["fact_id"], "title": None, "evidence": None,
              "snippet": f.get("snippet")} for f in body.get("facts") or []]
    emit(rows, ("kind", "slug", "fact_id", "title", "evidence", "snippet"), args.format, empty="(no results)")
    return 0


def _lapsed_ttl(ttl: str | None) -> bool:
    """A ttl of zero, a negative one (-5d) or a past instant: the fact would lapse as it is stored.

    The wire accepts these (the contract's ttl is only a valid_until); a person typing one has made
    a mistake. A ttl that does not parse is left to the verb, which names the forms it takes."""
    if not ttl or not ttl.strip():
        return False
    from memverbs.server.errors import VerbError  # noqa: PLC0415
    from memverbs.server.timeparse import now_ms  # noqa: PLC0415
    from memverbs.server.verbs.ttl import parse_ttl  # noqa: PLC0415

    text = ttl.strip()
    if re.match(r"^-\s*\d", text):
        return True
    now = now_ms()
    try:
        until = parse_ttl(text, now)
    except VerbError:
        return False
    return until is not None and until <= now


def _read_content(path: str) -> str:
    # Bytes in, decoded as UTF-8 and nothing else: line endings stay as written, so
    # `get-page --raw` → edit → `put-page` gives back the same bytes.
    if path == "-":
        if sys.stdin.isatty():
            print("memverbs: reading the page from stdin (end with Ctrl-D)...", file=sys.stderr)
        return sys.stdin.buffer.read().decode("utf-8")
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8")


def _print_raw(slug: str, target: Target) -> int:
    if target.remote:
        return fail("--raw reads the page's source from the local brain",
                    "Drop --raw: a remote brain serves the rendered page only.", code=2)
    try:
        row = target.brain().page(target.source, slug)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    if row is None:
        return _page_miss(slug, target)
    from memverbs.server.sync.render import readable_source  # noqa: PLC0415

    text = readable_source(target.brain(), row)  # another person's private rows sealed, kept by a save of it
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()
    return 0


def _unrendered(target: LocalTarget, slug: str, content: str) -> str:
    """A page written back from `get-page`'s readable output becomes the stored page with the new body.

    That output starts with a heading naming the slug, type and visibility (and an `aka:` line);
    saved as is, it would replace the frontmatter (visibility, type, aliases, links) with nothing.
    Only the body is the reader's to edit there; `get-page --raw` gives the whole source.
    """
    lines = content.split("\n")
    m = _RENDERED_HEAD.match(lines[0].rstrip("\r"))
    if m is None or m.group("slug") != slug:
        return content
    rest = lines[1:]
    if rest and rest[0].startswith("aka: "):
        rest = rest[1:]
    row = target.brain().page(target.source, slug)
    if row is None:
        return content
    from memverbs.server.sync.render import readable_source  # noqa: PLC0415

    source = readable_source(target.brain(), row)
    body = "\n".join(rest).lstrip("\r\n")
    return frontmatter_block(source) + (body if body.endswith("\n") else body + "\n")


# -- what the CLI adds around a verb ------------------------------------------------


def _local_ctx(target: LocalTarget) -> VerbContext:
    from memverbs.server.context import Caller, VerbContext  # noqa: PLC0415

    return VerbContext(brain=target.brain(), caller=Caller.local(target.source), providers=target.runtime.providers)


def _recall_filter(params: dict, target: LocalTarget, limit: int) -> FactFilter:
    from memverbs.server.timeparse import now_ms  # noqa: PLC0415
    from memverbs.server.verbs.recall import facts_filter  # noqa: PLC0415

    return facts_filter(_local_ctx(target), params, now_ms(), limit)


def _recall_footer(params: dict, body: dict, target: LocalTarget) -> None:
    """The true total: how many facts the arm matches, not only how many came back (with a query: how many it found)."""
    from memverbs.server.verbs.recall import recall_limit  # noqa: PLC0415

    if (params.get("query") or "").strip():
        if body["facts"]:
            print(paint(plural(len(body["facts"]), "matching fact"), "dim"))
        return

    f = _recall_filter(params, target, recall_limit(params.get("limit")))
    matched = target.brain().fact_count(target.source, f, params.get("grep"))
    shown = len(body["facts"])
    if matched > shown:
        print(paint(f"{shown} of {matched} facts (next: --offset {shown})", "dim"))
    elif shown:
        print(paint(f"{shown} fact{'s' if shown != 1 else ''}", "dim"))


def _recall_window(params: dict, args: argparse.Namespace, target: LocalTarget, offset: int) -> int:
    """`recall --offset N` / `--project NAME`: the facts arm from N on (of one project's facts), counted in
    full (the wire has neither)."""
    from memverbs.server.verbs.recall import recall_limit  # noqa: PLC0415
    from memverbs.server.verbs.shapes import recall_fact  # noqa: PLC0415

    limit = recall_limit(params.get("limit"))
    try:
        f = _recall_filter(params, target, limit)
    except VerbError as exc:  # the wire's own message, as recall would answer it
        return fail(*wire_error({"message": exc.message, "suggestion": exc.suggestion}, BY_NAME["recall"]))
    brain = target.brain()
    if args.project:
        from memverbs.cli.projects import project_slug  # noqa: PLC0415

        f.project = project_slug(brain, target.source, args.project)
    matched = brain.fact_count(target.source, f, params.get("grep"))
    facts = [recall_fact(r) for r in brain.fact_window(target.source, f, offset, params.get("grep"))]
    nxt = offset + len(facts) if offset + len(facts) < matched else None
    if args.json:
        print_json({"facts": facts, "matched": matched, "offset": offset, "next_offset": nxt})
        return 0
    if args.format != "table":
        emit(facts, FACT_COLUMNS, args.format)
        return 0
    print("\n".join(fact_line(x) for x in facts) or "(no facts here)")
    more = f" (next: --offset {nxt})" if nxt is not None else ""
    print(paint(f"{offset + 1 if facts else offset}–{offset + len(facts)} of {matched} facts{more}", "dim"))
    return 0


def _no_such_entity(name: str, target: Target) -> int | None:
    """`recall --entity NAME` found nothing: exit 1 with the near misses when no entity has that name
    (None when it has a page: an entity without facts is an answer)."""
    is_error, found = target.call("entity", {"name": name})
    if is_error or found.get("found") or _facts_filed(name, target):
        return None
    near = ", ".join(s["slug"] for s in found.get("suggestions", []))
    return fail(f"no entity named {name}" + (f" (near: {near})" if near else ""),
                "`memverbs entities` lists every entity; `remember … --entity NAME` files a fact under a new one.")


def _facts_filed(name: str, target: Target) -> bool:
    """Whether facts, forgotten ones too, are filed under the name (the local brain; a remote brain's
    answer is its active facts only)."""
    if target.remote:
        return False
    from memverbs.server.names import slug_of_name  # noqa: PLC0415

    brain = target.brain()
    return any(brain.fact_changes(target.source, 0, entity=slug, limit=1) for slug in {name.strip(), slug_of_name(name)} if slug)


def _page_miss(name: str, target: Target) -> int:
    """No page with that slug: the page the name means (a title, an alias, a file name, as `entity`
    resolves names), or the near misses."""
    is_error, found = target.call("entity", {"name": name})
    if not is_error and found.get("found"):
        slug = found["card"]["entity"]["slug"]
        return fail(f'no page with slug "{name}"; the page it names is {slug}', f"memverbs get-page {slug}")
    near = [] if is_error else [s["slug"] for s in found.get("suggestions", [])]
    if near:
        return fail(f'no page with slug "{name}" (near: {", ".join(near)})', f"memverbs get-page {near[0]}")
    return fail(f'no page with slug "{name}"', "Check the slug with `memverbs list-pages` or `memverbs search`; put-page creates a page.")


def _entity_miss(name: str, body: dict, target: Target) -> int:
    """No card: show the facts filed under this name anyway (the card needs a page)."""
    is_error, recalled = target.call("recall", {"entity": name, "limit": 20})
    facts = [] if is_error else recalled.get("facts", [])
    if not facts:
        near = ", ".join(s["slug"] for s in body.get("suggestions", []))
        return fail(
            f"no entity named {name}" + (f" (near: {near})" if near else ""),
            "`memverbs entities` lists every entity; `remember … --entity NAME` or `put-page SLUG` creates one.",
        )
    slug = facts[0]["entity_slug"]
    print(paint(f"{slug}", "bold") + paint("  (facts only: no page yet)", "dim"))
    print("\n".join(fact_line(x) for x in facts))
    # The page must take these facts with it: a page under another slug would start a second entity.
    page = _page_slug_hint(slug)
    move = " --move-facts" if page != slug else ""
    print(paint(f"A page gives {slug} a card (summary, aliases, links, timeline): memverbs put-page {page} FILE{move}", "dim"))
    return 0


def _card_facts(slug: str, target: Target, shown: int = 5) -> None:
    """The card counts facts; a person wants to read the newest few."""
    is_error, recalled = target.call("recall", {"entity": slug, "limit": shown})
    if not is_error and recalled["facts"]:
        print(paint("recent facts:", "bold"))
        print("\n".join("  " + fact_line(x) for x in recalled["facts"]))


def _page_slug_hint(slug: str) -> str:
    return slug if "/" in slug else f"people/{slug}"


def _offer_fact_move(slug: str, target: LocalTarget, *, move: bool, out: TextIO) -> None:
    """A new page whose slug ends with a fact-only entity's slug: say so, and move only when asked."""
    brain = target.brain()
    for old, count in brain.fact_only_slugs_ending(target.source, slug):
        if move:
            from memverbs.cli.browse import do_move  # noqa: PLC0415

            do_move(brain, target.source, old, slug, reason=f"page {slug} created", out=out)
            continue
        print(_split_note(old, count, slug), file=sys.stderr)


def _split_note(old: str, count: int, slug: str) -> str:
    """Facts filed under a near name of a page's slug: where they are, and the one command that joins them."""
    noun, they = ("fact is", "it does") if count == 1 else ("facts are", "they do")
    return (f"note: {count} {noun} filed under {old}, which has no page; {they} not show on {slug}'s card.\n"
            f"  join them: memverbs move-facts {old} {slug}")


_SHOWN = {
    "entity": _shown_entity,
    "recall": _shown_recall,
    "delta": _shown_delta,
    "put_page": _shown_put_page,
    "list_pages": _shown_list_pages,
    "search": _shown_search,
}


# -- the human rendering --------------------------------------------------------------


def _snippet_line(chunk: str | None, width: int = 160) -> list[str]:
    """A result's matched text, one dimmed line under it."""
    text = " ".join((chunk or "").split())
    if not text:
        return []
    return [paint("    " + (text if len(text) <= width else text[: width - 1] + "…"), "dim")]


def render(name: str, body: dict) -> str:
    """A readable rendering; `--json` gives the exact wire body."""
    if name == "remember":
        until = f" (expires {day(body['valid_until'])})" if body.get("valid_until") else ""
        entity = f" about {body['entity_slug']}" if body.get("entity_slug") else ""
        return f"{body['status_text']}{entity}{until}"
    if name == "forget":
        return f"fact #{body['id']} expired" if body["expired"] else f"fact #{body['id']} was already expired"
    if name == "recall":
        # A query that matched nothing says so: the recent facts the wire adds as context are not its answer.
        lines = [fact_line(f) for f in body["facts"]] or ["no fact matches" if "facts_note" in body else "(no facts)"]
        for r in body.get("results") or []:
            lines.append(f"page  {r['slug']}  {r['title'] or ''}  ({evidence(r['evidence'])})")
            lines.extend(_snippet_line(r.get("chunk")))
        if body.get("search_degraded"):
            lines.append(paint("(keyword search only: no embedding provider)", "dim"))
        return "\n".join(lines)
    if name == "entity":
        return _card(body["card"])
    if name in ("context_pack", "delta"):
        return body["text"] or "(nothing to report)"
    if name == "synthesize":
        return body["answer"]
    if name == "put_page":
        return (f"{body['status']} {body['slug']} ({body['title']}; {plural(body['links'], 'link')}, "
                f"{plural(body['timeline_entries'], 'timeline entry')})")
    if name == "get_page":
        # _RENDERED_HEAD reads this line back when the output is written back with put-page.
        head = [f"# {body['title']}  ({body['slug']}, {body['type'] or 'untyped'}, {body['visibility']})"]
        if body["aliases"]:
            head.append("aka: " + ", ".join(body["aliases"]))
        return "\n".join(head) + "\n\n" + body["body"].strip()
    if name == "list_pages":
        return "\n".join(
            f"{p['slug']}  {p.get('title') or ''}  {paint(p.get('type') or '', 'cyan')}  {paint(day(p.get('updated_at')), 'dim')}".rstrip()
            for p in body["pages"]
        ) or "(no pages)"
    if name == "search":
        lines = []
        for r in body["results"]:
            lines.append(f"{r['slug']}  {r['title'] or ''}  ({evidence(r['evidence'])})")
            lines.extend(_snippet_line(r.get("chunk")))
        for f in body.get("facts") or []:
            about = f" ({f['entity_slug']})" if f.get("entity_slug") else ""
            lines.append(f"fact #{f['fact_id']}{about}  {f['snippet']}")
        return "\n".join(lines) or "(no results)"
    if name == "delete_page":
        return f"deleted {body.get('slug', '')}".strip() if body.get("deleted", True) else "already deleted"
    if name == "add_link":
        verb = "linked" if body.get("added") else "already linked:"
        return f"{verb} {body['from']} —{body['link_type']}→ {body['to']}"
    if name == "add_alias":
        return f"{body['slug']} now also answers to {body['alias']}" if body.get("added") else f"{body['alias']} was already an alias of {body['slug']}"
    if name == "add_timeline_entry":
        return f"{body['slug']} timeline: {body['date']} {body['summary']} (entry #{body['id']})"
    if name == "whoami":
        return _whoami(body)
    return _plain(body)


def _whoami(body: dict) -> str:
    """Who the CLI is to the brain, in words (`--json` has the wire's fields)."""
    lines = [
        f"source    {body.get('source_id')}",
        f"lane      {body.get('client_id')} (each lane keeps its own delta cursors)",
        f"brain     {'remote' if body.get('remote') else 'local'}",
        f"scopes    {', '.join(body.get('scopes') or []) or 'none'}",
        f"surface   {body.get('surface')}",
        f"person    {body.get('person') or 'not said (an older server)'} (whose private facts and pages it writes and may read)",
    ]
    known = {"source_id", "client_id", "remote", "scopes", "surface", "person", "protocol_version"}
    lines += [f"{k.replace('_', ' ')}: {v}" for k, v in body.items() if k not in known]
    return "\n".join(lines)


def _card(card: dict) -> str:
    ent = card["entity"]
    lines = [paint(ent["title"] or ent["slug"], "bold") + f"  ({ent['slug']}, {ent['type'] or 'untyped'})"]
    touched = (card.get("last_touched") or {}).get("updated_at")
    if touched:
        lines[0] += paint(f"  updated {day(touched)}", "dim")
    if card["summary"]:
        lines.append(card["summary"])
    if card["aka"]:
        lines.append("aka: " + ", ".join(card["aka"]))
    lines += [f"[{t['kind']}] {t['text']} ({t['date']})" for t in card["open_threads"]]
    lines += [f"{e['direction']} {e['type']} {e['slug']}" for e in card["edges"]]
    lines.append(f"{plural(card['active_fact_count'], 'active fact')}, {plural(card['backlink_count'], 'backlink')}")
    return "\n".join(lines)


def _plain(body: dict) -> str:
    """Any other body as `key: value` lines (never raw JSON unless --json)."""
    out = []
    for key, value in body.items():
        if key == "protocol_version":
            continue
        if isinstance(value, (dict, list)):
            import json  # noqa: PLC0415

            value = json.dumps(value, ensure_ascii=False)
        out.append(f"{key.replace('_', ' ')}: {value}")
    return "\n".join(out) or "ok"


def fact_line(f: dict) -> str:
    entity = f"  [{f['entity_slug']}]" if f.get("entity_slug") else ""
    marks = ""
    if f.get("visibility") == "private":
        marks += " " + paint("(private)", "yellow")
    if f.get("expired_at"):
        marks += " " + paint(f"(expired {day(f['expired_at'])})", "red")
    when = day(f.get("valid_from"))[:10]
    return f"{paint('#' + str(f['fact_id']), 'dim')}  {when}  {f['kind']}: {f['fact']}{entity}{marks} — {f['provenance']}"
