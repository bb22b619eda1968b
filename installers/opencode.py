"""opencode: `mcp.memverbs` in its JSON/JSONC config, and a plugin module for the lifecycle.

* Server: opencode merges `opencode.json` and `opencode.jsonc` from its config dir
  (`$XDG_CONFIG_HOME/opencode`, default `~/.config/opencode`; project scope: the
  project root), the .jsonc last. Our entry goes into the file that already holds it,
  else the .jsonc when it exists (users who keep one comment there), else the .json;
  edited surgically so comments and every other byte stay. `opencode mcp add` would
  reformat the whole `mcp` object and has no remove.
* `timeout` is how long opencode waits for the server's tools at start-up (ms).
* Lifecycle: opencode has no shell hooks; `plugin/opencode/memverbs.js` is copied
  into `<config dir>/plugin/` (project scope: `<project>/.opencode/plugin/`) with the
  hook command — the lean launcher every harness's hooks run (hooks/launcher.py), an
  absolute interpreter path — and our environment baked in (a plugin has no
  configuration of its own, and opencode's environment may not have memverbs on PATH).
* Never double-wire: a memverbs plugin already loaded from the other scope would push
  the pack twice, so the plugin is then left out and the notes say where it is.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

from memverbs.hooks.launcher import bootstrap_argv
from memverbs.installers.base import (
    SERVER_NAME,
    Options,
    is_our_remote,
    is_our_server,
    json_entry_at,
    local_hook_steps,
    refuse_foreign,
    server_argv,
    server_env,
    token_from_env,
)
from memverbs.installers.files import read_text
from memverbs.installers.json_steps import JsonEntry
from memverbs.installers.jsonc import JsonDoc, JsonEditError
from memverbs.installers.spec import HarnessSpec
from memverbs.installers.steps import Step
from memverbs.installers.text_steps import OwnedFile
from memverbs.remote.record import TOKEN_ENV, RemoteRecord

STARTUP_TIMEOUT_MS = 30_000
PLUGIN_MARKER = "memverbs-opencode-plugin"
PLUGIN_NAME = "memverbs.js"
_SLOT = r"(/\* memverbs:{name} \*/ ).*?( /\* end \*/)"


def config_dir(opts: Options) -> Path:
    raw = opts.env.get("XDG_CONFIG_HOME", "").strip()
    return (Path(raw) if raw else opts.user_home / ".config") / "opencode"


def plugin_dirs(opts: Options) -> dict[str, Path]:
    """Where opencode loads plugin modules from, per scope (`plugin/` or `plugins/`, top level only)."""
    return {"user": config_dir(opts), "project": opts.project_dir / ".opencode"}


def config_file(opts: Options) -> Path:
    base = opts.project_dir if opts.scope == "project" else config_dir(opts)
    candidates = [base / "opencode.jsonc", base / "opencode.json"]
    for path in candidates:
        text = read_text(path)
        if not text:
            continue
        try:
            if JsonDoc(text).get(["mcp", SERVER_NAME]) is not None:
                return path
        except JsonEditError:
            return path  # the step refuses it with a clear message, untouched
    return next((p for p in candidates if p.exists()), base / "opencode.json")


def server_entry(opts: Options) -> dict:
    entry: dict = {"type": "local", "command": server_argv(opts)}
    env = server_env(opts)
    if env:
        entry["environment"] = env
    entry["enabled"] = True
    entry["timeout"] = STARTUP_TIMEOUT_MS
    return entry


def render_plugin(opts: Options, hook: list[str] | None = None) -> str:
    """The shipped module with the hook's argv prefix (default: the lean launcher) and our environment
    in its two marked slots (JSON is valid JS)."""
    text = files("memverbs.plugin").joinpath("opencode", PLUGIN_NAME).read_text(encoding="utf-8")
    for name, value in (("command", hook or bootstrap_argv()), ("env", server_env(opts))):
        filled = json.dumps(value)

        def fill(m: re.Match[str], filled: str = filled) -> str:
            return m.group(1) + filled + m.group(2)

        text, count = re.subn(_SLOT.format(name=name), fill, text, count=1)
        assert count == 1, f"plugin/opencode/{PLUGIN_NAME} lost its {name} slot"
    return text


def plugin_elsewhere(opts: Options, target: Path) -> list[Path]:
    """Our module already loaded for this install's sessions: a user plugin runs in every project,
    so only a user-level copy can double it; a project's runs alongside both."""
    dirs = plugin_dirs(opts)
    found = []
    for base in [dirs["user"]] + ([dirs["project"]] if opts.scope == "project" else []):
        for sub in ("plugin", "plugins"):
            path = base / sub / PLUGIN_NAME
            if path != target and PLUGIN_MARKER in (read_text(path) or ""):
                found.append(path)
    return found


def plan(opts: Options, opencode: str = "opencode") -> tuple[list[Step], list[str]]:
    steps: list[Step] = [JsonEntry(config_file(opts), ["mcp", SERVER_NAME], server_entry(opts), is_our_server)]
    notes: list[str] = []
    if not opts.hooks:
        return steps, notes
    target = plugin_dirs(opts)[opts.scope] / "plugin" / PLUGIN_NAME
    elsewhere = plugin_elsewhere(opts, target)
    if elsewhere:
        notes.append(f"opencode plugin not added: the memverbs plugin is already loaded from {', '.join(map(str, elsewhere))}.")
    else:
        steps.append(OwnedFile(target, render_plugin(opts), PLUGIN_MARKER))
        notes.append(
            f"The first time opencode loads a plugin from {target.parent.parent} it installs @opencode-ai/plugin there "
            "from the npm registry (once, 5-10 s; opencode's own step, the memverbs plugin imports nothing)."
        )
    return steps, notes


# -- the remote brain (`memverbs connect --install opencode`) ---------------------------------

BEARER = "Bearer {env:" + TOKEN_ENV + "}"  # the Authorization value, in opencode's env-var syntax


def remote_plan(opts: Options, record: RemoteRecord, notes: list[str]) -> list[Step]:
    path = config_file(opts)
    refuse_foreign(SPEC.harness, path, json_entry_at(path, ["mcp", SERVER_NAME]))
    entry = {
        "type": "remote",
        "url": record.url,
        "headers": {"Authorization": BEARER},
        "oauth": False,  # a 401 means a missing token here, not an OAuth server to sign in to
        "enabled": True,
        "timeout": STARTUP_TIMEOUT_MS,
    }
    return [JsonEntry(path, ["mcp", SERVER_NAME], entry, is_our_remote, owner="remote"), *local_hook_steps(plan, opts, notes)]


def remote_token(token_store: str) -> str:
    return token_from_env("opencode", "{env:" + TOKEN_ENV + "} in the Authorization header", token_store)


SPEC = HarnessSpec(
    name="opencode",
    title="opencode",
    command="opencode",
    scopes=("user", "project"),
    plan=plan,
    remote_plan=remote_plan,
    remote_token=remote_token,
    remote_hooks=True,
    docs="docs/install.md#opencode-opencode",
)
