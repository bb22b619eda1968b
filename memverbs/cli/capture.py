"""`memverbs capture [PATH…]`: backfill sessions from transcripts, or show what capture would keep.

With no path, every harness's own session store (server/capture/stores.py): each transcript file
of Claude Code, Codex and Grok Build, and each session inside opencode's and OpenClaw's SQLite
stores. A path may name a transcript or such a store.

The same engine as the hooks' detached worker (server/capture/): each transcript becomes a
private session page and the facts the user stated, written through the dispatcher as the
trusted local caller. Idempotent: a transcript unchanged since its last capture is skipped, and
a fact already known is remember's `duplicate`. Results on stdout, progress on stderr.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memverbs.cli.output import fail, print_json
from memverbs.server.errors import BrainError
from memverbs.server.runtime import Runtime

if TYPE_CHECKING:
    import argparse

    from memverbs.server.capture.plan import Plan, Result
    from memverbs.server.capture.reports import Names

PROGRESS_AFTER_S = 2.0  # a run shorter than this prints no progress


def run_capture(args: argparse.Namespace) -> int:
    from memverbs.server.capture.engine import capture_session, plan_capture  # noqa: PLC0415
    from memverbs.server.capture.plan import CaptureOptions  # noqa: PLC0415
    from memverbs.server.capture.reading import read_transcript  # noqa: PLC0415
    from memverbs.server.capture.state import SessionState  # noqa: PLC0415
    from memverbs.server.capture.stores import READABLE, sessions  # noqa: PLC0415

    runtime = Runtime()
    try:
        if runtime.config_error is not None:
            return fail(runtime.config_error.message, runtime.config_error.fix)
        settings = runtime.settings
        assert settings is not None
        if not settings.capture.enabled and not args.dry_run:
            return fail("capture is off (capture.enabled = false)",
                        "Turn it on with `memverbs config set capture.enabled true`, or use --dry-run to look.")
        since = _epoch(args.since) if args.since else None
        if args.paths:
            missing = [p for p in args.paths if not Path(p).is_file()]
            if missing:
                return fail(f"no such transcript: {', '.join(missing)}",
                            "Give the path of a session's .jsonl file, or of a harness's SQLite store (opencode.db, openclaw-agent.sqlite).")
            files = [item for p in args.paths for item in _given(Path(p), args.harness, since)]
        else:
            harnesses = [args.harness] if args.harness else list(READABLE)
            files = [(p, h, sid) for h in harnesses for p, sid in sessions(h, since)]
        options = CaptureOptions.from_settings(settings)
        names = _names(runtime) if args.dry_run else None
        out: list[dict] = []
        started = time.monotonic()
        for n, (path, harness, sid) in enumerate(files, 1):
            if time.monotonic() - started > PROGRESS_AFTER_S:
                print(f"capture: {n}/{len(files)} {path.name}{' ' + sid if sid else ''}", file=sys.stderr, flush=True)
            # A session in a SQLite store is known by its id before its rows are read, and skipped unread
            # when unchanged; a file's session is told from the file.
            who = _who(path, harness) if sid is None else (str(harness), str(sid))
            state = SessionState(str(runtime.home.root), *who)
            if not args.dry_run and state.unchanged(str(path)):
                out.append({"path": str(path), "harness": who[0], "session_id": who[1], "status": "unchanged"})
                continue
            if args.dry_run:  # the LLM pass calls a model: a dry run shows what the rules keep, and says it would ask
                transcript = read_transcript(path, harness, session_id=sid)
                plan = plan_capture(transcript, options, names=names)
                out.append(_describe(plan, None, path, True, would_ask=options.llm and runtime.providers.llm_configured))
                continue
            with state.locked():
                plan, result = capture_session(runtime, state, str(path), harness, sid, options)
            out.append(_describe(plan, result, path, False))
    except BrainError as exc:
        return fail(exc.message, exc.fix)
    finally:
        runtime.close()
    if args.json:
        print_json({"sessions": out, "dry_run": bool(args.dry_run)})
    else:
        _print(out, bool(args.dry_run))
    return 0


def _names(runtime: Runtime) -> Names | None:
    """The brain's name index for a dry run, which may look before any brain exists (then nothing is
    filed under an entity, and nothing is said about others)."""
    from memverbs.server.capture.naming import brain_names  # noqa: PLC0415

    try:
        return brain_names(runtime)
    except BrainError:
        return None


def _who(path: Path, harness: str | None) -> tuple[str, str]:
    """A transcript file's harness and session id: a Codex or Claude Code file names its session in its
    first entries, read up to the first event."""
    from memverbs.server.capture.reading import open_transcript  # noqa: PLC0415

    transcript = open_transcript(path, harness)
    next(iter(transcript.stream()), None)
    return transcript.harness, transcript.session_id


def _given(path: Path, harness: str | None, since: float | None) -> list[tuple[Path, str | None, str | None]]:
    """A file named on the command line: one transcript, or every session of a harness's SQLite store."""
    from memverbs.server.capture.reading import sniff  # noqa: PLC0415
    from memverbs.server.capture.stores import LISTS, store_sessions  # noqa: PLC0415
    from memverbs.server.capture.transcript import is_sqlite  # noqa: PLC0415

    if not is_sqlite(str(path)):
        return [(path, harness, None)]
    store = harness if harness in LISTS else sniff(str(path))
    return [(path, store, sid) for sid, _ in store_sessions(store, path, since)]


