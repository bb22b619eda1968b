"""`memverbs connect URL`, `memverbs disconnect` and `memverbs remote-header`: the arguments and
the output; the workflow is installers/connection.py.

connect reads the token from stdin or a hidden prompt (memverbs/cli/token_input.py; `--token`
too, with a warning), and checks the URL and the token against the server (`whoami`) before
anything is stored; `remote-header` is the helper harness registrations run for the token.
"""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

from memverbs.cli import token_input
from memverbs.cli.output import fail, print_json
from memverbs.remote.record import TOKEN_ENV, RemoteError, RemoteRecord, normalise_url
from memverbs.server.home import Home

if TYPE_CHECKING:
    import argparse


def _harness_list(args: argparse.Namespace) -> list[str] | None:
    """The harness ids --install names (None when --install was not given)."""
    raw = getattr(args, "install", None)
    if raw is None:
        return None
    items = raw if isinstance(raw, (list, tuple)) else raw.split(",")
    return [h.strip() for h in items if h and h.strip()]


def run_connect(args: argparse.Namespace) -> int:
    import anyio  # noqa: PLC0415

    from memverbs.installers import connection  # noqa: PLC0415 - only connect pays for the installers
    from memverbs.remote.probe import describe, probe  # noqa: PLC0415

    home = Home.from_env()
    try:
        url, warnings = normalise_url(args.url)
    except RemoteError as exc:
        return fail(exc.message, exc.fix, code=2)
    requested = _harness_list(args)
    if requested:
        try:
            requested = connection.check_harnesses(requested)
        except RemoteError as exc:
            return fail(exc.message, exc.fix, code=2)
    try:  # after the arguments are checked: nobody is asked for a token a typo would waste
        token = token_input.given(args.token)
        if token is None:
            token = token_input.asked(f"token for {url} (from `memverbs auth create` on the server; not echoed): ")
    except token_input.TokenInputError as exc:
        return fail(exc.message, exc.fix, code=2)
    if not token:
        return fail("no token given", "Pipe in the token `memverbs auth create` printed on the server "
                    "(`… | memverbs connect URL`), or run connect in a terminal to be asked for it.", code=2)
    for warning in warnings:
        print(f"memverbs: warning: {warning}", file=sys.stderr)
    try:
        report = anyio.run(probe, url, token)
        done = connection.connect(home, url, token, report, requested)
    except RemoteError as exc:
        return fail(exc.message, exc.fix)

    record, stored = done.record, done.stored
    token_lines = _token_lines(record)
    if args.json:
        print_json({**report, "token_store": record.token_store, "keyring_backend": record.keyring_backend,
                    "env_var": None if stored.ok else TOKEN_ENV, "keyring_problem": None if stored.ok else stored.reason,
                    "record": str(RemoteRecord.path(home)),
                    "harnesses": [{"harness": h, "token": line} for h, line in token_lines]})
        return 0
    print(f"connected: {describe(report)}")
    if stored.ok:
        print(f"token stored in the OS keyring ({stored.backend}), service 'memverbs', user {url}")
    else:
        print(
            f"memverbs: the token was NOT stored: {stored.reason}.\n"
            f"  Set it in the environment of each harness that uses this brain instead:\n"
            f"    export {TOKEN_ENV}={shlex.quote(token)}\n"
            "  (memverbs never writes a token in plaintext on its own; install a keyring backend and run "
            "`memverbs connect` again to store it there.)",
            file=sys.stderr,
        )
    for harness, line in token_lines:
        print(f"registered in {harness} as the 'memverbs' MCP server: {line}")
    for name in done.unregistered:
        print(f"unregistered from {name}")
    return 0


def _token_lines(record: RemoteRecord) -> list[tuple[str, str]]:
    if not record.harnesses:
        return []
    from memverbs.installers.connection import where_the_token_is  # noqa: PLC0415

    return [(h, where_the_token_is(h, record.token_store)) for h in record.harnesses]


def run_disconnect(args: argparse.Namespace) -> int:
    from memverbs.installers import connection  # noqa: PLC0415

    home = Home.from_env()
    try:
        done = connection.disconnect(home)
    except RemoteError as exc:
        return fail(exc.message, exc.fix)
    if done is None:
        if args.json:
            print_json({"disconnected": False, "reason": "not connected"})
        else:
            print("not connected to a remote brain: nothing to undo")
        return 0
    record = done.record
    if args.json:
        print_json({"disconnected": True, "url": record.url, "keyring_entry_removed": done.token_removed,
                    "harnesses": done.cleaned})
        return 0
    print(f"disconnected from {record.url}" + (" (token removed from the keyring)" if done.token_removed else ""))
    for name in done.cleaned:
        print(f"  unregistered from {name}")
    if record.token_store == "env":
        print(f"  the token was never stored here: unset {TOKEN_ENV} where you exported it.")
    return 0


def run_remote_header(args: argparse.Namespace) -> int:
    """`memverbs remote-header [URL] [--bare] [--keyring-backend B]`: what a harness's headers helper runs.

    Prints `{"Authorization": "Bearer <token>"}` (Claude Code's headersHelper and Codex's
    http_headers_helper both read a JSON object of headers), or with --bare the token
    alone, for `export MEMVERBS_REMOTE_TOKEN="$(memverbs remote-header --bare)"`. The
    token is $MEMVERBS_REMOTE_TOKEN when set, else the keyring's for the URL (default:
    the connected brain). Nothing but the header goes to stdout; a missing token exits 1."""
    import json  # noqa: PLC0415
    import os  # noqa: PLC0415 - the keyring backend goes in os.environ

    from memverbs.remote.credentials import token_for  # noqa: PLC0415
    from memverbs.server.brain.password import find_session_bus  # noqa: PLC0415 - one home: a brain password needs the bus too

    if args.url:
        try:
            url, _ = normalise_url(args.url)
        except RemoteError as exc:
            return fail(exc.message, exc.fix, code=2)
    else:
        try:
            record = RemoteRecord.load(Home.from_env())
        except RemoteError as exc:
            return fail(exc.message, exc.fix)
        if record is None:
            return fail("not connected to a remote brain", "Run `memverbs connect URL`, or pass the URL.")
        url = record.url
    find_session_bus()
    if args.keyring_backend:
        os.environ["PYTHON_KEYRING_BACKEND"] = args.keyring_backend  # keyring reads it when first used, below
    token = token_for(url)
    if not token:
        return fail(
            f"no token for {url}: not in the OS keyring and {TOKEN_ENV} is not set",
            f"Run `memverbs connect {url}` again, or export {TOKEN_ENV}.",
        )
    if args.bare:
        print(token)
    else:
        print(json.dumps({"Authorization": f"Bearer {token}"}))
    return 0
