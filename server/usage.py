"""The local usage log: one JSON line per MCP verb call, never uploaded.

Written by MCP dispatch only (CLI calls are not logged). Append-only with
O_APPEND, so concurrent servers interleave whole lines; past 10 MiB the file is
rotated to usage.jsonl.1 without a lock (losing a line there is acceptable:
these are statistics). A failure to log never fails the call.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memverbs.server.timeparse import iso, now_ms

ROTATE_BYTES = 10 * 1024 * 1024


def record(path: Path, *, brain_id: str, verb: str, surface: str, remote: bool, ok: bool, latency_ms: int,
           source_id: str, result: dict | None) -> None:
    event: dict = {
        "ts": iso(now_ms()),
        "brain_id": brain_id,
        "verb": verb,
        "surface": surface,
        "remote": remote,
        "ok": ok,
        "latency_ms": latency_ms,
        "source_id": source_id,
    }
    if ok and result is not None:
        if isinstance(result.get("dropped_count"), int):
            event["budget_dropped"] = result["dropped_count"]
        if verb == "entity" and isinstance(result.get("found"), bool):
            event["entity_found"] = result["found"]
    line = (json.dumps(event, ensure_ascii=False) + "\n").encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if path.stat().st_size > ROTATE_BYTES:
                os.replace(path, path.with_name(path.name + ".1"))
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass


def read_events(path: Path) -> list[dict]:
    """Every well-formed event; malformed lines and lines without a string verb/ts are skipped."""
    out: list[dict] = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return out
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("verb"), str) and isinstance(event.get("ts"), str):
            out.append(event)
    return out
