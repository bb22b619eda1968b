"""Grok Build: a marked block in config.toml, a hooks file of our own, and the pull block.

* Server: `[mcp_servers.memverbs]` in `$GROK_HOME/config.toml` (default `~/.grok`;
  project scope: `<project>/.grok/config.toml`), in a marked TOML block. `grok mcp
  add` rewrites the whole file and drops every comment, so memverbs does not use it.
  `startup_timeout_sec` is set explicitly: a per-server value beats a low global
  `MCP_TIMEOUT` / `GROK_MCP_STARTUP_TIMEOUT_SECS`. (Grok never holds the first
  request for a server: one still connecting is announced as "connecting" and its
  tools arrive later in the session, so memverbs must start fast; it does.)
  A same-named server in Claude's `~/.claude.json`, which Grok also reads, is
  shadowed by config.toml (checked on 1.0.41), so it is not a double registration.
* Hooks: `hooks/memverbs.json`, a file memverbs owns, in Claude's format. Grok's
  SessionStart source is `new`/`load`, so no Claude matcher (`startup|…` would
  never fire). Grok also runs the hooks in Claude Code's settings; when those
  already run `memverbs hook` for an event in a way that fires in Grok, ours is
  left out and the notes say so.
* Capture: SessionEnd, Stop and PreCompact also run `memverbs hook capture` (Grok's
  payload names its `updates.jsonl`); Claude Code's capture hooks, which Grok also runs,
  stand in for ours (the hook tells Grok's payload by its camelCase twins).
* Grok ignores SessionStart and UserPromptSubmit output (documented; verified on
  1.0.41), so the context arrives by the pull path: a marked block in the
  AGENTS.md Grok loads, telling the agent to call `context_pack` and `delta`.
  User scope: `$GROK_HOME/AGENTS.md`, Grok's global rules file, loaded in every
  session without folder trust and read by no other harness (whose own hooks
  already inject the pack). Project scope: `<project>/AGENTS.md`, which Grok reads
  only once the folder is trusted (and which other agents read too — the block
  tells them to skip it when a hook already injected memory).
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path
from string import Template

from memverbs.hooks.adapters import GrokAdapter
from memverbs.hooks.events import Moment
from memverbs.hooks.heartbeat import TOOL_BEAT_INTERVAL_MS
from memverbs.installers import toml_block
from memverbs.installers.base import (
    HOOK_TIMEOUT_S,
    REMOTE_STARTUP_TIMEOUT_S,
    REMOTE_TOOL_TIMEOUT_S,
    SERVER_NAME,
    Options,
    hook_command,
    hook_moment,
    is_our_hook,
    launcher_step,
    local_hook_steps,
    remote_toml_conflicts,
    server_argv,
    server_env,
    token_from_env,
)
from memverbs.installers.files import read_text
from memverbs.installers.jsonc import JsonDoc, JsonEditError
from memverbs.installers.spec import HarnessSpec
from memverbs.installers.steps import Step
from memverbs.installers.text_steps import MarkedBlock, OwnedFile, TomlBlock
from memverbs.remote.record import TOKEN_ENV, RemoteRecord

STARTUP_TIMEOUT_S = 30
TOOL_BEAT_S = TOOL_BEAT_INTERVAL_MS // 1000
TOOL_TIMEOUT_S = 60
AGENTS_CAP = 10_000  # Grok reads the first 10,000 characters of each rules file
HOOKS_MARKER = "managed by `memverbs install grok`"
EVENTS = GrokAdapter.wired  # the events the install wires, and their moments (the adapter says why these)
CAPTURES = GrokAdapter.captures  # the events that also run `hook capture`
GROK_SOURCES = ("new", "load")  # SessionStart `source` values in Grok
OFF = {"0", "false", "no", "off"}


def grok_home(opts: Options) -> Path:
    raw = opts.env.get("GROK_HOME", "").strip()
    return Path(raw).expanduser() if raw else opts.user_home / ".grok"


def paths(opts: Options) -> dict[str, Path]:
    if opts.scope == "project":
        base = opts.project_dir / ".grok"
        return {"config": base / "config.toml", "hooks": base / "hooks" / "memverbs.json", "agents": opts.project_dir / "AGENTS.md"}
    base = grok_home(opts)
    return {"config": base / "config.toml", "hooks": base / "hooks" / "memverbs.json", "agents": base / "AGENTS.md"}


def server_entry(opts: Options) -> dict:
    argv = server_argv(opts)
    entry: dict = {
        "command": argv[0],
        "args": argv[1:],
        "enabled": True,
        "startup_timeout_sec": STARTUP_TIMEOUT_S,
        "tool_timeout_sec": TOOL_TIMEOUT_S,
    }
    env = server_env(opts)
    if env:
        entry["env"] = env
    return entry


def hooks_file(opts: Options, events: list[str], captures: list[str] | tuple[str, ...] = ()) -> str:
    def entry(moment: str) -> dict:
        return {"type": "command", "command": hook_command(opts, moment), "timeout": HOOK_TIMEOUT_S}

    hooks = {
        event: [{"hooks": ([entry(EVENTS[event])] if event in events else []) + ([entry(Moment.CAPTURE)] if event in captures else [])}]
        for event in dict.fromkeys([*events, *captures])
    }
    # Grok ignores unknown top-level keys in a hooks file: the marker says whose file this is.
    return json.dumps({"memverbs": f"{HOOKS_MARKER}; `memverbs uninstall grok` removes this file", "hooks": hooks}, indent=2) + "\n"


def pull_block(opts: Options) -> str:
    template = Template(files("memverbs.templates").joinpath("pull-block.md").read_text(encoding="utf-8"))
    return template.safe_substitute(
        harness_title="Grok",
        session_hint="Grok does not tell you its id, so make one at session start, `grok-` and the UTC date and "
        "time (e.g. `grok-20261130T0912Z`), and reuse it.",
        tool_hint="In Grok these tools sit behind `search_tool`: search for `memverbs`, then call "
        "`memverbs__context_pack` and `memverbs__delta` with `use_tool`.",
    ).rstrip() + "\n"


# -- never double-wire ---------------------------------------------------------------


def fires_in_grok(event: str, group: object) -> bool:
    """Would this hook group run `memverbs hook` (other than capture) when Grok fires `event`?"""
    if not is_our_hook(group):
        return False
    if not any(not capture for capture in _our_hooks(group)):  # a capture hook is not Grok's moment on this event
        return False
    matcher = group.get("matcher") if event == "SessionStart" else None  # other events ignore matchers
    if not matcher or matcher == "*":
        return True
    try:
        return any(re.fullmatch(matcher, source) for source in GROK_SOURCES)
    except re.error:
        return True  # cannot tell: assume it fires, and add nothing


def capture_fires_in_grok(event: str, group: object) -> bool:
    """Would this hook group run `memverbs hook capture` when Grok fires `event`? (Matchers only
    filter SessionStart, which capture never uses.)"""
    return is_our_hook(group) and any(_our_hooks(group))


def _our_hooks(group: dict) -> list[bool]:
    """For each `memverbs hook` command in the group: does it run capture?"""
    moments = [hook_moment(h.get("command", "")) for h in group.get("hooks") or [] if isinstance(h, dict)]
    return [moment == "capture" for moment in moments if moment]


def _groups(path: Path, event: str) -> list:
    text = read_text(path)
    if not text:
        return []
    try:
        groups = JsonDoc(text).get(["hooks", event], [])
    except JsonEditError:
        return []
    return groups if isinstance(groups, list) else []


def claude_hooks_read(opts: Options) -> bool:
    """Grok reads Claude Code's hooks unless `[compat.claude] hooks = false` or the env switch says no."""
    if opts.env.get("GROK_CLAUDE_HOOKS_ENABLED", "").strip().lower() in OFF:
        return False
    try:
        config = toml_block.parse(toml_block.remove(read_text(grok_home(opts) / "config.toml") or ""), "config.toml")
    except toml_block.TomlEditError:
        return True
    return ((config.get("compat") or {}).get("claude") or {}).get("hooks", True) is not False


