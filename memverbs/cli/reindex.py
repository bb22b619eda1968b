"""`memverbs reindex`: embed what has no vector for the configured model yet, with progress on stderr.

Safe to interrupt and to re-run: it only looks for what is missing, and what
it already stored stays. stdout gets the summary (or `--json`).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from memverbs.cli.output import fail, print_json
from memverbs.server.errors import BrainError, ProviderError
from memverbs.server.plural import plural
from memverbs.server.runtime import Runtime

if TYPE_CHECKING:
    import argparse
    from typing import TextIO


class Bar:
    """One progress line per stage: redrawn in place on a terminal, a few plain lines otherwise."""

    WIDTH = 28

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.stage: str | None = None
        self.started = time.monotonic()
        self.last_pct = -1

    def __call__(self, stage: str, done: int, total: int) -> None:
        if total == 0:
            return
        if stage != self.stage:
            self.stage, self.started, self.last_pct = stage, time.monotonic(), -1
        pct = 100 * done // total
        filled = self.WIDTH * done // total
        line = f"  {stage:<17} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done:>9,}/{total:,} {pct:3d}% {time.monotonic() - self.started:6.1f}s"
        if self.tty:
            print("\r" + line, end="\n" if done >= total else "", file=self.stream, flush=True)
        elif pct // 25 != self.last_pct // 25 or done >= total:
            print(line, file=self.stream, flush=True)
        self.last_pct = pct


def run_reindex(args: argparse.Namespace) -> int:
    runtime = Runtime()
    try:
        if runtime.config_error is not None:
            return fail(runtime.config_error.message, runtime.config_error.fix)
        embedder = runtime.providers.embedder()
        if embedder is None:
            from memverbs.server.providers import extra  # noqa: PLC0415

            return fail(
                f"nothing to embed with: {runtime.providers.embedder_problem}",
                extra.fix(runtime.settings.embeddings.provider if runtime.settings else "") if extra.missing() else
                "Configure an embedding provider (memverbs config set embeddings.model …; key in "
                "MEMVERBS_EMBEDDINGS_API_KEY), see `memverbs docs configuration`; `memverbs doctor` checks it.",
            )
        from memverbs.server.reindex import reindex  # noqa: PLC0415 - numpy and httpx only here

        try:
            brain = runtime.brain()
            report = reindex(brain, embedder, progress=Bar(), prune=args.prune)
        except BrainError as exc:
            return fail(exc.message, exc.fix)
        except ProviderError as exc:
            return fail(
                f"reindex stopped: {exc.message} (everything embedded before this is kept)",
                f"{exc.fix} Then run `memverbs reindex` again to continue.",
            )
    finally:
        runtime.close()
    if args.json:
        print_json(report.as_dict())
    else:
        dims = f", {report.dims} dims" if report.dims else ""
        print(
            f"embedded {plural(report.chunks_embedded, 'chunk')} and {plural(report.facts_embedded, 'fact')} with "
            f"{report.provider}/{report.model}{dims}; chunked {plural(report.pages_chunked, 'page')}"
        )
        if report.pruned:
            print(
                f"pruned {plural(report.pruned['orphan_vectors'], 'unused vector')} and "
                f"{plural(report.pruned['other_model_vectors'], 'vector')} of other models"
            )
    return 0
