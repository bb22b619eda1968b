"""Claude Code: `claude mcp add` for the server, settings hooks for the lifecycle.

* Server: Claude Code's own CLI writes `~/.claude.json` (a large file it owns),
  so user/local scope go through `claude mcp add`; project scope is the repo's
  `.mcp.json`, edited surgically.
* Hooks: `SessionStart` (startup, resume, clear and compact — after a compaction
  the same hook rehydrates) and `UserPromptSubmit` (the heartbeat) in
  `~/.claude/settings.json` (user) or `<project>/.claude/settings.json`.
* Never double-wire: Claude Code merges user, project and local settings, and
  the memverbs plugin brings its own hooks; when any of them already runs
  `memverbs hook`, the hooks are skipped and the notes say where they are.
"""

from __future__ import annotations

from pathlib import Path

from memverbs.installers.base import (
    HOOK_TIMEOUT_S,
    SERVER_NAME,
    Options,
    hook_command,
    is_our_hook,
    is_our_server,
    server_argv,
    server_env,
)
from memverbs.installers.files import read_text
from memverbs.installers.jsonc import JsonDoc, JsonEditError
from memverbs.installers.steps import CliCommand, InstallError, JsonArrayItem, JsonEntry

EVENTS = {
    "SessionStart": ("startup|resume|clear|compact", "session-start"),
    "UserPromptSubmit": (None, "heartbeat"),
}


def settings_files(opts: Options) -> dict[str, Path]:
    return {
        "user": opts.user_home / ".claude" / "settings.json",
        "project": opts.project_dir / ".claude" / "settings.json",
        "local": opts.project_dir / ".claude" / "settings.local.json",
    }


def claude_json(opts: Options) -> Path:
    return opts.user_home / ".claude.json"


def hook_group(opts: Options, event: str) -> dict:
    matcher, moment = EVENTS[event]
    group: dict = {}
    if matcher:
        group["matcher"] = matcher
    group["hooks"] = [{"type": "command", "command": hook_command(opts, moment), "timeout": HOOK_TIMEOUT_S}]
    return group


def wired_elsewhere(opts: Options, target: Path, event: str) -> list[str]:
    """Other settings files (or the plugin) that already run `memverbs hook` for this event."""
    found = []
    for name, path in settings_files(opts).items():
        if path == target:
            continue
        text = read_text(path)
        if not text:
            continue
        try:
            groups = JsonDoc(text).get(["hooks", event], [])
        except JsonEditError:
            continue
        if any(is_our_hook(g) for g in groups or []):
            found.append(f"{name} settings ({path})")
    if plugin_enabled(opts.user_home):
        found.append("the memverbs Claude Code plugin")
    return found


def plugin_enabled(user_home: Path) -> str | None:
    """The enabled memverbs Claude Code plugin (`memverbs@<marketplace>`) in the user's settings, if any.

    The plugin brings its own server (plugin/memverbs/.mcp.json) and hooks, so an install beside it
    must not register a second `memverbs` server."""
    text = read_text(user_home / ".claude" / "settings.json")
    if not text:
        return None
    try:
        enabled = JsonDoc(text).get(["enabledPlugins"], {}) or {}
    except JsonEditError:
        return None
    if not isinstance(enabled, dict):
        return None
    return next((key for key, on in enabled.items() if key.startswith("memverbs@") and on is True), None)


def registered_server(opts: Options) -> object | None:
    """Our server entry as Claude Code recorded it (user or local scope), read-only."""
    text = read_text(claude_json(opts))
    if not text:
        return None
    try:
        doc = JsonDoc(text)
    except JsonEditError:
        return None
    if opts.scope == "user":
        return doc.get(["mcpServers", SERVER_NAME])
    return doc.get(["projects", str(opts.project_dir), "mcpServers", SERVER_NAME])


def plan(opts: Options, claude: str = "claude") -> tuple[list, list[str]]:
    steps: list = []
    notes: list[str] = []
    argv = server_argv(opts)
    env = server_env(opts)
    if opts.scope == "project":
        entry = {"type": "stdio", "command": argv[0], "args": argv[1:], "env": env}
        steps.append(JsonEntry(opts.project_dir / ".mcp.json", ["mcpServers", SERVER_NAME], entry, is_our_server))
    elif plugin_enabled(opts.user_home):
        notes.append(
            f"Server not registered: the memverbs Claude Code plugin ({plugin_enabled(opts.user_home)}) already provides "
            "it (verbs surface). Disable the plugin first if you want `memverbs install` to register its own."
        )
        if registered_server(opts) is not None:
            notes.append("An earlier `memverbs install claude` registration is still there too: "
                         "`claude mcp remove memverbs` leaves only the plugin's.")
    else:
        scope = "user" if opts.scope == "user" else "local"
        existing = registered_server(opts)
        if existing is not None and not is_our_server(existing):
            raise InstallError(
                f"Claude Code already has an MCP server named {SERVER_NAME!r} that memverbs did not register",
                f"Remove it (claude mcp remove {SERVER_NAME} --scope {scope}) or keep it; memverbs will not replace it.",
            )
        add = [claude, "mcp", "add", SERVER_NAME, "--scope", scope]
        for key, value in env.items():
            add += ["-e", f"{key}={value}"]
        add += ["--", *argv]
        remove = [claude, "mcp", "remove", SERVER_NAME, "--scope", scope]
        if existing is not None:
            steps.append(CliCommand(remove, [], "replace the previous memverbs registration", opts.env))
        steps.append(CliCommand(add, remove, f"register the {opts.surface}-surface server ({scope} scope)", opts.env))
    if opts.hooks:
        steps += hook_steps(opts, notes)
    notes.append(
        "Headless runs (claude -p) need tool permission: pass --allowedTools mcp__memverbs "
        'or add "mcp__memverbs" to permissions.allow in your settings.'
    )
    return steps, notes


def hook_steps(opts: Options, notes: list[str]) -> list:
    """The lifecycle hooks in settings.json (also what `connect --install claude` adds: the same
    `memverbs hook` command follows the remote brain the harness is wired to)."""
    target = settings_files(opts)["project" if opts.scope == "project" else "user"]
    steps: list = []
    for event in EVENTS:
        elsewhere = wired_elsewhere(opts, target, event)
        if elsewhere:
            notes.append(f"{event} hook not added: memverbs is already wired there by {', '.join(elsewhere)}.")
            continue
        steps.append(JsonArrayItem(target, ["hooks", event], hook_group(opts, event), is_our_hook))
    return steps
