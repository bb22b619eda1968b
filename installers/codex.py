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

from memverbs.hooks.adapters import CodexAdapter
from memverbs.installers import toml_block
from memverbs.installers.base import (
    HOOK_TIMEOUT_S,
    REMOTE_STARTUP_TIMEOUT_S,
    SERVER_NAME,
    Options,
    helper_command,
    hook_command,
    is_our_hook,
    launcher_step,
    remote_toml_conflicts,
    server_argv,
    server_env,
    token_from_env,
    token_from_helper,
)
from memverbs.installers.files import read_text
from memverbs.installers.json_steps import JsonArrayItem
from memverbs.installers.jsonc import JsonDoc, JsonEditError
from memverbs.installers.spec import HarnessSpec, Problem
from memverbs.installers.steps import Context, Step
from memverbs.installers.text_steps import TomlBlock
from memverbs.remote.record import TOKEN_ENV, RemoteRecord

STARTUP_GRACE_MS = 5_000
# The events the install wires (Claude's names; their moments are the adapter's), each one's
# snake-case name in Codex's trust keys, and its matcher.
EVENTS = CodexAdapter.wired
SNAKE = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "SessionEnd": "session_end",
         "Stop": "stop", "PreCompact": "pre_compact"}
MATCHERS = {"SessionStart": "startup|resume|clear|compact"}
# Codex caps a SessionEnd hook's timeout at 3 s and hashes the capped value into its trust (a
# larger one reads as "modified", and the hook is skipped): say 3 s ourselves. Capture's hook
# returns in milliseconds.
TIMEOUTS = {"SessionEnd": 3}
MATCHER_EVENTS = {"session_start", "pre_tool_use", "post_tool_use", "pre_compact", "post_compact"}


def codex_home(opts: Options) -> Path:
    raw = opts.env.get("CODEX_HOME", "").strip()
    return Path(raw) if raw else opts.user_home / ".codex"


def hook_group(opts: Options, event: str) -> dict:
    group: dict = {"matcher": MATCHERS[event]} if event in MATCHERS else {}
    group["hooks"] = [{"type": "command", "command": hook_command(opts, EVENTS[event]),
                       "timeout": TIMEOUTS.get(event, HOOK_TIMEOUT_S)}]
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
    for event, snake in SNAKE.items():
        for g, group in enumerate(doc.get(["hooks", event], []) or []):
            if not is_our_hook(group):
                continue
            for h, handler in enumerate(group["hooks"]):
                key = f"{hooks_file.resolve()}:{snake}:{g}:{h}"
                state[key] = {"trusted_hash": trusted_hash(snake, group.get("matcher"), handler)}
    return state


def plan(opts: Options, codex: str = "codex") -> tuple[list[Step], list[str]]:
    home = codex_home(opts)
    config, hooks_file = home / "config.toml", home / "hooks.json"
    argv = server_argv(opts)
    server: dict = {"command": argv[0], "args": argv[1:], "startup_timeout_sec": 30}
    env = server_env(opts)
    if env:
        server["env"] = env
    steps: list[Step] = []
    notes: list[str] = []
    if opts.hooks:
        steps.append(launcher_step(opts))
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


# -- the remote brain (`memverbs connect --install codex`) -----------------------------------


def uses_helper(token_store: str) -> bool:
    """Codex runs its headers helper with a minimal environment (HOME, PATH, SHELL, LANG, TERM), so
    with the token only in the environment (no keyring) it reads it itself (bearer_token_env_var)."""
    return token_store == "keyring"


def remote_plan(opts: Options, record: RemoteRecord, notes: list[str]) -> list[Step]:
    server: dict = {"url": record.url}
    if uses_helper(record.token_store):
        server["http_headers_helper"] = helper_command(record)
    else:
        server["bearer_token_env_var"] = TOKEN_ENV
    server["startup_timeout_sec"] = REMOTE_STARTUP_TIMEOUT_S
    hooks_file = codex_home(opts) / "hooks.json"
    steps: list[Step] = [launcher_step(opts)]
    steps += [JsonArrayItem(hooks_file, ["hooks", event], hook_group(opts, event), is_our_hook) for event in EVENTS]

    def block(ctx: Context) -> dict:
        # The hooks are trusted in the same block, so disconnect removes the trust with the server.
        return {"mcp_servers": {SERVER_NAME: server}, "hooks": {"state": trust_entries(hooks_file, ctx.read(hooks_file))}}

    notes.append("Codex hooks are trusted in config.toml ([hooks.state]); `memverbs doctor` re-checks the hashes.")
    config = TomlBlock(
        codex_home(opts) / "config.toml",
        block,
        remote_toml_conflicts(SPEC.harness),
        top={"mcp_optional_startup_grace_ms": STARTUP_GRACE_MS},
        markers=toml_block.REMOTE,
    )
    return [*steps, config]


def remote_token(token_store: str) -> str:
    if uses_helper(token_store):
        return token_from_helper("http_headers_helper", token_store)
    return token_from_env("codex", f"bearer_token_env_var = {TOKEN_ENV}", token_store)


# -- doctor ----------------------------------------------------------------------------------


def doctor(opts: Options, receipt: dict) -> list[Problem]:
    """Codex skips an untrusted hook silently: are ours still trusted, at the positions they hold now?"""
    if not receipt.get("hooks"):
        return []
    hooks_file = next((Path(r["path"]) for r in receipt["steps"] if r.get("kind") == "json_item"), None)
    config = next((Path(r["path"]) for r in receipt["steps"] if r.get("kind") == "toml_block"), None)
    if hooks_file is None or config is None:
        return []
    try:
        wanted = trust_entries(hooks_file, read_text(hooks_file))
        recorded = toml_block.parse(read_text(config) or "", str(config)).get("hooks", {}).get("state", {})
    except (JsonEditError, toml_block.TomlEditError):
        return []
    stale = [key for key, value in wanted.items() if recorded.get(key) != value]
    if stale:
        return [
            (
                f"{len(stale)} memverbs hook(s) are not trusted by Codex (moved or changed in hooks.json), so Codex skips them",
                "Run `memverbs install codex` again to re-record their trust (or approve them in Codex's /hooks).",
            )
        ]
    return []


SPEC = HarnessSpec(
    name="codex",
    title="Codex",
    command="codex",
    scopes=("user",),
    plan=plan,
    remote_plan=remote_plan,
    remote_token=remote_token,
    remote_hooks=True,
    docs="docs/install.md#codex-codex",
    doctor=doctor,
)