def claude_plugin_hooks(opts: Options) -> list[Path]:
    """hooks.json of an installed memverbs Claude Code plugin (Grok loads those plugins too)."""
    text = read_text(opts.user_home / ".claude" / "plugins" / "installed_plugins.json")
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return []
    found: list[Path] = []

    def walk(node: object, ours: bool) -> None:
        if isinstance(node, dict):
            if ours and isinstance(node.get("installPath"), str):
                found.append(Path(node["installPath"]) / "hooks" / "hooks.json")
            for key, value in node.items():
                walk(value, ours or str(key).startswith("memverbs@"))
        elif isinstance(node, list):
            for value in node:
                walk(value, ours)

    walk(data, False)
    return found


def _levels(opts: Options) -> list[tuple[str, Path]]:
    """Where hooks come from that fire in this install's sessions: a user install's hooks fire in
    every project, so only user-level sources can double them; a project's fire alongside both."""
    levels = [("user", opts.user_home)]
    return [*levels, ("project", opts.project_dir)] if opts.scope == "project" else levels


def wired_elsewhere(opts: Options, own: Path, event: str, capture: bool = False) -> list[str]:
    """Other hook sources Grok reads that already run `memverbs hook` (`hook capture`) for this event."""
    fires = capture_fires_in_grok if capture else fires_in_grok
    sources: list[tuple[str, Path]] = []
    grok_dirs = {"user": grok_home(opts), "project": opts.project_dir / ".grok"}
    for level, _ in _levels(opts):
        base = grok_dirs[level] / "hooks"
        if base.is_dir():
            sources += [(f"Grok hooks file {p}", p) for p in sorted(base.glob("*.json")) if p.resolve() != own.resolve()]
    if claude_hooks_read(opts):
        for level, base in _levels(opts):
            for name in ("settings.json", "settings.local.json"):
                sources.append((f"Claude Code's {level} {name} (Grok reads Claude's hooks)", base / ".claude" / name))
        sources += [(f"the memverbs Claude Code plugin ({p})", p) for p in claude_plugin_hooks(opts)]
    found = [label for label, path in sources if any(fires(event, g) for g in _groups(path, event))]
    return list(dict.fromkeys(found))


