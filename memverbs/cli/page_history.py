"""`memverbs page-history` and `page-restore`: the texts a page's overwrites replaced, and bringing one back.

Every save over a page's text keeps the text it replaced (server/brain/base.py, `replaced_text`),
with who replaced it and when. These commands read that history as the trusted local caller: a
private page's history is as private as the page, so there is no MCP tool and no `--remote` for it.
A restore is a `put_page` of the kept text, so links, chunks and a synced file's write-back follow,
and the text it replaces is kept in turn: a restore can itself be undone.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from memverbs.cli.options import json_flag
from memverbs.cli.output import fail, print_json
from memverbs.cli.style import day, emit, paint
from memverbs.server.timeparse import iso

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from memverbs.cli.argparser import Parser
    from memverbs.cli.target import LocalTarget
    from memverbs.server.brain.base import Row


def add_parsers(sub: argparse._SubParsersAction[Parser], add: Callable[..., argparse.ArgumentParser]) -> None:
    p = add(sub, "page-history", "a page's earlier versions: what each overwrite replaced, who replaced it and when")
    p.add_argument("slug", metavar="SLUG", help="the page, e.g. notes/plans")
    p.add_argument("--show", type=int, metavar="VERSION", help="print that version's text instead of the list")
    json_flag(p, "the versions (or with --show, the version) as JSON")

    p = add(sub, "page-restore", "put an earlier version of a page back (the text it replaces is kept in the history)")
    p.add_argument("slug", metavar="SLUG", help="the page, e.g. notes/plans")
    p.add_argument("version", type=int, metavar="VERSION", help="the version number, as page-history lists it")
    json_flag(p, "the page write's answer as JSON (as `put-page --json`)")


def run_page_history(args: argparse.Namespace) -> int:
    from memverbs.cli.target import on_local_brain  # noqa: PLC0415

    return on_local_brain(
        args, "reads the local brain only (a private page's history is as private as the page)",
        lambda target: _restore(args, target) if args.command == "page-restore" else _history(args, target),
    )


def _unknown_slug(target: LocalTarget, slug: str) -> int | None:
    """Exit status 1 with the fix when the slug has no page (live or deleted) and no history."""
    if target.brain().page_versions(target.source, slug) or target.brain().page(target.source, slug) is not None:
        return None
    return fail(f'no page "{slug}" and no history for it', "Check the slug with `memverbs list-pages`.")


def _history(args: argparse.Namespace, target: LocalTarget) -> int:
    brain, slug = target.brain(), args.slug.strip()
    if args.show is not None:
        row = brain.page_version(target.source, slug, args.show)
        if row is None:
            return _unknown_slug(target, slug) or fail(
                f'{slug} has no version {args.show}', f"`memverbs page-history {slug}` lists the versions kept."
            )
        if args.json:
            print_json({"slug": slug, **_version(row), "markdown": row["markdown"]})
        else:
            sys.stdout.write(row["markdown"] if row["markdown"].endswith("\n") else row["markdown"] + "\n")
        return 0
    rows = brain.page_versions(target.source, slug)
    if not rows:
        missing = _unknown_slug(target, slug)
        if missing is not None:
            return missing
    current = brain.page(target.source, slug)
    versions = [_version(r, sized=True) for r in rows]
    if args.json:
        print_json({"slug": slug, "current_updated_at": iso(current["updated_at"]) if current else None, "versions": versions})
        return 0
    state = f"current text saved {day(iso(current['updated_at']))}" if current else "deleted"
    print(f"{slug}: {state}; {len(versions)} earlier version(s)")
    table = [
        {"version": v["version"], "saved": day(v["written_at"]), "bytes": v["bytes"], "title": v["title"] or "",
         "replaced": day(v["replaced_at"]), "by": v["replaced_by"], "visibility": v["visibility"]}
        for v in versions
    ]
    emit(table, ("version", "saved", "bytes", "title", "replaced", "by", "visibility"), "table", empty="(no earlier versions)")
    if versions:
        print(paint(f"read one: memverbs page-history {slug} --show N · put it back: memverbs page-restore {slug} N", "dim"))
    return 0


def _version(r: Row, *, sized: bool = False) -> dict:
    out = {"version": r["version"], "title": r["title"], "visibility": r["visibility"], "written_at": iso(r["written_at"]),
           "replaced_at": iso(r["replaced_at"]), "replaced_by": r["replaced_by"]}
    if sized:  # the list has sizes; one version has its text instead
        out["bytes"] = r["bytes"]
    return out


def _restore(args: argparse.Namespace, target: LocalTarget) -> int:
    slug = args.slug.strip()
    row = target.brain().page_version(target.source, slug, args.version)
    if row is None:
        return _unknown_slug(target, slug) or fail(
            f"{slug} has no version {args.version}", f"`memverbs page-history {slug}` lists the versions kept."
        )
    # The same page operation an agent's put_page runs: links, chunks, write-back to a synced file.
    is_error, body = target.call("put_page", {"slug": slug, "content": row["markdown"]})
    if is_error:
        return fail(body.get("message", "the page could not be restored"), body.get("suggestion"))
    if args.json:
        print_json({**body, "restored_version": args.version})
        return 0
    print(f"restored {slug} to version {args.version} (saved {day(iso(row['written_at']))})")
    print(paint(f"the text it replaced is kept: memverbs page-history {slug}", "dim"))
    return 0
