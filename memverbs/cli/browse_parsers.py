"""The argument parsers of the browsing and fact-editing commands (entities, projects, stats, backlinks,
timeline, history, move-facts, restore-fact, fact-visibility) and of `call`; cli/browse.py runs them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.cli.options import WHEN_HELP, count, formats, json_flag, remote_flag, when

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from memverbs.cli.argparser import Parser


def add_browse_parsers(sub: argparse._SubParsersAction[Parser], add: Callable[..., argparse.ArgumentParser]) -> None:
    p = add(sub, "entities", "every entity, with or without a page: type, fact counts, last touched")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--with-page", action="store_true", help="only entities that have a page")
    g.add_argument("--facts-only", action="store_true", help="only entities with facts but no page (`move-facts` candidates)")
    p.add_argument("--type", metavar="TYPE", help="only pages of this type (e.g. person)")
    p.add_argument("--prefix", metavar="PREFIX", help="only slugs starting with this (e.g. people/)")
    p.add_argument("--since", type=when, metavar="WHEN", help=f"only entities touched since then: {WHEN_HELP}")
    p.add_argument("--project", metavar="NAME",
                   help="only the project's entity and what facts remembered in it are about (a slug, name or directory)")
    p.add_argument("--limit", type=count, default=100, metavar="N", help="at most this many (default 100)")
    p.add_argument("--offset", type=count, default=0, metavar="N", help="skip the first N")
    formats(p, "entities")
    json_flag(p, "the entities as JSON (same as --format json)")

    p = add(sub, "projects", "the projects (git repositories) memory was remembered in: slug, facts, where, last fact")
    formats(p, "projects")
    json_flag(p, "the projects as JSON (same as --format json)")

    p = add(sub, "stats", "what the brain holds: pages, facts by state, entities, links, vectors, size, last writes")
    json_flag(p, "the numbers as JSON")

    p = add(sub, "backlinks", "the pages that link to a page")
    p.add_argument("slug", metavar="SLUG", help="the page linked to, e.g. companies/acme")
    p.add_argument("--limit", type=count, default=100, metavar="N", help="at most this many (default 100)")
    formats(p, "links")
    json_flag(p, "the links as JSON (same as --format json)")

    p = add(sub, "timeline", "a page's timeline entries and the facts about it, newest first")
    p.add_argument("slug", metavar="SLUG", help="the entity, e.g. people/alice-example")
    p.add_argument("--since", type=when, metavar="WHEN", help=f"only events since then: {WHEN_HELP}")
    p.add_argument("--include-expired", action="store_true", help="also expired and superseded facts")
    p.add_argument("--limit", type=count, default=50, metavar="N", help="at most this many events (default 50)")
    formats(p, "events")
    json_flag(p, "the events as JSON (same as --format json)")

    p = add(sub, "history", "one fact's audit trail: supersessions, moves, expiry (also: audit)", aliases=["audit"])
    p.set_defaults(command="history")
    p.add_argument("id", metavar="ID", help="the fact id, as recall shows it (#42 or 42)")
    json_flag(p, "the fact and its events as JSON")

    p = add(sub, "move-facts", "refile the facts of one entity under another (audited; ids stay)")
    p.add_argument("from_slug", metavar="FROM", help="the entity slug the facts are filed under, e.g. alice-example")
    p.add_argument("to_slug", metavar="TO", help="the slug they belong to, e.g. people/alice-example")
    p.add_argument("--reason", metavar="TEXT", help="why, kept with each move (default: memverbs move-facts)")
    p.add_argument("--dry-run", action="store_true", help="say how many facts would move; write nothing")
    json_flag(p, "what moved as JSON")

    p = add(sub, "restore-fact", "bring a forgotten fact back (audited: who, when, why; the old expiry stays in its history)")
    p.add_argument("id", metavar="ID", help="the fact id, as recall --include-expired shows it (#42 or 42)")
    p.add_argument("--reason", required=True, metavar="TEXT", help="why it holds again, kept in the fact's history")
    json_flag(p, "the restored fact as JSON")

    p = add(sub, "fact-visibility", "make one fact private or world (audited; world needs --widen)")
    p.add_argument("id", metavar="ID", help="the fact id, as recall shows it (#42 or 42)")
    p.add_argument("visibility", choices=("private", "world"), metavar="VISIBILITY",
                   help="private (no MCP caller sees it) or world (every MCP caller may)")
    p.add_argument("--widen", action="store_true",
                   help="required to make a private fact world: every harness and remote token will see it")
    p.add_argument("--reason", metavar="TEXT", help="why, kept in the fact's history")
    json_flag(p, "the change as JSON")

    p = add(sub, "call", "call any MCP tool with raw JSON arguments and print its JSON answer as an agent gets it (debugging)")
    p.add_argument("tool", metavar="TOOL", help="the tool name, e.g. recall or list_pages")
    p.add_argument("arguments", nargs="?", default="{}", metavar="JSON",
                   help="the arguments as one JSON object ('-': read stdin; default {})")
    remote_flag(p)

    p = add(sub, "completion", "print a shell completion script (bash: source it; zsh: eval it in ~/.zshrc)")
    p.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell to complete for")

    p = add(sub, "docs", "print a packaged doc (hooks, remote, configuration, …); alone, list the topics")
    p.add_argument("topic", nargs="?", metavar="TOPIC", help="the doc to print, e.g. hooks (default: list them)")