def config_hooks_elsewhere(opts: Options, event: str, capture: bool = False) -> bool:
    """`[[hooks.<Event>]]` tables running memverbs (its capture) in a Grok config.toml, outside our block."""
    fires = capture_fires_in_grok if capture else fires_in_grok
    configs = [grok_home(opts) / "config.toml"] + ([opts.project_dir / ".grok" / "config.toml"] if opts.scope == "project" else [])
    for path in configs:
        try:
            config = toml_block.parse(toml_block.remove(read_text(path) or ""), str(path))
        except toml_block.TomlEditError:
            continue
        if any(fires(event, g) for g in ((config.get("hooks") or {}).get(event) or [])):
            return True
    return False


# -- the plan ----------------------------------------------------------------------------


def plan(opts: Options, grok: str = "grok") -> tuple[list[Step], list[str]]:
    where = paths(opts)
    steps: list[Step] = []
    notes: list[str] = []

    def conflicts(outside: dict) -> str | None:
        if SERVER_NAME in (outside.get("mcp_servers") or {}):
            return f"[mcp_servers.{SERVER_NAME}] is already defined outside the memverbs block (grok mcp remove {SERVER_NAME})"
        return None

    steps.append(TomlBlock(where["config"], {"mcp_servers": {SERVER_NAME: server_entry(opts)}}, conflicts))
    notes.append(
        f"`grok mcp add/remove` rewrite {where['config']} without comments, memverbs's markers included; "
        f"after that, remove the server with `grok mcp remove {SERVER_NAME}` rather than memverbs uninstall."
    )
    if not opts.hooks:
        return steps, notes

    events = []
    for event in EVENTS:
        elsewhere = wired_elsewhere(opts, where["hooks"], event)
        if config_hooks_elsewhere(opts, event):
            elsewhere.append("a [[hooks." + event + "]] table in a Grok config.toml")
        if elsewhere:
            notes.append(f"Grok {event} hook not added: Grok already runs memverbs for it from {', '.join(elsewhere)}.")
        else:
            events.append(event)
    captures = []
    for event in CAPTURES:
        elsewhere = wired_elsewhere(opts, where["hooks"], event, capture=True)
        if config_hooks_elsewhere(opts, event, capture=True):
            elsewhere.append("a [[hooks." + event + "]] table in a Grok config.toml")
        if elsewhere:
            notes.append(f"Grok {event} capture hook not added: Grok already runs memverbs capture for it from {', '.join(elsewhere)}.")
        else:
            captures.append(event)
    if events or captures:
        steps.append(launcher_step(opts))
    if events or captures or where["hooks"].exists():  # an earlier install's file is rewritten, never left double-firing
        steps.append(OwnedFile(where["hooks"], hooks_file(opts, events, captures), HOOKS_MARKER))
    notes.append(
        "Grok ignores the output of SessionStart and UserPromptSubmit hooks: the pack reaches the agent with the "
        "session's first tool result (PostToolUse), again after a compaction, and what changed on later tool results "
        f"(at most every {TOOL_BEAT_S} s); before the first tool call, the pull block in {where['agents']} asks the "
        "agent to call context_pack itself."
    )

    step = MarkedBlock(where["agents"], pull_block(opts))
    steps.append(step)
    size = len(read_text(where["agents"]) or "") + len(step.body)
    if size > AGENTS_CAP:
        notes.append(
            f"{where['agents']} is about {size} characters with the memverbs block; Grok reads only the first "
            f"{AGENTS_CAP}, so the block at its end may be cut off. Shorten the file."
        )
    if opts.scope == "project":
        notes.append(
            f"Grok loads {where['agents']} and {where['hooks'].parent} only for a trusted folder "
            "(grok --trust, or /hooks-trust in the TUI)."
        )
    return steps, notes


