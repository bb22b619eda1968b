"""Where each harness keeps its session transcripts, for a capture given no file.

* Claude Code: `$CLAUDE_CONFIG_DIR/projects/*/<session id>.jsonl` (default `~/.claude`);
* Codex: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<session id>.jsonl` (default `~/.codex`).

Grok Build, opencode and OpenClaw keep theirs elsewhere and in other shapes (docs/hooks.md,
"Capture"); `memverbs capture` reads only the two above for now.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

READABLE = ("claude", "codex")


def store_root(harness: str, env: Mapping[str, str] | None = None) -> Path | None:
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if harness == "claude":
        return Path(env["CLAUDE_CONFIG_DIR"]) / "projects" if env.get("CLAUDE_CONFIG_DIR") else home / ".claude" / "projects"
    if harness == "codex":
        return (Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex") / "sessions"
    return None


def session_files(harness: str, since_epoch: float | None = None, env: Mapping[str, str] | None = None) -> Iterator[Path]:
    """The harness's transcripts, oldest first, modified at or after `since_epoch` when given."""
    root = store_root(harness, env)
    if root is None or not root.is_dir():
        return
    pattern = "*/*.jsonl" if harness == "claude" else "*/*/*/rollout-*.jsonl"
    found = []
    for path in root.glob(pattern):
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
    if root is None or not root.is_dir() or not session_id or "/" in session_id:
        return None
    pattern = f"*/{session_id}.jsonl" if harness == "claude" else f"*/*/*/rollout-*{session_id}.jsonl"
    return next(iter(sorted(root.glob(pattern))), None)
