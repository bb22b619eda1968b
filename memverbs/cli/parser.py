"""The `memverbs` argument tree: every command, its options and help, and the grouped top-level help.

Built from the light homes of the names it offers; the commands' own modules are imported only
when one runs (cli/main.py).
"""

from __future__ import annotations

import argparse
from typing import Any

from memverbs import __version__
from memverbs.cli.argparser import Parser
from memverbs.cli.browse_parsers import add_browse_parsers
from memverbs.cli.options import WHEN_HELP, json_flag, port, when
from memverbs.cli.tool_parsers import add_tool_parsers

# The top-level help, grouped. A command missing here is listed under "other".
GROUPS = (
    ("memory", ("remember", "recall", "entity", "entities", "projects", "forget", "restore-fact", "fact-visibility", "history",
                "move-facts", "context-pack", "delta", "synthesize")),
    ("pages", ("put-page", "get-page", "list-pages", "search", "delete-page", "add-link", "add-alias",
               "add-timeline-entry", "backlinks", "timeline", "page-history", "page-restore")),
    ("markdown folders", ("import", "export", "sync")),
    ("harnesses", ("install", "uninstall", "hook", "capture")),
    ("remote", ("serve", "connect", "disconnect", "auth", "people", "remote-header", "whoami")),
    ("maintenance", ("init", "ui", "config", "doctor", "stats", "reindex", "migrate", "brain-password", "protocol", "call",
                     "completion", "docs")),
)

EXIT_CODES = "exit status: 0 ok · 1 not found, or a problem (the fix is on stderr) · 2 usage error"


