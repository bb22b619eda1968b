"""`memverbs migrate --to URL`: copy this home's brain to another backend, with progress and a verify step.

The source (the configured brain) is only read. The copy can be interrupted and
resumed (`--resume`); it ends with a per-table check of row counts and content
hashes, and says what to set `brain.url` to once it passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memverbs.cli.output import fail, print_json
from memverbs.cli.reindex import Bar
from memverbs.server.brain.factory import locate, open_brain
from memverbs.server.errors import MemverbsError
from memverbs.server.runtime import Runtime

if TYPE_CHECKING:
    import argparse


def run_migrate(args: argparse.Namespace) -> int:
    runtime = Runtime()
    if runtime.config_error is not None:
        return fail(runtime.config_error.message, runtime.config_error.fix)
    source = target = None
    try:
        where_from = runtime.brain_location
        settings = runtime.settings
        assert settings is not None, "loaded: config_error was checked above"
        where_to = locate(args.to, runtime.home, settings.brain.path)
        if str(where_from) == str(where_to):
            return fail(f"the source and the target are the same brain ({where_to})", "Pass --to the brain to copy into.")
        if where_from.exists() is False:
            return fail(f"no brain at {where_from}", "Run `memverbs init` first: there is nothing to copy.")
        from memverbs.server.brain.transfer import transfer  # noqa: PLC0415

        source = open_brain(where_from, read_only=True, pool_size=1)
        target = open_brain(where_to, create=True, pool_size=2)
        report = transfer(source, target, resume=args.resume, progress=Bar())
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    finally:
        for brain in (source, target):
            if brain is not None:
                brain.close()
        runtime.close()
    if args.json:
        print_json({"from": str(where_from), "to": str(where_to), **report.as_dict()})
    else:
        for t in report.tables:
            mark = "✓" if t.ok else "✗"
            print(f"{mark} {t.table:<16} {t.source_rows:>9,} rows  {'hashes match' if t.ok else f'target has {t.target_rows:,}, hashes differ'}")
        if report.ok:
            print(f"copied and verified: {where_from} → {where_to}")
            print(f"to use it: memverbs config set brain.url '{where_to}'  (the source was not changed)")
    if not report.ok:
        return fail("the copy does not match the source", "Run the same command with --resume to finish it, then check again.")
    return 0
