"""Where each harness keeps its session transcripts, for a capture given no file.

* Claude Code: `$CLAUDE_CONFIG_DIR/projects/*/<session id>.jsonl` (default `~/.claude`);
* Codex: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<session id>.jsonl` (default `~/.codex`);
* Grok Build: `$GROK_HOME/sessions/<url-encoded cwd>/<session id>/updates.jsonl` (default `~/.grok`).

* OpenClaw: one SQLite store per agent, `$OPENCLAW_STATE_DIR/agents/<agent>/agent/openclaw-agent.sqlite`
  (default `~/.openclaw`, `~/.openclaw-<profile>` under `OPENCLAW_PROFILE`), holding every session:
  found by session id for a hook;
* opencode: one SQLite store, `$XDG_DATA_HOME/opencode/opencode.db` (default `~/.local/share`),
  holding every session, found by session id.

`memverbs capture` with no path reads the three one-file-per-session stores above only.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from memverbs.server.capture.transcript import store_query

READABLE = ("claude", "codex", "grok")
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


def session_files(harness: str, since_epoch: float | None = None, env: Mapping[str, str] | None = None) -> Iterator[Path]:
    """The harness's transcripts, oldest first, modified at or after `since_epoch` when given."""
    root = store_root(harness, env)
    if root is None or not root.is_dir():
        return
    found = []
    for path in root.glob(PATTERNS[harness][0]):
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if since_epoch is None or mtime >= since_epoch:
            found.append((mtime, path))
    yield from (p for _, p in sorted(found))


def find_session(harness: str, session_id: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The transcript of one session (a hook payload without `transcript_path`)."""
    root = store_root(harness, env)
    if root is None or not root.is_dir() or not session_id or "/" in session_id or glob.has_magic(session_id):
        return None
    found = sorted(root.glob(PATTERNS[harness][1].format(id=session_id)))
    if harness in HOLDS:
        return next((db for db in found if store_query(str(db), HOLDS[harness], (session_id,))), None)
    return next(iter(found), None)
