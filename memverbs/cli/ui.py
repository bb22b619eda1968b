"""`memverbs ui`: serve the local brain inspector and open it in the browser."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.cli.output import fail
from memverbs.server.errors import MemverbsError

if TYPE_CHECKING:
    import argparse


def run_ui(args: argparse.Namespace) -> int:
    from memverbs.cli.target import refuse_remote  # noqa: PLC0415

    refused = refuse_remote(args, "reads the brain directly and works on the local brain only")
    if refused is not None:
        return refused
    from memverbs.ui.server import serve  # noqa: PLC0415

    try:
        return serve(args.host, args.port, allow_remote=args.allow_non_loopback, open_browser=not args.no_open)
    except MemverbsError as exc:
        return fail(exc.message, getattr(exc, "fix", None))
    except OSError as exc:
        return fail(f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc})",
                    "Pick another --port (0 picks a free one), or stop what holds this one.")
