"""`memverbs auth test URL`: the smoke test of a remote brain (memverbs/remote/probe.py), said to a person."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from memverbs.cli import token_input
from memverbs.cli.output import fail, print_json
from memverbs.remote.credentials import token_for
from memverbs.remote.probe import describe, probe
from memverbs.remote.record import RemoteError, normalise_url

if TYPE_CHECKING:
    import argparse


def run_test(args: argparse.Namespace) -> int:
    """`memverbs auth test URL [--token -|T]`: the token given, else the one stored for the URL, else
    stdin's or a hidden prompt's (memverbs/cli/token_input.py)."""
    import anyio  # noqa: PLC0415

    try:
        url, warnings = normalise_url(args.url)
    except RemoteError as exc:
        return fail(exc.message, exc.fix, code=2)
    try:
        token = token_input.given(args.token)
        if token is None:
            token = token_for(url) or token_input.asked(f"token for {url} (not echoed): ")
    except token_input.TokenInputError as exc:
        return fail(exc.message, exc.fix, code=2)
    if not token:
        return fail("no token to test", "Pipe the token in, run this in a terminal to be asked for it, or "
                    "`memverbs connect` this URL first so its token is stored.", code=2)
    for warning in warnings:
        print(f"memverbs: warning: {warning}", file=sys.stderr)
    try:
        report = anyio.run(probe, url, token)
    except RemoteError as exc:
        if args.json:
            print_json({"url": url, "ok": False, "error": exc.message, "fix": exc.fix})
            return 1
        return fail(exc.message, exc.fix)
    if args.json:
        print_json(report)
    else:
        print(f"ok: {describe(report)}")
    return 0
