"""Where each harness keeps its session transcripts, for a capture given no file.

* Claude Code: `$CLAUDE_CONFIG_DIR/projects/*/<session id>.jsonl` (default `~/.claude`);
* Codex: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<session id>.jsonl` (default `~/.codex`);
* Grok Build: `$GROK_HOME/sessions/<url-encoded cwd>/<session id>/updates.jsonl` (default `~/.grok`).

* OpenClaw: one SQLite store per agent, `$OPENCLAW_STATE_DIR/agents/<agent>/agent/openclaw-agent.sqlite`
  (default `~/.openclaw`, `~/.openclaw-<profile>` under `OPENCLAW_PROFILE`), holding every session:
  found by session id for a hook;
* opencode: one SQLite store, `$XDG_DATA_HOME/opencode/opencode.db` (default `~/.local/share`),
  holding every session, found by session id.

`memverbs capture` with no path reads all five: every file of the first three, and every session of the
two SQLite stores (`sessions`), each a `(store, session id)` pair read by transcript.py's reader.
An opencode subagent's session (`parent_id` set) is left out: its "user" is the agent that
delegated to it, not the person.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from memverbs.server.capture.transcript import is_sqlite, store_query

READABLE = ("claude", "codex", "grok", "openclaw", "opencode")
# Each store's transcripts, and one session's (`{id}`), below its root.
PATTERNS = {
    "claude": ("*/*.jsonl", "*/{id}.jsonl"),
    "codex": ("*/*/*/rollout-*.jsonl", "*/*/*/rollout-*{id}.jsonl"),
    "grok": ("*/*/updates.jsonl", "*/{id}/updates.jsonl"),
    "openclaw": ("*/agent/openclaw-agent.sqlite", "*/agent/openclaw-agent.sqlite"),  # every session in one file
    "opencode": ("opencode.db", "opencode.db"),
}
# How a store that holds many sessions says it holds this one.
HOLDS = {
    "openclaw": "SELECT 1 FROM transcript_events WHERE session_id = ? LIMIT 1",
    "opencode": "SELECT 1 FROM session WHERE id = ?",
}
# A session the store says a subagent ran (its "user" is the agent that delegated to it): never captured.
SUBAGENT = {
    "opencode": "SELECT 1 FROM session WHERE id = ? AND parent_id IS NOT NULL",
}
# Every session such a store holds, with its last activity (epoch ms).
LISTS = {
    "openclaw": "SELECT session_id, MAX(created_at) FROM transcript_events GROUP BY session_id ORDER BY 2, 1",
    "opencode": "SELECT id, time_updated FROM session WHERE parent_id IS NULL ORDER BY time_updated, id",
}
# What changes when one of its sessions gains or updates an event: the session's own stamp, so a
# store another session wrote to does not make this one look changed.
SIGNATURES = {
    "openclaw": "SELECT COUNT(*), MAX(seq), MAX(created_at) FROM transcript_events WHERE session_id = ?",
    "opencode": "SELECT COUNT(*), MAX(time_updated) FROM part WHERE session_id = ?",
}


def store_root(harness: str, env: Mapping[str, str] | None = None) -> Path | None:
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if harness == "claude":
        return Path(env["CLAUDE_CONFIG_DIR"]) / "projects" if env.get("CLAUDE_CONFIG_DIR") else home / ".claude" / "projects"
    if harness == "codex":
        return (Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex") / "sessions"
    if harness == "grok":
        return (Path(env["GROK_HOME"]).expanduser() if env.get("GROK_HOME") else home / ".grok") / "sessions"
    if harness == "openclaw":
        if env.get("OPENCLAW_STATE_DIR"):
            return Path(env["OPENCLAW_STATE_DIR"]).expanduser() / "agents"
        profile = env.get("OPENCLAW_PROFILE", "").strip()
        base = Path(env["OPENCLAW_HOME"]).expanduser() if env.get("OPENCLAW_HOME") else home
        return base / (f".openclaw-{profile}" if profile and profile != "default" else ".openclaw") / "agents"
    if harness == "opencode":
        return (Path(env["XDG_DATA_HOME"]).expanduser() if env.get("XDG_DATA_HOME") else home / ".local" / "share") / "opencode"
    return None


def sessions(harness: str, since_epoch: float | None = None, env: Mapping[str, str] | None = None) -> Iterator[tuple[Path, str | None]]:
    """The harness's sessions, oldest first, changed at or after `since_epoch` when given: `(file, None)`
    for a one-file-per-session store, `(store, session id)` for a SQLite one."""
    root = store_root(harness, env)
    if root is None or not root.is_dir():
        return
    found: list[tuple[float, Path, str | None]] = []
    for path in root.glob(PATTERNS[harness][0]):
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if harness in LISTS:
            found += [(changed, path, sid) for sid, changed in store_sessions(harness, path, since_epoch)]
        elif since_epoch is None or mtime >= since_epoch:
            found.append((mtime, path, None))
    yield from ((p, sid) for _, p, sid in sorted(found, key=lambda f: f[0]))


def store_sessions(harness: str, store: Path, since_epoch: float | None = None) -> list[tuple[str, float]]:
    """The sessions one SQLite store holds, `(id, last activity in epoch seconds)`, oldest first."""
    rows = store_query(str(store), LISTS[harness]) if harness in LISTS else []
    out = [(sid, changed / 1000 if isinstance(changed, int | float) else 0.0) for sid, changed in rows if isinstance(sid, str) and sid]
    return [(sid, changed) for sid, changed in out if since_epoch is None or changed >= since_epoch]


def is_subagent(harness: str, store: str, session_id: str) -> bool:
    return harness in SUBAGENT and is_sqlite(store) and bool(store_query(store, SUBAGENT[harness], (session_id,)))


def session_signature(harness: str, store: str, session_id: str) -> list | None:
    """One session's stamp inside a SQLite store, or None when `store` is not one (OpenClaw's
    `sessionFile`, a copied JSONL) or cannot be read."""
    if harness not in SIGNATURES or not is_sqlite(store):
        return None
    rows = store_query(store, SIGNATURES[harness], (session_id,))
    return ["session", *rows[0]] if rows else None


def find_session(harness: str, session_id: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The transcript of one session (a hook payload without `transcript_path`)."""
    root = store_root(harness, env)
    if root is None or not root.is_dir() or not session_id or "/" in session_id or glob.has_magic(session_id):
        return None
    found = sorted(root.glob(PATTERNS[harness][1].format(id=session_id)))
    if harness in HOLDS:
        return next((db for db in found if store_query(str(db), HOLDS[harness], (session_id,))), None)
    return next(iter(found), None)
