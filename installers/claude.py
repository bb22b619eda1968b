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

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from memverbs.hooks.adapters import ClaudeAdapter
from memverbs.installers.base import (
    HOOK_TIMEOUT_S,
    SERVER_NAME,
    Options,
    helper_command,
    hook_command,
    is_our_hook,
    is_our_remote,
    is_our_server,
    launcher_step,
    refuse_foreign,
    server_argv,
    server_env,
    token_from_helper,
)
from memverbs.installers.command_steps import CliCommand
from memverbs.installers.files import read_text
from memverbs.installers.json_steps import JsonArrayItem, JsonEntry
from memverbs.installers.jsonc import JsonDoc, JsonEditError
from memverbs.installers.spec import HarnessSpec, Problem
from memverbs.installers.steps import InstallError, Step
from memverbs.remote.record import RemoteRecord
from memverbs.server.home import Home

# The events the install wires (their moments are the adapter's), and each one's matcher.
EVENTS = ClaudeAdapter.wired
MATCHERS = {"SessionStart": "startup|resume|clear|compact"}


def settings_files(opts: Options) -> dict[str, Path]:
    return {
        "user": opts.user_home / ".claude" / "settings.json",
        "project": opts.project_dir / ".claude" / "settings.json",
        "local": opts.project_dir / ".claude" / "settings.local.json",
    }


def claude_json(opts: Options) -> Path:
    return opts.user_home / ".claude.json"


def hook_group(opts: Options, event: str) -> dict:
    group: dict = {}
    if event in MATCHERS:
        group["matcher"] = MATCHERS[event]
    group["hooks"] = [{"type": "command", "command": hook_command(opts, EVENTS[event]), "timeout": HOOK_TIMEOUT_S}]
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


def plan(opts: Options, claude: str = "claude") -> tuple[list[Step], list[str]]:
    steps: list[Step] = []
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


def hook_steps(opts: Options, notes: list[str]) -> list[Step]:
    """The lifecycle hooks in settings.json (also what `connect --install claude` adds: the same
    `memverbs hook` command follows the remote brain the harness is wired to)."""
    target = settings_files(opts)["project" if opts.scope == "project" else "user"]
    steps: list[Step] = []
    for event in EVENTS:
        elsewhere = wired_elsewhere(opts, target, event)
        if elsewhere:
            notes.append(f"{event} hook not added: memverbs is already wired there by {', '.join(elsewhere)}.")
            continue
        steps.append(JsonArrayItem(target, ["hooks", event], hook_group(opts, event), is_our_hook))
    return [launcher_step(opts), *steps] if steps else steps


# -- the remote brain (`memverbs connect --install claude`) --------------------------------


def remote_plan(opts: Options, record: RemoteRecord, notes: list[str]) -> list[Step]:
    """`claude mcp add-json` with a headersHelper (Claude Code passes its whole environment to it),
    and the same hooks as a local install: `memverbs hook` follows the brain the harness uses."""
    cli = shutil.which(SPEC.command, path=opts.env.get("PATH"))
    if cli is None:
        raise InstallError("claude is not on PATH", "Install Claude Code first (its CLI writes ~/.claude.json), or leave it out.")
    existing = registered_server(opts)
    refuse_foreign(SPEC.harness, claude_json(opts), existing)
    entry = {"type": "http", "url": record.url, "headersHelper": helper_command(record)}
    add = [cli, "mcp", "add-json", SERVER_NAME, json.dumps(entry), "--scope", "user"]
    remove = [cli, "mcp", "remove", SERVER_NAME, "--scope", "user"]
    steps: list[Step] = []
    if existing is not None:
        steps.append(CliCommand(remove, [], "replace the previous remote registration", opts.env))
    steps.append(CliCommand(add, remove, "register the remote brain (user scope)", opts.env))
    return steps + hook_steps(opts, notes)


def remote_token(token_store: str) -> str:
    return token_from_helper("headersHelper", token_store)


def remote_keep(opts: Options) -> Callable[[dict], bool] | None:
    """Disconnect leaves `claude mcp remove` out when the entry is no longer ours: it would remove theirs."""
    entry = registered_server(opts)
    if entry is None or is_our_remote(entry):
        return None
    return lambda record: record.get("kind") == "cli"


# -- doctor ----------------------------------------------------------------------------------


def doctor(opts: Options, receipt: dict) -> list[Problem]:
    """The `claude mcp add` registration lives in ~/.claude.json, which Claude Code owns: is our
    entry (the local server, or for a remote receipt the remote one) still there?"""
    from memverbs.installers.checks import command_exists, reinstall  # noqa: PLC0415 - doctor-only

    if not any(r.get("kind") == "cli" and r.get("undo") for r in receipt.get("steps", [])):
        return []
    remote = "remote_url" in receipt
    path = claude_json(opts)
    try:
        doc = JsonDoc(read_text(path) or "")
    except (JsonEditError, InstallError):
        return [(f"{path} does not parse", "Let Claude Code repair it (run `claude`), then reinstall.")]
    entries = [doc.get(["mcpServers", SERVER_NAME])] + [
        (project or {}).get("mcpServers", {}).get(SERVER_NAME) for project in (doc.get(["projects"], {}) or {}).values()
    ]
    ours = [e for e in entries if e is not None and (is_our_remote(e) if remote else is_our_server(e))]
    if not ours:
        if remote:
            return [(f"the remote memverbs server is missing from {path}", "Run `memverbs connect` again.")]
        return [("Claude Code no longer lists the memverbs server", reinstall(SPEC.harness))]
    return [] if remote else command_exists(SPEC.harness, ours[0])


def plugin_checks(home: Home) -> list[dict]:
    """The memverbs Claude Code plugin, when enabled: it provides the server; a second one is a problem."""
    from memverbs.installers.checks import check  # noqa: PLC0415 - doctor-only

    user_home = Path(os.environ.get("HOME") or Path.home())
    plugin = plugin_enabled(user_home)
    if plugin is None:
        return []
    detail = f"Claude Code plugin {plugin} enabled: it provides the memverbs server and hooks"
    try:
        second = JsonDoc(read_text(user_home / ".claude.json") or "{}").get(["mcpServers", SERVER_NAME]) is not None
    except JsonEditError:
        second = False
    if second:
        return [check("claude-plugin", "warn", detail + "; a user-scope `memverbs` server is registered as well",
                      "Keep one: `claude mcp remove memverbs --scope user` (or `memverbs uninstall claude`), "
                      "or disable the plugin.")]
    return [check("claude-plugin", "ok", detail)]


SPEC = HarnessSpec(
    name="claude",
    title="Claude Code",
    command="claude",
    scopes=("user", "project", "local"),
    plan=plan,
    remote_plan=remote_plan,
    remote_token=remote_token,
    remote_hooks=True,
    docs="docs/install.md#claude-code-claude",
    doctor=doctor,
    extra_checks=plugin_checks,
    remote_keep=remote_keep,
)
