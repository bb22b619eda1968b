"""The `memverbs` command: argument parsing and routing, nothing heavy.

Every operation in the protocol registry is a subcommand whose options are
generated from its params (the first required param is positional), so the CLI
cannot drift from the tools the server lists. Subcommand modules are imported
only when chosen: `memverbs hook` must not pay for `serve`'s imports.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import re
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from memverbs import __version__
from memverbs.cli.completion import subcommands

if TYPE_CHECKING:
    from collections.abc import Callable


class Parser(argparse.ArgumentParser):
    """Usage errors the way every other memverbs error reads: the problem, then the fix; exit 2."""

    def error(self, message: str) -> NoReturn:
        fix = f"see `{self.prog} --help` for what it takes"
        bad = re.match(r"argument (?:COMMAND|ACTION): invalid choice: '?([^' ]*)'?", message)
        if bad:
            near = difflib.get_close_matches(bad.group(1), list(subcommands(self)), n=1)
            message = f"no command {bad.group(1)!r}"
            fix = (f"did you mean `{self.prog} {near[0]}`? " if near else "") + f"`{self.prog} --help` lists them all"
        self.exit(2, f"{self.prog}: {message}\n  fix: {fix}\n")


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

WHEN_HELP = "2026-08-11, 2026-08, 2026-08-11T09:30:00Z, 24h, 7d, 30m ago, 2w, today or yesterday"

# The top-level help, grouped. A command missing here is listed under "other".
# Each command's runner, imported only when that command runs (start-up stays light).
COMMANDS = {
    "init": "memverbs.cli.init:run_init",
    "serve": "memverbs.cli.serve:run_serve",
    "config": "memverbs.cli.config:run_config",
    "protocol": "memverbs.cli.protocol:run_protocol",
    "auth": "memverbs.cli.auth:run_auth",
    "connect": "memverbs.cli.connect:run_connect",
    "disconnect": "memverbs.cli.connect:run_disconnect",
    "remote-header": "memverbs.cli.connect:run_remote_header",
    "install": "memverbs.cli.install:run_install_cmd",
    "uninstall": "memverbs.cli.install:run_uninstall_cmd",
    "reindex": "memverbs.cli.reindex:run_reindex",
    "migrate": "memverbs.cli.migrate:run_migrate",
    "brain-password": "memverbs.cli.brain_password:run_brain_password",
    **dict.fromkeys(("entities", "stats", "backlinks", "timeline", "history", "move-facts", "restore-fact",
                     "fact-visibility"), "memverbs.cli.browse:run_browse"),
    "ui": "memverbs.cli.ui:run_ui",
    "call": "memverbs.cli.browse:run_call",
    "doctor": "memverbs.cli.doctor:run_doctor",
    "import": "memverbs.cli.sync:run_import",
    "export": "memverbs.cli.sync:run_export",
    "sync": "memverbs.cli.sync:run_sync",
}


GROUPS = (
    ("memory", ("remember", "recall", "entity", "entities", "forget", "restore-fact", "fact-visibility", "history",
                "move-facts", "context-pack", "delta", "synthesize")),
    ("pages", ("put-page", "get-page", "list-pages", "search", "delete-page", "add-link", "add-alias",
               "add-timeline-entry", "backlinks", "timeline")),
    ("markdown folders", ("import", "export", "sync")),
    ("harnesses", ("install", "uninstall", "hook")),
    ("remote", ("serve", "connect", "disconnect", "auth", "remote-header", "whoami")),
    ("maintenance", ("init", "ui", "config", "doctor", "stats", "reindex", "migrate", "brain-password", "protocol", "call",
                     "completion")),
)

EXIT_CODES = "exit status: 0 ok · 1 not found, or a problem (the fix is on stderr) · 2 usage error"


def _formats(p: argparse.ArgumentParser, what: str = "rows") -> None:
    p.add_argument("--format", choices=("table", "csv", "jsonl", "json"), default="table",
                   help=f"how to print the {what} (default table; csv and jsonl for scripts)")


def _json(p: argparse.ArgumentParser, what: str = "the result as JSON") -> None:
    p.add_argument("--json", action="store_true", help=f"print {what}")


def _remote_flag(p: argparse.ArgumentParser) -> None:
    # SUPPRESS: a subcommand's default must not overwrite a top-level `memverbs --remote …`.
    p.add_argument("--remote", action="store_true", default=argparse.SUPPRESS,
                   help="talk to the remote brain `memverbs connect` set up")


def _ops_parser(sub: argparse._SubParsersAction[Parser], add: Callable[..., argparse.ArgumentParser]) -> None:
    from memverbs.server.protocol.registry import OPERATIONS  # noqa: PLC0415 - registry is plain data

    for op in OPERATIONS:
        cli_name = op.name.replace("_", "-")
        p = add(sub, cli_name, OP_HELP.get(op.name) or _first_sentence(op.description))
        p.set_defaults(command="op", op=op.name)
        positional_done = False
        for param in op.params:
            dest = f"p_{param.name}"
            flag = "--" + param.name.replace("_", "-")
            text = _sentence_case(param.description)
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
                p.add_argument(flag, dest=dest, type=_when, metavar="WHEN", help=text)
            elif param.type == "boolean":
                p.add_argument(flag, dest=dest, action="store_true", default=None, help=text)
            elif param.type == "number":
                p.add_argument(flag, dest=dest, type=_number, required=param.required, metavar="N", help=text)
            else:
                metavar = None if param.enum else METAVARS.get(param.name, param.name.upper())
                p.add_argument(flag, dest=dest, required=param.required, choices=param.enum, metavar=metavar, help=text)
        if op.name == "recall":
            p.add_argument("entity_arg", nargs="?", metavar="NAME", help="shortcut for --entity NAME")
            p.add_argument("--offset", type=_count, default=0, metavar="N",
                           help="skip the first N facts: page through more than --limit (local brain)")
            _formats(p, "facts")
        if op.name == "list_pages":
            p.add_argument("--visibility", choices=("world", "private"), help="only pages of this visibility (local brain)")
            p.add_argument("--since", type=_when, metavar="WHEN", help=f"only pages updated since then: {WHEN_HELP}")
            _formats(p, "pages")
        if op.name == "put_page":
            p.add_argument("--move-facts", action="store_true",
                           help="also move facts filed under a page-less entity this slug ends with (e.g. alice-example)")
        if op.name == "get_page":
            p.add_argument("--raw", action="store_true", help="print the page's markdown exactly as stored (edit it and put-page it back)")
        _json(p, "the exact wire body (JSON)")
        _remote_flag(p)


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


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is not between 0 and 65535")
    return value


def _number(text: str) -> float | int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    return int(value) if value.is_integer() else value


def _when(text: str) -> str:
    """--since / --until: checked (and made an ISO instant) while parsing, the same on every command."""
    from memverbs.cli.when import WhenError, to_iso  # noqa: PLC0415

    try:
        return to_iso("", text)
    except WhenError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def _browse_parsers(sub: argparse._SubParsersAction[Parser], add: Callable[..., argparse.ArgumentParser]) -> None:
    p = add(sub, "entities", "every entity, with or without a page: type, fact counts, last touched")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--with-page", action="store_true", help="only entities that have a page")
    g.add_argument("--facts-only", action="store_true", help="only entities with facts but no page (`move-facts` candidates)")
    p.add_argument("--type", metavar="TYPE", help="only pages of this type (e.g. person)")
    p.add_argument("--prefix", metavar="PREFIX", help="only slugs starting with this (e.g. people/)")
    p.add_argument("--since", type=_when, metavar="WHEN", help=f"only entities touched since then: {WHEN_HELP}")
    p.add_argument("--limit", type=_count, default=100, metavar="N", help="at most this many (default 100)")
    p.add_argument("--offset", type=_count, default=0, metavar="N", help="skip the first N")
    _formats(p, "entities")
    _json(p, "the entities as JSON (same as --format json)")

    p = add(sub, "stats", "what the brain holds: pages, facts by state, entities, links, vectors, size, last writes")
    _json(p, "the numbers as JSON")

    p = add(sub, "backlinks", "the pages that link to a page")
    p.add_argument("slug", metavar="SLUG", help="the page linked to, e.g. companies/acme")
    p.add_argument("--limit", type=_count, default=100, metavar="N", help="at most this many (default 100)")
    _formats(p, "links")
    _json(p, "the links as JSON (same as --format json)")

    p = add(sub, "timeline", "a page's timeline entries and the facts about it, newest first")
    p.add_argument("slug", metavar="SLUG", help="the entity, e.g. people/alice-example")
    p.add_argument("--since", type=_when, metavar="WHEN", help=f"only events since then: {WHEN_HELP}")
    p.add_argument("--include-expired", action="store_true", help="also expired and superseded facts")
    p.add_argument("--limit", type=_count, default=50, metavar="N", help="at most this many events (default 50)")
    _formats(p, "events")
    _json(p, "the events as JSON (same as --format json)")

    p = add(sub, "history", "one fact's audit trail: supersessions, moves, expiry (also: audit)", aliases=["audit"])
    p.set_defaults(command="history")
    p.add_argument("id", metavar="ID", help="the fact id, as recall shows it (#42 or 42)")
    _json(p, "the fact and its events as JSON")

    p = add(sub, "move-facts", "refile the facts of one entity under another (audited; ids stay)")
    p.add_argument("from_slug", metavar="FROM", help="the entity slug the facts are filed under, e.g. alice-example")
    p.add_argument("to_slug", metavar="TO", help="the slug they belong to, e.g. people/alice-example")
    p.add_argument("--reason", metavar="TEXT", help="why, kept with each move (default: memverbs move-facts)")
    p.add_argument("--dry-run", action="store_true", help="say how many facts would move; write nothing")
    _json(p, "what moved as JSON")

    p = add(sub, "restore-fact", "bring a forgotten fact back (audited: who, when, why; the old expiry stays in its history)")
    p.add_argument("id", metavar="ID", help="the fact id, as recall --include-expired shows it (#42 or 42)")
    p.add_argument("--reason", required=True, metavar="TEXT", help="why it holds again, kept in the fact's history")
    _json(p, "the restored fact as JSON")

    p = add(sub, "fact-visibility", "make one fact private or world (audited; world needs --widen)")
    p.add_argument("id", metavar="ID", help="the fact id, as recall shows it (#42 or 42)")
    p.add_argument("visibility", choices=("private", "world"), metavar="VISIBILITY",
                   help="private (no MCP caller sees it) or world (every MCP caller may)")
    p.add_argument("--widen", action="store_true",
                   help="required to make a private fact world: every harness and remote token will see it")
    p.add_argument("--reason", metavar="TEXT", help="why, kept in the fact's history")
    _json(p, "the change as JSON")

    p = add(sub, "call", "call any MCP tool with raw JSON arguments and print the wire body (debugging)")
    p.add_argument("tool", metavar="TOOL", help="the tool name, e.g. recall or list_pages")
    p.add_argument("arguments", nargs="?", default="{}", metavar="JSON",
                   help="the arguments as one JSON object ('-': read stdin; default {})")
    _remote_flag(p)

    p = add(sub, "completion", "print a shell completion script (bash: source it; zsh: eval it in ~/.zshrc)")
    p.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell to complete for")


def build_parser() -> argparse.ArgumentParser:
    # The light homes of the names the parser offers: the surfaces (the settings reader's), the
    # harnesses (the hook vocabulary, which a test keeps equal to installers/registry.py: importing
    # the table itself costs every command ~80 ms) and the hook's arguments (the runner's own).
    from memverbs.hooks.events import INSTALLABLE  # noqa: PLC0415
    from memverbs.hooks.runner import HOOK_OPTIONS, MOMENTS  # noqa: PLC0415
    from memverbs.server.quickconfig import SURFACES  # noqa: PLC0415

    parser = Parser(
        prog="memverbs",
        usage="memverbs [--remote | --local] COMMAND [ARGS]",
        description="Memory for coding agents: the MEMORY_VERBS v1 brain, server, installers and hooks.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memverbs {__version__}", help="print the version and exit")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--remote", action="store_true", help="memory and page commands talk to the remote brain `memverbs connect` set up")
    where.add_argument("--local", action="store_true", help="use the local brain even when config cli_remote is on")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS, prog="memverbs")
    helps: dict[str, str] = {}

    def add(sub_: argparse._SubParsersAction[Parser], name: str, text: str, **kw: Any) -> Parser:
        if sub_ is sub:  # only commands are grouped in the top-level help, not their actions
            helps[name] = text
        return sub_.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".", **kw)

    p = add(sub, "init", "create the home, its config and the brain (safe to re-run)")
    _json(p, "what was created as JSON")

    p = add(sub, "serve", "run the MCP server over stdio, or over HTTP for remote brains (--http)")
    p.add_argument("--surface", choices=SURFACES, help="tools to expose (default: config mcp_surface, else full); over HTTP the ceiling for every token")
    p.add_argument("--http", action="store_true", help="serve MCP streamable HTTP at /mcp (bearer tokens: `memverbs auth create`)")
    p.add_argument("--host", metavar="ADDRESS", help="HTTP: address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=_port, metavar="PORT", help="HTTP: port (default 3131; 0 picks a free one)")
    p.add_argument("--behind-tls-proxy", action="store_true", help="HTTP: TLS is terminated in front of memverbs; silences the warning for a non-loopback --host")

    p = add(sub, "config", "read or change settings (docs/configuration.md)")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    g = add(csub, "get", "print one setting, or all of them")
    g.add_argument("key", nargs="?", metavar="KEY", help="a dotted setting name, e.g. llm.model (default: all)")
    _json(g, "the settings as JSON")
    s = add(csub, "set", "change a setting in config.toml (validated before writing)")
    s.add_argument("key", metavar="KEY", help="a dotted setting name, e.g. llm.model")
    s.add_argument("value", metavar="VALUE", help="the new value")
    _json(s, "the new value as JSON")
    u = add(csub, "unset", "remove a setting from config.toml (back to its default)")
    u.add_argument("key", metavar="KEY", help="a dotted setting name, e.g. llm.model")
    _json(u, "the value now in effect as JSON")

    harnesses = ", ".join(INSTALLABLE)
    p = add(sub, "install", "register memverbs (server + lifecycle hooks) with an agent harness")
    p.add_argument("harness", metavar="HARNESS", help=f"{harnesses}, or all (every one on PATH)")
    p.add_argument("--scope", choices=("user", "project", "local"), help="where the harness keeps it (default: user)")
    p.add_argument("--surface", choices=SURFACES, default="verbs", help="tools the harness sees (default verbs)")
    p.add_argument("--no-hooks", action="store_true", help="register the server only")
    p.add_argument("--dry-run", action="store_true", help="print the exact changes as a diff; write nothing")
    _json(p, "what changed as JSON")
    p = add(sub, "uninstall", "remove exactly what `memverbs install` added")
    p.add_argument("harness", metavar="HARNESS", help=f"{harnesses}, or all")
    p.add_argument("--dry-run", action="store_true", help="print the exact changes as a diff; write nothing")
    _json(p, "what was removed as JSON")

    # `memverbs hook` never reaches argparse (main() hands it to the runner first, whose own parser
    # never fails); this entry lists and documents it, from the runner's table of its arguments.
    p = add(sub, "hook", "lifecycle hook entry point, wired by `memverbs install` (docs/hooks.md)")
    p.add_argument("moment", choices=MOMENTS, help="which moment of the session")
    for flag, metavar, text in HOOK_OPTIONS:
        p.add_argument(flag, metavar=metavar, help=text)

    p = add(sub, "protocol", "the MEMORY_VERBS spec, conformance runner and usage stats")
    p.add_argument("--json", action="store_true", help="the machine-readable spec")
    psub = p.add_subparsers(dest="protocol_command", metavar="ACTION")
    c = add(psub, "conformance", "certify an endpoint against MEMORY_VERBS v1")
    c.add_argument("--target", metavar="URL|COMMAND|self",
                   help="http(s)://…/mcp URL, a command that starts a stdio server, or self: this memverbs on "
                   "your own brain (default: this memverbs on a throwaway brain, so nothing is written into yours)")
    c.add_argument("--token", metavar="TOKEN", help="bearer token for an HTTP target")
    c.add_argument("--synthesize", action="store_true", help="also call synthesize (costs money with a real LLM)")
    _json(c, "the report as JSON")
    st = add(psub, "stats", "verb usage from the local usage log")
    st.add_argument("--days", default="30", metavar="N", help="window in days (default 30)")
    _json(st, "the report as JSON")

    p = add(sub, "auth", "bearer tokens for `memverbs serve --http`: create, list, revoke, test")
    asub = p.add_subparsers(dest="auth_command", metavar="ACTION", required=True)
    a = add(asub, "create", "mint a token (printed once; only its hash is stored)")
    a.add_argument("name", metavar="NAME", help="who the token is for, e.g. laptop or ci (letters, digits, . _ -)")
    a.add_argument("--scopes", default="read,write", metavar="SCOPES", help="comma-separated: read, write (default read,write)")
    a.add_argument("--surface", choices=SURFACES, default="full",
                   help="tools this token may see, capped by the server's --surface (default full: the server decides)")
    a.add_argument("--source", metavar="SOURCE", help="source the token reads and writes (default: this home's source)")
    _json(a, "the token and its grant as JSON")
    a = add(asub, "list", "the live tokens (never the tokens themselves)")
    a.add_argument("--all", action="store_true", help="include revoked tokens")
    _json(a, "the tokens as JSON")
    a = add(asub, "revoke", "refuse a token from now on")
    a.add_argument("name", metavar="NAME", help="the token's name, as `auth list` shows it")
    _json(a, "the result as JSON")
    a = add(asub, "test", "check that a remote brain accepts a token (whoami)")
    a.add_argument("url", metavar="URL", help="the server's MCP endpoint, e.g. https://brain.example.com/mcp")
    a.add_argument("--token", metavar="TOKEN", help="the token (default: the one `memverbs connect` stored for this URL)")
    _json(a, "the report as JSON")

    p = add(sub, "connect", "use a remote brain: check the URL and token, keep the token in the OS keyring")
    p.add_argument("url", metavar="URL", help="the server's MCP endpoint, e.g. https://brain.example.com/mcp")
    p.add_argument("--token", required=True, metavar="TOKEN", help="a token from `memverbs auth create` on the server")
    p.add_argument("--install", metavar="HARNESSES",
                   help="also register the remote brain in these harnesses, comma-separated: claude,codex,grok,opencode,openclaw "
                        "(or all: those on PATH); the token goes in none of their files (docs/remote.md). Without it, the harnesses an "
                        "earlier connect registered stay registered")
    _json(p, "the connection as JSON")

    p = add(sub, "disconnect", "forget the remote brain: unregister it from the harnesses connect --install wired, remove its token")
    _json(p, "what was undone as JSON")

    p = add(sub, "remote-header", "print the remote brain's Authorization header as JSON (the headers helper harnesses run)")
    p.add_argument("url", nargs="?", metavar="URL", help="the MCP endpoint (default: the connected one)")
    p.add_argument("--bare", action="store_true", help='print the token alone: export MEMVERBS_REMOTE_TOKEN="$(memverbs remote-header --bare)"')
    p.add_argument("--keyring-backend", metavar="BACKEND",
                   help="read the keyring through this backend (what `connect --install` writes into a harness's helper command: "
                        "the one the token was stored in, whatever the harness's environment says)")

    p = add(sub, "doctor", "check the home, config, brain and providers, with a fix for each problem")
    _json(p, "the checks as JSON")

    p = add(sub, "reindex", "embed the pages and facts that have no vector for the configured model yet")
    p.add_argument("--prune", action="store_true", help="also drop vectors no page uses and vectors of other models")
    _json(p, "the counts as JSON")

    p = add(sub, "migrate", "copy the brain to another backend (postgresql://… or a SQLite file), verified")
    p.add_argument("--to", required=True, metavar="URL", help="the brain to copy into: postgresql://…, sqlite:///file.db or a path")
    p.add_argument("--resume", action="store_true", help="continue a copy that was interrupted")
    _json(p, "the copy's counts as JSON")

    # A Postgres brain's password in the OS keyring (cli/brain_password.py); never an argument.
    p = add(sub, "brain-password", "keep a Postgres brain's password in the OS keyring: set, status, delete")
    bsub = p.add_subparsers(dest="brain_password_command", metavar="ACTION", required=True)
    bset = add(bsub, "set", "store the password (prompted, or one line of stdin) once the server accepts it")
    bset.add_argument("--no-check", action="store_true", help="store it without connecting first (the server is not reachable yet)")
    for b in (bset, add(bsub, "status", "say where the password comes from: the URL, PGPASSWORD, the keyring or ~/.pgpass"),
              add(bsub, "delete", "remove the password memverbs stored in the keyring")):
        b.add_argument("--url", metavar="URL", help="the Postgres brain (default: the configured brain.url)")
        _json(b, "the result as JSON")

    p = add(sub, "ui", "open the local brain inspector in the browser (timeline, entities, pages, pack preview, health)")
    p.add_argument("--port", type=_port, default=0, metavar="PORT", help="port to listen on (default 0: a free one)")
    p.add_argument("--host", default="127.0.0.1", metavar="ADDRESS", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--allow-non-loopback", action="store_true", help="serve on a non-loopback --host (it shows private memory to whoever has the URL)")
    p.add_argument("--no-open", action="store_true", help="print the URL but do not open a browser")

    from memverbs.cli.sync import add_parsers as add_sync_parsers  # noqa: PLC0415 - argparse only

    add_sync_parsers(sub, add)
    _ops_parser(sub, add)
    _browse_parsers(sub, add)
    parser.epilog = _grouped(helps) + "\n\n" + EXIT_CODES + "\nRun `memverbs COMMAND --help` for a command's options."
    return parser


def _grouped(helps: dict[str, str]) -> str:
    out: list[str] = []
    placed: set[str] = set()
    width = max(len(n) for n in helps) + 2
    for title, names in GROUPS:
        rows = [n for n in names if n in helps]
        placed |= set(rows)
        out += [f"{title}:"] + [f"  {n.ljust(width)}{helps[n]}" for n in rows] + [""]
    rest = [n for n in helps if n not in placed]
    if rest:
        out += ["other:"] + [f"  {n.ljust(width)}{helps[n]}" for n in rest] + [""]
    return "\n".join(out).rstrip()


def _cli_name(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """Accept a tool's MCP name as its command (`list_pages` runs `list-pages`)."""
    for i, word in enumerate(argv):
        if word.startswith("-"):
            continue
        if "_" in word:
            hyphened = word.replace("_", "-")
            if hyphened in subcommands(parser):
                return [*argv[:i], hyphened, *argv[i + 1 :]]
        return argv
    return argv


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"]:
        # The hook path is started by a harness on every session and heartbeat:
        # it skips argparse and every other command's imports.
        from memverbs.hooks.runner import run_hook  # noqa: PLC0415

        return run_hook(argv[1:])
    parser = build_parser()
    argv = _cli_name(argv, parser)
    args, extra = parser.parse_known_args(argv)
    if extra:
        # Said by the command's own parser, so the fix points at its --help.
        name = args.op.replace("_", "-") if args.command == "op" else args.command
        sub = subcommands(parser).get(name, parser) if name else parser
        sub.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "completion":
            from memverbs.cli.completion import run_completion  # noqa: PLC0415

            return run_completion(args, build_parser())
        target = COMMANDS.get(args.command, "memverbs.cli.ops:run_op")  # the rest are the registry's tools
        module, _, func = target.partition(":")
        return getattr(importlib.import_module(module), func)(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`memverbs … | head`): stop quietly, as a Unix tool does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
