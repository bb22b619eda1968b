"""Running an operation from the command line, as the trusted local caller.

The CLI calls the same dispatch as MCP (one implementation per verb), on the
'local' lane and the full surface, and never writes to the usage log.
"""

from __future__ import annotations

import json
import re
import sys

from memverbs.cli.output import fail, print_json
from memverbs.server.errors import MemverbsError
from memverbs.server.pages.markdown import frontmatter_block, stored_markdown
from memverbs.server.protocol.registry import BY_NAME
from memverbs.server.runtime import Runtime

_RENDERED_HEAD = re.compile(r"^# .*  \((?P<slug>[a-z0-9][a-z0-9_/-]*), [^,()]+, (?:world|private)\)$")


def run_op(args) -> int:
    op = BY_NAME[args.op]
    params: dict = {}
    for param in op.params:
        value = getattr(args, f"p_{param.name}", None)
        if value is not None:
            params[param.name] = value
    if op.name == "get_page" and getattr(args, "raw", False):
        return _print_raw(params["slug"].strip())
    if op.name == "put_page":
        try:
            params["content"] = _read_content(args.file)
        except OSError as exc:
            return fail(f"cannot read {args.file}: {exc.strerror}", "Pass the path of a markdown file, or - to read stdin.")
        except UnicodeDecodeError:
            return fail(f"{args.file} is not UTF-8 text", "Save the page as UTF-8 markdown and retry.")
    runtime = Runtime()
    try:
        if op.name == "put_page":
            params["content"] = _unrendered(runtime, params["slug"].strip(), params["content"])
        outcome = runtime.local_dispatcher().call(op.name, params)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    finally:
        runtime.close()
    if args.json:
        print_json(outcome.body)
        return 1 if outcome.is_error else 0
    if outcome.is_error:
        return fail(outcome.body.get("message", "failed"), outcome.body.get("suggestion"))
    print(render(op.name, outcome.body))
    return 0


def _read_content(path: str) -> str:
    # Bytes in, decoded as UTF-8 and nothing else: line endings stay as written, so
    # `get-page --raw` → edit → `put-page` gives back the same bytes.
    if path == "-":
        if sys.stdin.isatty():
            print("memverbs: reading the page from stdin (end with Ctrl-D)...", file=sys.stderr)
        return sys.stdin.buffer.read().decode("utf-8")
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8")


def _print_raw(slug: str) -> int:
    runtime = Runtime()
    try:
        row = runtime.brain().page(runtime.source, slug)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    finally:
        runtime.close()
    if row is None:
        return fail(f'no page with slug "{slug}"', "Check the slug with `memverbs list-pages`.")
    text = stored_markdown(json.loads(row["frontmatter"]), row["body"], row["markdown"])
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()
    return 0


def _unrendered(runtime: Runtime, slug: str, content: str) -> str:
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
    row = runtime.brain().page(runtime.source, slug)
    if row is None:
        return content
    source = stored_markdown(json.loads(row["frontmatter"]), row["body"], row["markdown"])
    body = "\n".join(rest).lstrip("\r\n")
    return frontmatter_block(source) + (body if body.endswith("\n") else body + "\n")


def render(name: str, body: dict) -> str:
    """A readable rendering; `--json` gives the exact wire body."""
    if name == "remember":
        until = f" (expires {body['valid_until']})" if body.get("valid_until") else ""
        entity = f" about {body['entity_slug']}" if body.get("entity_slug") else ""
        return f"{body['status_text']}{entity}{until}"
    if name == "forget":
        return f"fact #{body['id']} expired" if body["expired"] else f"fact #{body['id']} was already expired"
    if name == "recall":
        lines = [_fact_line(f) for f in body["facts"]] or ["(no facts)"]
        for r in body.get("results", []):
            lines.append(f"page  {r['slug']}  {r['title'] or ''}  [{r['evidence']}]")
        return "\n".join(lines)
    if name == "entity":
        if not body["found"]:
            near = ", ".join(s["slug"] for s in body.get("suggestions", [])) or "none"
            return f"not found (near: {near})"
        card = body["card"]
        lines = [f"{card['entity']['title']}  ({card['entity']['slug']}, {card['entity']['type'] or 'untyped'})"]
        if card["summary"]:
            lines.append(card["summary"])
        if card["aka"]:
            lines.append("aka: " + ", ".join(card["aka"]))
        lines += [f"[{t['kind']}] {t['text']} ({t['date']})" for t in card["open_threads"]]
        lines += [f"{e['direction']} {e['type']} {e['slug']}" for e in card["edges"]]
        lines.append(f"{card['active_fact_count']} active facts, {card['backlink_count']} backlinks")
        return "\n".join(lines)
    if name in ("context_pack", "delta"):
        return body["text"] or "(nothing to report)"
    if name == "synthesize":
        return body["answer"]
    if name == "put_page":
        return f"{body['status']} {body['slug']} ({body['title']}; {body['links']} links, {body['timeline_entries']} timeline entries)"
    if name == "get_page":
        # _RENDERED_HEAD reads this line back when the output is written back with put-page.
        head = [f"# {body['title']}  ({body['slug']}, {body['type'] or 'untyped'}, {body['visibility']})"]
        if body["aliases"]:
            head.append("aka: " + ", ".join(body["aliases"]))
        return "\n".join(head) + "\n\n" + body["body"].strip()
    if name == "list_pages":
        return "\n".join(f"{p['slug']}  {p['title'] or ''}" for p in body["pages"]) or "(no pages)"
    return json.dumps(body, indent=2, ensure_ascii=False)


def _fact_line(f: dict) -> str:
    entity = f" [{f['entity_slug']}]" if f.get("entity_slug") else ""
    gone = " (expired)" if f.get("expired_at") else ""
    return f"#{f['fact_id']} {f['kind']}: {f['fact']}{entity} — {f['provenance']}{gone}"
