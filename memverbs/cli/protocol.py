"""`memverbs protocol`: the spec (`--json`), `conformance` against any endpoint, and usage `stats`."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.cli.output import fail, print_json
from memverbs.server.errors import MemverbsError
from memverbs.server.home import Home

if TYPE_CHECKING:
    import argparse


def run_protocol(args: argparse.Namespace) -> int:
    if args.protocol_command == "conformance":
        return _conformance(args)
    if args.protocol_command == "stats":
        return _stats(args)
    from memverbs.server.protocol.spec import spec_document, spec_summary  # noqa: PLC0415

    if args.json:
        print_json(spec_document())
    else:
        print(spec_summary())
    return 0


def _token(flag: str | None, target: str | None) -> str | None:
    """The bearer token for the target: `--token -` (stdin) or `--token T` (with the warning), else for
    an http(s) URL the one stored for it (`memverbs connect`, or $MEMVERBS_REMOTE_TOKEN), else none:
    a token is optional here (a stdio target has none), so nobody is asked for one."""
    from memverbs.cli import token_input  # noqa: PLC0415

    token = token_input.given(flag)
    if token is not None or not target or not target.startswith(("http://", "https://")):
        return token or None
    from memverbs.remote.credentials import token_for  # noqa: PLC0415
    from memverbs.remote.record import RemoteError, normalise_url  # noqa: PLC0415

    try:
        url, _ = normalise_url(target)
    except RemoteError:
        return None  # the connection reports what is wrong with the URL
    return token_for(url)


def _conformance(args: argparse.Namespace) -> int:
    import anyio  # noqa: PLC0415 - only this subcommand needs the MCP client stack

    from memverbs.server.conformance.connect import connect, describe  # noqa: PLC0415
    from memverbs.server.conformance.runner import render_text, run, writes_summary  # noqa: PLC0415

    # The run writes (a page, facts, a forget). By default it runs against a throwaway brain, so
    # nothing lands in the user's; their own brain is certified only when they name it.
    target = args.target
    scratch = None
    env = {**os.environ, "MEMVERBS_USAGE_LOG": "off"}  # never counted as the user's calls
    if target is None:
        scratch = tempfile.TemporaryDirectory(prefix="memverbs-conformance-")
        try:
            _init_scratch(Path(scratch.name))
        except MemverbsError as exc:
            scratch.cleanup()
            return fail(f"cannot create a throwaway brain: {exc.message}", exc.fix)
        env["MEMVERBS_HOME"] = scratch.name
        shown = "self (stdio, a throwaway brain)"
    else:
        if target == SELF:
            target = None
        shown = describe(target) if target else f"self (stdio, your brain in {Home.from_env().root})"
        print(f"memverbs: certifying {shown}: {writes_summary()}", file=sys.stderr)

    try:
        token = _token(args.token, target)
    except MemverbsError as exc:
        if scratch is not None:
            scratch.cleanup()
        return fail(exc.message, exc.fix, code=2)

    async def main() -> dict:
        async with connect(target, token, env=env) as endpoint:
            return await run(endpoint.list_tools, endpoint.call_tool, synthesize=args.synthesize)

    try:
        report = anyio.run(main)
    except Exception as exc:  # noqa: BLE001 - any connection failure is reported, never a traceback
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return fail(
            f"could not talk MCP to {shown} ({detail})",
            "Check the target: a URL must be the server's MCP endpoint (…/mcp) and a command must start an MCP "
            "stdio server; for a server that needs a token, pipe it in with --token - (or `memverbs connect` it first).",
        )
    finally:
        if scratch is not None:
            scratch.cleanup()
    if args.json:
        print_json(report)
    else:
        print(render_text(report, shown))
    return 0 if report["ok"] else 1


SELF = "self"


def _init_scratch(root: Path) -> None:
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    runtime = Runtime(Home(root))
    try:
        runtime.create_brain()
    finally:
        runtime.close()


def _stats(args: argparse.Namespace) -> int:
    from memverbs.server.errors import ConfigError  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.settings import load_settings  # noqa: PLC0415
    from memverbs.server.usage import stats, stats_text  # noqa: PLC0415

    home = Home.from_env()
    try:
        installed_at = load_settings(home).protocol_installed_at
    except ConfigError:
        installed_at = None
    days = int(args.days) if args.days and args.days.isdigit() and int(args.days) > 0 else 30
    report = stats(home.usage_log, days=days, installed_at=installed_at)
    if args.json:
        print_json(report)
    else:
        print(stats_text(report))
    return 0
