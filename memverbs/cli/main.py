"""The `memverbs` command: argument parsing and routing, nothing heavy.

Every operation in the protocol registry is a subcommand whose options are
generated from its params (the first required param is positional), so the CLI
cannot drift from the tools the server lists. Subcommand modules are imported
only when chosen: `memverbs hook` must not pay for `serve`'s imports.
"""

from __future__ import annotations

import argparse
import os
import sys

from memverbs import __version__


def _ops_parser(sub) -> None:
    from memverbs.server.protocol.registry import OPERATIONS  # noqa: PLC0415 - registry is plain data

    for op in OPERATIONS:
        if op.name == "whoami":
            continue
        cli_name = op.name.replace("_", "-")
        p = sub.add_parser(cli_name, help=op.description.removeprefix("MEMORY VERB (v1): ").split(". ")[0])
        p.set_defaults(command="op", op=op.name)
        positional_done = False
        for param in op.params:
            dest = f"p_{param.name}"
            flag = "--" + param.name.replace("_", "-")
            if op.name == "put_page" and param.name == "content":
                p.add_argument("file", nargs="?", default="-", help="markdown file to read ('-' or nothing: stdin)")
                continue
            if param.required and not positional_done:
                p.add_argument(dest, metavar=param.name.upper(), help=param.description)
                positional_done = True
                continue
            if param.type == "boolean":
                p.add_argument(flag, dest=dest, action="store_true", default=None, help=param.description)
            elif param.type == "number":
                p.add_argument(flag, dest=dest, type=_number, required=param.required, help=param.description)
            else:
                p.add_argument(
                    flag, dest=dest, required=param.required, choices=param.enum, help=param.description
                )
        p.add_argument("--json", action="store_true", help="print the response JSON")


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is not between 0 and 65535")
    return value


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memverbs", description="Memory for coding agents: the MEMORY_VERBS v1 brain, server, installers and hooks."
    )
    parser.add_argument("--version", action="version", version=f"memverbs {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("init", help="create the home, its config and the brain")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("serve", help="run the MCP server over stdio, or over HTTP for remote brains (--http)")
    p.add_argument("--surface", choices=("verbs", "starter", "full"), help="tools to expose (default: config mcp_surface, else full); over HTTP the ceiling for every token")
    p.add_argument("--http", action="store_true", help="serve MCP streamable HTTP at /mcp (bearer tokens: `memverbs auth create`)")
    p.add_argument("--host", help="HTTP: address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=_port, help="HTTP: port (default 3131; 0 picks a free one)")
    p.add_argument("--behind-tls-proxy", action="store_true", help="HTTP: TLS is terminated in front of memverbs; silences the warning for a non-loopback --host")

    p = sub.add_parser("config", help="read or change settings")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    g = csub.add_parser("get", help="print one setting, or all of them")
    g.add_argument("key", nargs="?")
    g.add_argument("--json", action="store_true")
    s = csub.add_parser("set", help="change a setting in config.toml")
    s.add_argument("key")
    s.add_argument("value")
    u = csub.add_parser("unset", help="remove a setting from config.toml (back to its default)")
    u.add_argument("key")

    p = sub.add_parser("install", help="register memverbs (server + lifecycle hooks) with an agent harness")
    p.add_argument("harness", help="claude, codex, grok, opencode, openclaw, or all (every one on PATH)")
    p.add_argument("--scope", choices=("user", "project", "local"), help="where the harness keeps it (default: user)")
    p.add_argument("--surface", choices=("verbs", "starter", "full"), default="verbs")
    p.add_argument("--no-hooks", action="store_true", help="register the server only")
    p.add_argument("--dry-run", action="store_true", help="print the exact changes as a diff; write nothing")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("uninstall", help="remove exactly what `memverbs install` added")
    p.add_argument("harness")
    p.add_argument("--dry-run", action="store_true")

    p = sub.add_parser("hook", help="lifecycle hook entry point, wired by `memverbs install` (see docs/hooks.md)")
    p.add_argument("moment", choices=("session-start", "post-compact", "heartbeat", "auto"))
    p.add_argument("--harness", default="plain")
    p.add_argument("--session-id")
    p.add_argument("--deadline-ms", type=int)

    p = sub.add_parser("protocol", help="the MEMORY_VERBS spec, conformance runner and usage stats")
    p.add_argument("--json", action="store_true", help="the machine-readable spec")
    psub = p.add_subparsers(dest="protocol_command", metavar="ACTION")
    c = psub.add_parser("conformance", help="certify an endpoint against MEMORY_VERBS v1")
    c.add_argument("--target", help="http(s)://…/mcp URL, or a command that starts a stdio server (default: this memverbs)")
    c.add_argument("--token", help="bearer token for an HTTP target")
    c.add_argument("--synthesize", action="store_true", help="also call synthesize (costs money with a real LLM)")
    c.add_argument("--json", action="store_true")
    st = psub.add_parser("stats", help="verb usage from the local usage log")
    st.add_argument("--days", default="30", help="window in days (default 30)")
    st.add_argument("--json", action="store_true")

    p = sub.add_parser("auth", help="bearer tokens for `memverbs serve --http`: create, list, revoke, test")
    asub = p.add_subparsers(dest="auth_command", metavar="ACTION", required=True)
    a = asub.add_parser("create", help="mint a token (printed once; only its hash is stored)")
    a.add_argument("name", help="who the token is for, e.g. laptop or ci (letters, digits, . _ -)")
    a.add_argument("--scopes", default="read,write", help="comma-separated: read, write (default read,write)")
    a.add_argument("--surface", choices=("verbs", "starter", "full"), default="full",
                   help="tools this token may see, capped by the server's --surface (default full: the server decides)")
    a.add_argument("--source", help="source the token reads and writes (default: this home's source)")
    a.add_argument("--json", action="store_true")
    a = asub.add_parser("list", help="the live tokens (never the tokens themselves)")
    a.add_argument("--all", action="store_true", help="include revoked tokens")
    a.add_argument("--json", action="store_true")
    a = asub.add_parser("revoke", help="refuse a token from now on")
    a.add_argument("name")
    a = asub.add_parser("test", help="check that a remote brain accepts a token (whoami)")
    a.add_argument("url", help="the server's MCP endpoint, e.g. https://brain.example.com/mcp")
    a.add_argument("--token", help="the token (default: the one `memverbs connect` stored for this URL)")
    a.add_argument("--json", action="store_true")

    p = sub.add_parser("connect", help="use a remote brain: check the URL and token, keep the token in the OS keyring")
    p.add_argument("url", help="the server's MCP endpoint, e.g. https://brain.example.com/mcp")
    p.add_argument("--token", required=True, help="a token from `memverbs auth create` on the server")
    p.add_argument("--install", metavar="HARNESSES",
                   help="also register the remote brain in these harnesses, comma-separated: claude,codex,grok,opencode,openclaw "
                        "(or all: those on PATH); the token goes in none of their files (docs/remote.md). Without it, the harnesses an "
                        "earlier connect registered stay registered")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("disconnect", help="forget the remote brain: unregister it from the harnesses connect --install wired, remove its token from the keyring")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("remote-header", help="print the remote brain's Authorization header as JSON (the headers helper harnesses run)")
    p.add_argument("url", nargs="?", help="the MCP endpoint (default: the connected one)")
    p.add_argument("--bare", action="store_true", help='print the token alone: export MEMVERBS_REMOTE_TOKEN="$(memverbs remote-header --bare)"')
    p.add_argument("--keyring-backend", metavar="BACKEND",
                   help="read the keyring through this backend (what `connect --install` writes into a harness's helper command: "
                        "the one the token was stored in, whatever the harness's environment says)")

    p = sub.add_parser("doctor", help="check the home, config and brain, with a fix for each problem")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("reindex", help="embed the pages and facts that have no vector for the configured model yet")
    p.add_argument("--prune", action="store_true", help="also drop vectors no page uses and vectors of other models")
    p.add_argument("--json", action="store_true")

    from memverbs.cli.sync import add_parsers as add_sync_parsers  # noqa: PLC0415 - argparse only

    add_sync_parsers(sub)
    _ops_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"]:
        # The hook path is started by a harness on every session and heartbeat:
        # it skips argparse and every other command's imports.
        from memverbs.hooks.runner import run_hook  # noqa: PLC0415

        return run_hook(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "init":
            from memverbs.cli.init import run_init  # noqa: PLC0415

            return run_init(args)
        if args.command == "serve":
            from memverbs.cli.serve import run_serve  # noqa: PLC0415

            return run_serve(args)
        if args.command == "config":
            from memverbs.cli.config import run_config  # noqa: PLC0415

            return run_config(args)
        if args.command == "protocol":
            from memverbs.cli.protocol import run_protocol  # noqa: PLC0415

            return run_protocol(args)
        if args.command == "auth":
            from memverbs.cli.auth import run_auth  # noqa: PLC0415

            return run_auth(args)
        if args.command in ("connect", "disconnect"):
            from memverbs.cli.connect import run_connect, run_disconnect  # noqa: PLC0415

            return run_connect(args) if args.command == "connect" else run_disconnect(args)
        if args.command == "remote-header":
            from memverbs.cli.connect import run_remote_header  # noqa: PLC0415

            return run_remote_header(args)
        if args.command in ("install", "uninstall"):
            from memverbs.cli.install import run_install_cmd, run_uninstall_cmd  # noqa: PLC0415

            return run_install_cmd(args) if args.command == "install" else run_uninstall_cmd(args)
        if args.command == "reindex":
            from memverbs.cli.reindex import run_reindex  # noqa: PLC0415

            return run_reindex(args)
        if args.command == "doctor":
            from memverbs.cli.doctor import run_doctor  # noqa: PLC0415

            return run_doctor(args)
        if args.command in ("import", "export", "sync"):
            from memverbs.cli import sync  # noqa: PLC0415

            return {"import": sync.run_import, "export": sync.run_export, "sync": sync.run_sync}[args.command](args)
        from memverbs.cli.ops import run_op  # noqa: PLC0415

        return run_op(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`memverbs … | head`): stop quietly, as a Unix tool does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
