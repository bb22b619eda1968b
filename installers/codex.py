"""Codex CLI: a marked block in config.toml, hooks in hooks.json, and the hooks' trust.

* Server: `[mcp_servers.memverbs]` written surgically. `codex mcp add/remove`
  re-serialise every server table (dropping the user's comments, rewriting
  numbers, chmod 0600), so memverbs does not use them.
* Start-up: `required = true` would make every Codex session fail whenever
  memverbs cannot start; the top-level `mcp_optional_startup_grace_ms` makes the
  first request wait for the tools instead, and never breaks a session.
* Hooks: Claude's format in `$CODEX_HOME/hooks.json`, our groups appended at the
  end (trust keys hold array positions: inserting earlier would untrust the
  user's other hooks). Codex skips untrusted hooks silently, so the install
  records trust the way its own `/hooks` does: `[hooks.state."<file>:<event>:<group>:<handler>"]
  trusted_hash = "sha256:…"`, the hash being sha256 of the handler's normalised
  identity as compact, key-sorted JSON.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from memverbs.installers.base import (
    HOOK_TIMEOUT_S,
    SERVER_NAME,
    Options,
    hook_command,
    is_our_hook,
    server_argv,
    server_env,
)
from memverbs.installers.jsonc import JsonDoc
from memverbs.installers.steps import Context, JsonArrayItem, TomlBlock

STARTUP_GRACE_MS = 5_000
EVENTS = {
    # Claude-format event → (Codex's snake name in trust keys, matcher, our moment)
    "SessionStart": ("session_start", "startup|resume|clear|compact", "session-start"),
    "UserPromptSubmit": ("user_prompt_submit", None, "heartbeat"),
}
MATCHER_EVENTS = {"session_start", "pre_tool_use", "post_tool_use", "pre_compact", "post_compact"}


def codex_home(opts: Options) -> Path:
    raw = opts.env.get("CODEX_HOME", "").strip()
    return Path(raw) if raw else opts.user_home / ".codex"


def hook_group(opts: Options, event: str) -> dict:
    _, matcher, moment = EVENTS[event]
    group: dict = {"matcher": matcher} if matcher else {}
    group["hooks"] = [{"type": "command", "command": hook_command(opts, moment), "timeout": HOOK_TIMEOUT_S}]
    return group


def trusted_hash(snake_event: str, matcher: str | None, handler: dict) -> str:
    """Codex's hook identity hash (what its `/hooks` trust records)."""
    normalized = {
        "type": handler.get("type", "command"),
        "command": handler["command"],
        "timeout": handler.get("timeout", 600),
        "async": bool(handler.get("async", False)),
    }
    for key in ("statusMessage", "additionalContextLimit"):
        if handler.get(key) is not None:
            normalized[key] = handler[key]
    identity: dict = {"event_name": snake_event, "hooks": [normalized]}
    if matcher is not None and snake_event in MATCHER_EVENTS:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def trust_entries(hooks_file: Path, text: str | None) -> dict:
    """Trust records for our groups, wherever hooks.json now has them."""
    doc = JsonDoc(text or "")
    state = {}
    for event, (snake, _, _) in EVENTS.items():
        for g, group in enumerate(doc.get(["hooks", event], []) or []):
            if not is_our_hook(group):
                continue
            for h, handler in enumerate(group["hooks"]):
                key = f"{hooks_file.resolve()}:{snake}:{g}:{h}"
                state[key] = {"trusted_hash": trusted_hash(snake, group.get("matcher"), handler)}
    return state


def plan(opts: Options, codex: str = "codex") -> tuple[list, list[str]]:
    home = codex_home(opts)
    config, hooks_file = home / "config.toml", home / "hooks.json"
    argv = server_argv(opts)
    server: dict = {"command": argv[0], "args": argv[1:], "startup_timeout_sec": 30}
    env = server_env(opts)
    if env:
        server["env"] = env
    steps: list = []
    notes: list[str] = []
    if opts.hooks:
        for event in EVENTS:
            steps.append(JsonArrayItem(hooks_file, ["hooks", event], hook_group(opts, event), is_our_hook))

    def block(ctx: Context) -> dict:
        data: dict = {"mcp_servers": {SERVER_NAME: server}}
        if opts.hooks:
            data["hooks"] = {"state": trust_entries(hooks_file, ctx.read(hooks_file))}
        return data

    def conflicts(outside: dict) -> str | None:
        if SERVER_NAME in (outside.get("mcp_servers") or {}):
            return f"[mcp_servers.{SERVER_NAME}] is already defined outside the memverbs block"
        return None

    steps.append(TomlBlock(config, block, conflicts, top={"mcp_optional_startup_grace_ms": STARTUP_GRACE_MS}))
    if opts.hooks:
        notes.append("Codex hooks are trusted in config.toml ([hooks.state]); `memverbs doctor` re-checks the hashes.")
    return steps, notes
