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

from memverbs.server.timeparse import iso, now_ms, parse_instant

ROTATE_BYTES = 10 * 1024 * 1024
_OFF = {"off", "0", "false", "no"}


def disabled() -> bool:
    """MEMVERBS_USAGE_LOG=off: this process logs no calls (conformance runs set it for the servers they start)."""
    return os.environ.get("MEMVERBS_USAGE_LOG", "").strip().lower() in _OFF


def record(path: Path, *, brain_id: str, verb: str, surface: str, remote: bool, ok: bool, latency_ms: int,
           source_id: str, result: dict | None, client_id: str | None = None,
           waited: dict[str, int] | None = None) -> None:
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
    if client_id is not None:
        # Additive (not in the reference's line): which token made a remote HTTP call.
        event["client_id"] = client_id
    if waited:
        # Additive: what a call on a Postgres brain waited for (server/brain/waits.py), for doctor.
        event.update(waited)
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


def stats(path: Path, *, days: int, installed_at: str | None, now: int | None = None) -> dict:
    """`protocol stats`: per-verb counts over the window, and time-to-hello-world over all time."""
    now = now if now is not None else now_ms()
    events = read_events(path)
    horizon = now - days * 86_400_000
    window = [e for e in events if (parse_instant(e["ts"]) or 0) >= horizon]
    by_verb: dict[str, dict] = {}
    for e in window:
        v = by_verb.setdefault(e["verb"], {"calls": 0, "errors": 0, "_latency": 0, "budget_dropped_total": 0})
        v["calls"] += 1
        v["errors"] += e.get("ok") is False
        v["_latency"] += e["latency_ms"] if isinstance(e.get("latency_ms"), (int, float)) else 0
        v["budget_dropped_total"] += e["budget_dropped"] if isinstance(e.get("budget_dropped"), int) else 0
        if e["verb"] == "entity" and isinstance(e.get("entity_found"), bool):
            key = "found" if e["entity_found"] else "miss"
            v[key] = v.get(key, 0) + 1
    for verb, v in by_verb.items():
        v["avg_latency_ms"] = round(v.pop("_latency") / v["calls"])
        ordered = {k: v[k] for k in ("calls", "errors", "avg_latency_ms", "budget_dropped_total")}
        if verb == "entity":
            ordered["found"], ordered["miss"] = v.get("found", 0), v.get("miss", 0)
        by_verb[verb] = ordered
    first = min((e["ts"] for e in events), default=None)
    tthw = None
    if first and installed_at:
        start, end = parse_instant(installed_at), parse_instant(first)
        if start is not None and end is not None and end >= start:
            tthw = duration_text((end - start) // 1000)
    return {
        "days": days,
        "total_calls": len(window),
        "by_verb": by_verb,
        "tthw_install_to_first_verb": tthw,
        "installed_at": installed_at,
        "first_verb_call": first,
        "sidecar": str(path),
        "privacy": "local JSONL only — never uploaded",
    }


def duration_text(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        m, s = divmod(seconds, 60)
        return f"{m}m{s}s" if s else f"{m}m"
    if seconds < 48 * 3600:
        h, rest = divmod(seconds, 3600)
        m = rest // 60
        return f"{h}h{m}m" if m else f"{h}h"
    return f"{seconds // 86400}d"


def stats_text(report: dict) -> str:
    lines = [f"MEMORY_VERBS usage, last {report['days']} days: {report['total_calls']} calls"]
    for verb, v in sorted(report["by_verb"].items(), key=lambda kv: -kv[1]["calls"]):
        hit = ""
        if verb == "entity":
            seen = v["found"] + v["miss"]
            hit = f", hit {v['found']}/{seen}"
        lines.append(
            f"{verb:<11} {v['calls']:<5} calls  avg {v['avg_latency_ms']}ms  "
            f"({v['errors']} errors, {v['budget_dropped_total']} budget-dropped{hit})"
        )
    tthw = report["tthw_install_to_first_verb"]
    lines.append(f"time to hello world (init → first verb call): {tthw or 'n/a'}")
    lines.append(f"sidecar: {report['sidecar']} ({report['privacy']})")
    return "\n".join(lines)