class _Unbuilt:
    """A command this run does not need (build_parser's `only`): whatever is asked of it (arguments,
    groups, subcommands) is taken and dropped, so the tree costs one command's worth to build."""

    def __getattr__(self, name: str) -> Any:
        return self._drop

    def _drop(self, *args: Any, **kwargs: Any) -> Any:
        return self


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole tree; with `only`, a tree in which only that command (and the top level) is built:
    what a run of one command needs (cli/main.py), a tenth of the cost."""
    # The light homes of the names the parser offers: the surfaces (the settings reader's) and the
    # harnesses (the hook vocabulary, which a test keeps equal to installers/registry.py: importing
    # the table itself costs every command ~80 ms); the hook's arguments are the runner's own.
    from memverbs.hooks.events import INSTALLABLE  # noqa: PLC0415
    from memverbs.server.quickconfig import SURFACES  # noqa: PLC0415

    def wanted(*names: str) -> bool:
        return only is None or only in names

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
        if isinstance(sub_, _Unbuilt):
            return sub_  # type: ignore[return-value] # an action of a command not built
        if sub_ is sub:  # only commands are grouped in the top-level help, not their actions
            helps[name] = text
            if not wanted(name, *kw.get("aliases", ())):
                return _Unbuilt()  # type: ignore[return-value]
        return sub_.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".", **kw)

    p = add(sub, "init", "create the home, its config and the brain (safe to re-run)")
    json_flag(p, "what was created as JSON")

    p = add(sub, "serve", "run the MCP server over stdio, or over HTTP for remote brains (--http)")
    p.add_argument("--surface", choices=SURFACES, help="tools to expose (default: config mcp_surface, else full); over HTTP the ceiling for every token")
    p.add_argument("--http", action="store_true", help="serve MCP streamable HTTP at /mcp (bearer tokens: `memverbs auth create`)")
    p.add_argument("--host", metavar="ADDRESS", help="HTTP: address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=port, metavar="PORT", help="HTTP: port (default 3131; 0 picks a free one)")
    p.add_argument("--behind-tls-proxy", action="store_true", help="HTTP: TLS is terminated in front of memverbs; silences the warning for a non-loopback --host")
    p.add_argument("--public-url", metavar="URL",
                   help="HTTP: the https://…/mcp URL clients use behind the proxy: OAuth's resource identifier (default: config oauth.public_url, else the address listened on)")

    p = add(sub, "config", "read or change settings (`memverbs docs configuration`)")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    g = add(csub, "get", "print one setting, or all of them")
    g.add_argument("key", nargs="?", metavar="KEY", help="a dotted setting name, e.g. llm.model (default: all)")
    json_flag(g, "the settings as JSON")
    s = add(csub, "set", "change a setting in config.toml (validated before writing)")
    s.add_argument("key", metavar="KEY", help="a dotted setting name, e.g. llm.model")
    s.add_argument("value", metavar="VALUE", help="the new value")
    json_flag(s, "the new value as JSON")
    u = add(csub, "unset", "remove a setting from config.toml (back to its default)")
    u.add_argument("key", metavar="KEY", help="a dotted setting name, e.g. llm.model")
    json_flag(u, "the value now in effect as JSON")

    harnesses = ", ".join(INSTALLABLE)
    p = add(sub, "install", "register memverbs (server + lifecycle hooks) with an agent harness")
    p.add_argument("harness", metavar="HARNESS", help=f"{harnesses}, or all (every one on PATH)")
    p.add_argument("--scope", choices=("user", "project", "local"), help="where the harness keeps it (default: user)")
    p.add_argument("--surface", choices=SURFACES, default="verbs", help="tools the harness sees (default verbs)")
    p.add_argument("--no-hooks", action="store_true", help="register the server only")
    p.add_argument("--dry-run", action="store_true", help="print the exact changes as a diff; write nothing")
    json_flag(p, "what changed as JSON")
    p = add(sub, "uninstall", "remove exactly what `memverbs install` added")
    p.add_argument("harness", metavar="HARNESS", help=f"{harnesses}, or all")
    p.add_argument("--dry-run", action="store_true", help="print the exact changes as a diff; write nothing")
    json_flag(p, "what was removed as JSON")

    # `memverbs hook` never reaches argparse (main() hands it to the runner first, whose own parser
    # never fails); this entry lists and documents it, from the runner's table of its arguments.
    p = add(sub, "hook", "lifecycle hook entry point, wired by `memverbs install` (`memverbs docs hooks`)")
    if wanted("hook"):
        from memverbs.hooks.runner import HOOK_OPTIONS, MOMENTS  # noqa: PLC0415

        p.add_argument("moment", choices=MOMENTS, help="which moment of the session")
        for flag, metavar, text in HOOK_OPTIONS:
            p.add_argument(flag, metavar=metavar, help=f"{text}: {harnesses} or plain" if flag == "--harness" else text)
    p.epilog = ("A harness runs it with its event as JSON on stdin; the context goes to stdout, and on any problem it prints "
                "nothing and exits 0, so a session never breaks. Run at a terminal, it says on stderr why it printed "
                "nothing. MEMVERBS_HOOKS=off turns every hook off.")

    p = add(sub, "protocol", "the MEMORY_VERBS spec, conformance runner and usage stats")
    p.add_argument("--json", action="store_true", help="the machine-readable spec")
    psub = p.add_subparsers(dest="protocol_command", metavar="ACTION")
    c = add(psub, "conformance", "certify an endpoint against MEMORY_VERBS v1")
    c.add_argument("--target", metavar="URL|COMMAND|self",
                   help="http(s)://…/mcp URL, a command that starts a stdio server, or self: this memverbs on "
                   "your own brain (default: this memverbs on a throwaway brain, so nothing is written into yours)")
    c.add_argument("--token", metavar="-|TOKEN",
                   help="bearer token for an HTTP target: - reads it from stdin (default: the one `memverbs connect` stored for "
                        "the URL); a token written here is visible in `ps` and shell history, and warned about")
    c.add_argument("--synthesize", action="store_true", help="also call synthesize (costs money with a real LLM)")
    json_flag(c, "the report as JSON")
    st = add(psub, "stats", "verb usage from the local usage log")
    st.add_argument("--days", default="30", metavar="N", help="window in days (default 30)")
    json_flag(st, "the report as JSON")

    p = add(sub, "auth", "access to `memverbs serve --http`: bearer tokens (create, list, revoke, test) and OAuth clients")
    asub = p.add_subparsers(dest="auth_command", metavar="ACTION", required=True)
    a = add(asub, "create", "mint a token (printed once; only its hash is stored)")
    a.add_argument("name", metavar="NAME", help="who the token is for, e.g. laptop or ci (letters, digits, . _ -)")
    a.add_argument("--scopes", default="read,write", metavar="SCOPES",
                   help="comma-separated: read, write, read:private (its person's private facts and pages; implies read) "
                        "(default read,write)")
    a.add_argument("--for", dest="person", metavar="PERSON",
                   help="the person the token acts for, as `memverbs people list` names them (default: the person this "
                        "home's brain login is: owner on SQLite and for the owner's login)")
    a.add_argument("--surface", choices=SURFACES, default="full",
                   help="tools this token may see, capped by the server's --surface (default full: the server decides)")
    a.add_argument("--source", metavar="SOURCE", help="source the token reads and writes (default: this home's source)")
    json_flag(a, "the token and its grant as JSON")
    a = add(asub, "list", "the live tokens (never the tokens themselves)")
    a.add_argument("--all", action="store_true", help="include revoked tokens")
    json_flag(a, "the tokens as JSON")
    a = add(asub, "revoke", "refuse a token from now on")
    a.add_argument("name", metavar="NAME", help="the token's name, as `auth list` shows it")
    json_flag(a, "the result as JSON")
    a = add(asub, "approve", "print a one-time code that approves one OAuth client on the consent page (10 minutes)")
    json_flag(a, "the code and its expiry as JSON")
    a = add(asub, "owner-password", "set the password the consent page accepts (prompted, or one line of stdin; kept hashed)")
    a.add_argument("--clear", action="store_true", help="remove it: approval codes only from now on")
    a = add(asub, "clients", "the OAuth clients (claude.ai, ChatGPT, …): their grants and last use; --revoke one")
    a.add_argument("--revoke", metavar="CLIENT", help="revoke this client (its client id, a unique prefix of it, or its unique name)")
    a.add_argument("--all", action="store_true", help="include revoked clients")
    json_flag(a, "the clients as JSON")
    a = add(asub, "test", "check that a remote brain accepts a token (whoami)")
    a.add_argument("url", metavar="URL", help="the server's MCP endpoint, e.g. https://brain.example.com/mcp")
    a.add_argument("--token", metavar="-|TOKEN",
                   help="- reads the token from stdin (default: the one `memverbs connect` stored for this URL, else stdin or a "
                        "hidden prompt); a token written here is visible in `ps` and shell history, and warned about")
    json_flag(a, "the report as JSON")

    p = add(sub, "people", "the people a brain is shared with: each one's private facts and pages are theirs alone")
    psub2 = p.add_subparsers(dest="people_command", metavar="ACTION", required=True)
    a = add(psub2, "add", "add a person (on Postgres, with their own role: their login sees only their own private rows)")
    a.add_argument("name", metavar="NAME", help="the person's name (lowercase letters, digits, _ -)")
    a.add_argument("--role", metavar="ROLE", help="Postgres: the person's existing role (granted the brain's tables)")
    a.add_argument("--create-role", action="store_true",
                   help="Postgres: create the LOGIN role (named --role, else NAME) if it does not exist")
    json_flag(a, "the person as JSON")
    a = add(psub2, "list", "the brain's people: the owner, then everyone added")
    json_flag(a, "the people as JSON")

    p = add(sub, "connect", "use a remote brain: check the URL and token, keep the token in the OS keyring")
    p.add_argument("url", metavar="URL", help="the server's MCP endpoint, e.g. https://brain.example.com/mcp")
    p.add_argument("--token", metavar="-|TOKEN",
                   help="a token from `memverbs auth create` on the server (default: read from stdin, or a hidden prompt at a "
                        "terminal); a token written here is visible in `ps` and shell history, and warned about")
    p.add_argument("--install", metavar="HARNESSES",
                   help="also register the remote brain in these harnesses, comma-separated: claude,codex,grok,opencode,openclaw "
                        "(or all: those on PATH); the token goes in none of their files (`memverbs docs remote`). Without it, the harnesses an "
                        "earlier connect registered stay registered")
    json_flag(p, "the connection as JSON")

    p = add(sub, "disconnect", "forget the remote brain: unregister it from the harnesses connect --install wired, remove its token")
    json_flag(p, "what was undone as JSON")

    p = add(sub, "remote-header", "print the remote brain's Authorization header as JSON (the headers helper harnesses run)")
    p.add_argument("url", nargs="?", metavar="URL", help="the MCP endpoint (default: the connected one)")
    p.add_argument("--bare", action="store_true", help='print the token alone: export MEMVERBS_REMOTE_TOKEN="$(memverbs remote-header --bare)"')
    p.add_argument("--keyring-backend", metavar="BACKEND",
                   help="read the keyring through this backend (what `connect --install` writes into a harness's helper command: "
                        "the one the token was stored in, whatever the harness's environment says)")

    p = add(sub, "capture", "keep what sessions said and did: a session page and the user's explicit facts, from transcripts")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="transcript files (.jsonl) or SQLite session stores (opencode.db, openclaw-agent.sqlite: every session in it); "
                        "none: each harness's own session store")
    p.add_argument("--harness", choices=("claude", "codex", "grok", "opencode", "openclaw"), metavar="HARNESS",
                   help="whose transcripts: claude, codex, grok, opencode or openclaw (default: told from each file; without PATH, every store)")
    p.add_argument("--since", type=when, metavar="WHEN", help=f"only transcripts changed since then: {WHEN_HELP}")
    p.add_argument("--dry-run", action="store_true", help="show what would be kept; store nothing")
    json_flag(p, "one object per session as JSON")

    p = add(sub, "doctor", "check the home, config, brain and providers, with a fix for each problem")
    json_flag(p, "the checks as JSON")

    p = add(sub, "reindex", "embed the pages and facts that have no vector for the configured model yet")
    p.add_argument("--prune", action="store_true", help="also drop vectors no page uses and vectors of other models")
    json_flag(p, "the counts as JSON")

    p = add(sub, "migrate", "copy the brain to another backend (postgresql://… or a SQLite file), verified")
    p.add_argument("--to", required=True, metavar="URL", help="the brain to copy into: postgresql://…, sqlite:///file.db or a path")
    p.add_argument("--resume", action="store_true", help="continue a copy that was interrupted")
    json_flag(p, "the copy's counts as JSON")

    # A Postgres brain's password in the OS keyring (cli/brain_password.py); never an argument.
    p = add(sub, "brain-password", "keep a Postgres brain's password in the OS keyring: set, status, delete")
    bsub = p.add_subparsers(dest="brain_password_command", metavar="ACTION", required=True)
    bset = add(bsub, "set", "store the password (prompted, or one line of stdin) once the server accepts it")
    bset.add_argument("--no-check", action="store_true", help="store it without connecting first (the server is not reachable yet)")
    for b in (bset, add(bsub, "status", "say where the password comes from: the URL, PGPASSWORD, the keyring or ~/.pgpass"),
              add(bsub, "delete", "remove the password memverbs stored in the keyring")):
        b.add_argument("--url", metavar="URL", help="the Postgres brain (default: the configured brain.url)")
        json_flag(b, "the result as JSON")

    p = add(sub, "ui", "open the local brain inspector in the browser (timeline, entities, pages, pack preview, health)")
    p.add_argument("--port", type=port, default=0, metavar="PORT", help="port to listen on (default 0: a free one)")
    p.add_argument("--host", default="127.0.0.1", metavar="ADDRESS", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--allow-non-loopback", action="store_true", help="serve on a non-loopback --host (it shows private memory to whoever has the URL)")
    p.add_argument("--no-open", action="store_true", help="print the URL but do not open a browser")

    if wanted("import", "export", "sync"):
        from memverbs.cli.sync import add_parsers as add_sync_parsers  # noqa: PLC0415 - argparse only

        add_sync_parsers(sub, add)
    add_tool_parsers(sub, add)
    add_browse_parsers(sub, add)
    if wanted("page-history", "page-restore"):
        from memverbs.cli.page_history import add_parsers as add_page_history_parsers  # noqa: PLC0415 - argparse only

        add_page_history_parsers(sub, add)
    parser.epilog = _grouped(helps) + "\n\n" + EXIT_CODES + "\nRun `memverbs COMMAND --help` for a command's options, `memverbs docs` for the longer docs."
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