def _describe(plan: Plan, result: Result | None, path: Path, dry_run: bool, would_ask: bool = False) -> dict:
    body: dict = {
        "path": str(path),
        "harness": plan.harness,
        "session_id": plan.session_id,
        "status": plan.skipped or ("would_capture" if dry_run else "captured"),
        "entity": plan.entity,
        "page": plan.page_slug,
        "facts": [{"fact": f.text, "kind": f.kind, "entity": f.entity or plan.entity,
                   **({"proposed_by": f.proposed_by} if f.proposed_by else {})} for f in plan.facts],
        "facts_over_cap": plan.dropped,
    }
    if plan.llm is not None:
        body["llm"] = {"code": plan.llm.code, "proposed": plan.llm.proposed, "kept": plan.llm.kept, **plan.llm.spent.as_json()}
    elif would_ask and not plan.skipped:
        body["llm"] = {"code": "would_ask"}
    if dry_run and plan.page_slug:
        body["page_markdown"] = plan.page_markdown
    if result is not None:
        body["page_status"] = result.page
        body["fact_statuses"] = result.facts
    return body


def _print(sessions: list[dict], dry_run: bool) -> None:
    if not sessions:
        print("no transcripts found")
        return
    for s in sessions:
        head = f"{s.get('harness', '')} {s['session_id']}: {s['status']}".strip()
        print(head)
        if s["status"] in ("unchanged", "excluded_project", "empty"):
            continue
        if s.get("page"):
            extra = f" ({s['page_status']})" if s.get("page_status") else ""
            print(f"  page {s['page']}{extra}")
        for f in s["facts"]:
            by = f"  (proposed by {f['proposed_by']})" if f.get("proposed_by") else ""
            print(f"  {f['kind']}: {f['fact']}  [{f['entity']}]{by}")
        if s.get("llm"):
            llm = s["llm"]
            print(f"  LLM pass: {llm['code']}" + (f", {llm['kept']} of {llm['proposed']} proposed kept, session total "
                                                 f"{llm['tokens']} tokens, ${llm['usd']:.4f}" if "tokens" in llm else ""))
        if s.get("fact_statuses"):
            print("  facts: " + ", ".join(f"{n} {k}" for k, n in sorted(s["fact_statuses"].items())))
        if s.get("facts_over_cap"):
            print(f"  ({s['facts_over_cap']} more over capture.max_facts)")
        if dry_run and s.get("page_markdown"):
            print("  ---")
            print("\n".join("  " + line for line in s["page_markdown"].splitlines()))


def _epoch(iso_text: str) -> float:
    return datetime.fromisoformat(iso_text.replace("Z", "+00:00")).timestamp()