# -- the remote brain (`memverbs connect --install grok`) -------------------------------------


def remote_plan(opts: Options, record: RemoteRecord, notes: list[str]) -> list[Step]:
    """The remote server in a block of its own in config.toml, the token from Grok's environment, and
    the local plan's hooks (the pack rides on the first tool result; `memverbs hook` asks the remote brain)."""
    server = {
        "url": record.url,
        "bearer_token_env_var": TOKEN_ENV,
        "enabled": True,
        "startup_timeout_sec": REMOTE_STARTUP_TIMEOUT_S,
        "tool_timeout_sec": REMOTE_TOOL_TIMEOUT_S,
    }
    config = grok_home(opts) / "config.toml"
    block = TomlBlock(config, {"mcp_servers": {SERVER_NAME: server}}, remote_toml_conflicts(SPEC.harness), markers=toml_block.REMOTE)
    return [block, *local_hook_steps(plan, opts, notes)]


def remote_token(token_store: str) -> str:
    return token_from_env("grok", f"bearer_token_env_var = {TOKEN_ENV}", token_store)


SPEC = HarnessSpec(
    name="grok",
    title="Grok Build",
    command="grok",
    scopes=("user", "project"),
    plan=plan,
    remote_plan=remote_plan,
    remote_token=remote_token,
    remote_hooks=True,
    docs="docs/install.md#grok-build-grok",
)
