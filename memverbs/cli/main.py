"""The `memverbs` command: routing, nothing heavy.

`memverbs hook` goes straight to the hook runner, before argparse. Every other command is parsed
by the argument tree (cli/parser.py) and handed to its runner, whose module is imported only when
chosen: `memverbs hook` must not pay for `serve`'s imports.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING

from memverbs.cli.completion import subcommands

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

# Each command's runner, imported only when that command runs (start-up stays light).
COMMANDS = {
    "init": "memverbs.cli.init:run_init",
    "serve": "memverbs.cli.serve:run_serve",
    "config": "memverbs.cli.config:run_config",
    "protocol": "memverbs.cli.protocol:run_protocol",
    "auth": "memverbs.cli.auth:run_auth",
    "people": "memverbs.cli.people:run_people",
    "connect": "memverbs.cli.connect:run_connect",
    "disconnect": "memverbs.cli.connect:run_disconnect",
    "remote-header": "memverbs.cli.connect:run_remote_header",
    "install": "memverbs.cli.install:run_install_cmd",
    "uninstall": "memverbs.cli.install:run_uninstall_cmd",
    "reindex": "memverbs.cli.reindex:run_reindex",
    "capture": "memverbs.cli.capture:run_capture",
    "migrate": "memverbs.cli.migrate:run_migrate",
    "brain-password": "memverbs.cli.brain_password:run_brain_password",
    **dict.fromkeys(("entities", "projects", "stats", "backlinks", "timeline", "history", "move-facts", "restore-fact",
                     "fact-visibility"), "memverbs.cli.browse:run_browse"),
    **dict.fromkeys(("page-history", "page-restore"), "memverbs.cli.page_history:run_page_history"),
    "ui": "memverbs.cli.ui:run_ui",
    "call": "memverbs.cli.browse:run_call",
    "doctor": "memverbs.cli.doctor:run_doctor",
    "docs": "memverbs.cli.docs:run_docs",
    "import": "memverbs.cli.sync:run_import",
    "export": "memverbs.cli.sync:run_export",
    "sync": "memverbs.cli.sync:run_sync",
}


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


def _parser_for(argv: list[str], build: Callable[..., argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """The tree with only the command `argv` names built (a tool's MCP name too); the whole tree when
    it names none, asks for the top-level help, or names no command (its error lists them all)."""
    for word in argv:
        if word in ("-h", "--help"):
            break
        if word.startswith("-"):
            continue
        name = word.replace("_", "-")
        parser = build(only=name)
        if name in subcommands(parser):
            return parser
        break
    return build()


def main(argv: list[str] | None = None) -> int:
    called_as_program = argv is None
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv[1:]):
        # The hook path is started by a harness on every session and heartbeat:
        # it skips argparse and every other command's imports.
        from memverbs.hooks.fastpath import process_started  # noqa: PLC0415
        from memverbs.hooks.runner import exit_now, run_hook  # noqa: PLC0415

        code = run_hook(argv[1:], process_started())  # the deadline counts from the process's start
        if called_as_program:
            exit_now(code)  # no interpreter teardown: it is on the harness's clock too
        return code
    from memverbs.cli.parser import build_parser  # noqa: PLC0415 - argparse's tree, not the hook's

    parser = _parser_for(argv, build_parser)
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
