"""The subcommands generated from the protocol registry: one per operation, its options from the
operation's params (the first required param is positional), so the CLI cannot drift from the tools
the server lists."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.cli.options import WHEN_HELP, count, formats, json_flag, number, remote_flag, when

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from memverbs.cli.argparser import Parser


# One line per operation for the CLI's help: the registry's descriptions are written for agents
# (and synthesize's carries the MCP-only "[EXPENSIVE …]" warning).
OP_HELP = {
    "remember": "save one fact, with where it came from",
    "recall": "list facts (by entity, session or recency) and, with --query, matching pages",
    "entity": "one entity's card; a name with facts but no page shows its facts",
    "synthesize": "answer a question from the brain with an LLM (slow, costs money; needs llm.model)",
    "forget": "expire a fact; it stays in the audit trail (see `history`)",
    "context_pack": "the bundle an agent gets at session start: cards, open threads, hot facts",
    "delta": "what changed since a time, a session's cursor, or (no arguments) the CLI's last delta",
    "search": "search pages by keyword (and meaning, with an embedding provider)",
    "get_page": "print one page",
    "list_pages": "list pages with type, visibility and last update, newest first",
    "put_page": "write a markdown page from a file or stdin",
    "add_timeline_entry": "add a dated event to a page's timeline",
    "whoami": "who the CLI is to the brain: source, cursor lane, scopes, surface",
    "delete_page": "soft-delete a page (put-page revives it)",
    "add_link": "add a typed link between two pages",
    "add_alias": "add another name for a page",
}

# Param help in the CLI's words, where the registry's (written for agents) uses the wire's:
# (operation, param) or param alone.
PARAM_HELP = {
    ("recall", "limit"): "at most this many facts, and as many pages with --query (default 50, max 100)",
    ("recall", "include_pending"): "also say how many facts wait to be consolidated (memverbs keeps no queue: always 0)",
    ("forget", "id"): "the fact id, as recall shows it (#42 or 42)",
    ("delta", "since_slug"): "with --since: resume after this slug (the last one a previous delta showed)",
    ("delta", "session_id"): "a name for the reader: each run shows what changed since that name's previous delta",
    "include_private": "also private facts and pages (the local brain only; never over MCP)",
}

# Metavars a person reads in help: what to type, never the internal dest (P_ENTITY).
METAVARS = {
    "entity": "NAME",
    "entities": "NAMES",
    "query": "TEXT",
    "grep": "TEXT",
    "budget_tokens": "N",
    "limit": "N",
    "since": "WHEN",
    "until": "WHEN",
    "session_id": "ID",
    "since_slug": "SLUG",
    "provenance": "SOURCE",
    "ttl": "DURATION",
    "reason": "TEXT",
    "detail": "TEXT",
    "summary": "TEXT",
    "context": "TEXT",
    "type": "TYPE",
    "prefix": "PREFIX",
    "alias": "ALIAS",
    "date": "DATE",
    "to": "SLUG",
    "link_type": "TYPE",
    "link_source": "SOURCE",
    "from": "FROM",
    "slug": "SLUG",
    "name": "NAME",
    "id": "ID",
}

def add_tool_parsers(sub: argparse._SubParsersAction[Parser], add: Callable[..., argparse.ArgumentParser]) -> None:
    from memverbs.server.protocol.registry import OPERATIONS  # noqa: PLC0415 - registry is plain data

    for op in OPERATIONS:
        cli_name = op.name.replace("_", "-")
        p = add(sub, cli_name, OP_HELP.get(op.name) or _first_sentence(op.description))
        p.set_defaults(command="op", op=op.name)
        positional_done = False
        for param in op.params:
            dest = f"p_{param.name}"
            flag = "--" + param.name.replace("_", "-")
            text = PARAM_HELP.get((op.name, param.name)) or PARAM_HELP.get(param.name) or _sentence_case(param.description)
            if param.name in ("since", "until"):
                text = f"{text.split('(')[0].rstrip(' .')}: {WHEN_HELP}"
            if op.name == "put_page" and param.name == "content":
                p.add_argument("file", nargs="?", default="-", metavar="FILE", help="markdown file to read ('-' or nothing: stdin)")
                continue
            if param.required and not positional_done:
                p.add_argument(dest, metavar=METAVARS.get(param.name, param.name.upper()), help=text)
                positional_done = True
                continue
            if param.name in ("since", "until"):
                p.add_argument(flag, dest=dest, type=when, metavar="WHEN", help=text)
            elif param.type == "boolean":
                p.add_argument(flag, dest=dest, action="store_true", default=None, help=text)
            elif param.type == "number":
                p.add_argument(flag, dest=dest, type=number, required=param.required, metavar="N", help=text)
            else:
                metavar = None if param.enum else METAVARS.get(param.name, param.name.upper())
                p.add_argument(flag, dest=dest, required=param.required, choices=param.enum, metavar=metavar, help=text)
        if op.name == "recall":
            p.add_argument("entity_arg", nargs="?", metavar="NAME", help="shortcut for --entity NAME")
            p.add_argument("--offset", type=count, default=0, metavar="N",
                           help="skip the first N facts: page through more than --limit (local brain)")
            p.add_argument("--project", metavar="NAME",
                           help="only facts remembered in this project: a slug, name or directory (local brain)")
            formats(p, "facts")
        if op.name == "search":
            formats(p, "results")
        if op.name == "list_pages":
            p.add_argument("--visibility", choices=("world", "private"), help="only pages of this visibility (local brain)")
            p.add_argument("--since", type=when, metavar="WHEN", help=f"only pages updated since then: {WHEN_HELP}")
            formats(p, "pages")
        if op.name == "put_page":
            p.add_argument("--move-facts", action="store_true",
                           help="also move facts filed under a page-less entity this slug ends with (e.g. alice-example)")
        if op.name == "get_page":
            p.add_argument("--raw", action="store_true", help="print the page's markdown exactly as stored (edit it and put-page it back)")
        json_flag(p, "the answer as JSON, exactly as an agent gets it")
        remote_flag(p)


def _sentence_case(text: str) -> str:
    """Registry descriptions are sentences for agents; CLI help lines start lower-case, no final period."""
    text = text.rstrip().removesuffix(".")
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        text = text[0].lower() + text[1:]
    return text


def _first_sentence(description: str) -> str:
    text = description
    if text.startswith("["):
        text = text[text.index("]") + 1 :].lstrip()
    text = text.removeprefix("MEMORY VERB (v1): ")
    return text.split(". ")[0].rstrip(".")
