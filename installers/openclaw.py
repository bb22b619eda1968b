"""OpenClaw: our entries in openclaw.json, written surgically, and the plugin linked from the package.

Why not OpenClaw's CLI (`openclaw mcp set`, `plugins install --link`, `plugins enable`,
`config set`): every one of its writes re-serialises the whole openclaw.json — it
prints "Config write will strip JSON5 comments", drops them, adds `meta`, chmods the
file 0600 — so the user's comments and layout could not survive an install; its
uninstall leaves `plugins.entries.memverbs: {"enabled": false}` behind; and each
call takes 4–7 s. The CLI writes nothing but config for a linked plugin apart from an
install-ledger row, so memverbs writes the same keys itself (checked on 2026.9.6: the
plugin loads with all four typed hooks, `openclaw doctor --lint` is clean, the
Gateway hot-reloads plugin config edits):

* `mcp.servers.memverbs` = {command, args, env};
* `plugins.load.paths` += the package's `plugin/openclaw` directory (linked, so a
  memverbs upgrade updates the plugin);
* `plugins.entries.memverbs` = {enabled, hooks.allowConversationAccess (without it
  OpenClaw blocks before_prompt_build for a non-bundled plugin), config.{command, hook, env}}
  — the plugin runs `hook`, the lean launcher every harness's hooks run (hooks/launcher.py),
  with MEMVERBS_HOME from `env`; `command`, the absolute memverbs command, marks the entry
  ours and runs the hooks for a config written before `hook` existed;
* `plugins.allow` += "memverbs", only when the user keeps an allowlist (creating one
  would block every other plugin).

* OpenClaw's install ledger (a row in its state database, written only by its CLI) gets
  the linked plugin through `openclaw plugins install --link`, so `openclaw plugins inspect`
  shows its install source instead of a warning; uninstall runs `openclaw plugins uninstall
  --keep-files`. Both CLI calls rewrite all of openclaw.json (comments gone, `meta` added,
  mode 0600), so the file's bytes and mode are put back after each: the config stays ours
  to edit surgically. (OpenClaw may then log "Config observe anomaly: missing-meta-vs-last-good"
  once: its own record of the file it wrote no longer matches.)
openclaw.json is JSON5; memverbs edits JSON with comments and trailing commas and
refuses, untouched, a file using other JSON5 syntax (unquoted keys, single quotes).
"""

from __future__ import annotations

import json
import shutil
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
    memverbs_executable,
    refuse_foreign,
    server_argv,
    server_env,
    token_from_env,
)
from memverbs.installers.command_steps import CliCommand
from memverbs.installers.files import read_text
from memverbs.installers.json_steps import JsonArrayValue, JsonEntry
from memverbs.installers.jsonc import JsonDoc, JsonEditError
from memverbs.installers.spec import HarnessSpec
from memverbs.installers.steps import Step
from memverbs.remote.record import TOKEN_ENV, RemoteRecord

PLUGIN_ID = "memverbs"
UNSET = {"", "undefined", "null"}  # OpenClaw treats these env values as unset


def _env(opts: Options, name: str) -> str | None:
    value = opts.env.get(name, "").strip()
    return None if value in UNSET else value


def config_path(opts: Options) -> Path:
    """OpenClaw's active config: OPENCLAW_CONFIG_PATH, else the state dir's openclaw.json."""
    if explicit := _env(opts, "OPENCLAW_CONFIG_PATH"):
        return Path(explicit).expanduser()
    if state := _env(opts, "OPENCLAW_STATE_DIR"):
        return Path(state).expanduser() / "openclaw.json"
    home = Path(_env(opts, "OPENCLAW_HOME") or opts.user_home).expanduser()
    profile = _env(opts, "OPENCLAW_PROFILE")
    return home / (f".openclaw-{profile}" if profile and profile != "default" else ".openclaw") / "openclaw.json"


def plugin_dir() -> str:
    return str(Path(str(files("memverbs.plugin").joinpath("openclaw"))).resolve())


def is_stale_plugin_path(value: object) -> bool:
    """A load path an earlier memverbs install left (the package moved): …/plugin/openclaw with our id, or gone."""
    if not isinstance(value, str) or not value.rstrip("/").endswith("plugin/openclaw"):
        return False
    manifest = read_text(Path(value) / "openclaw.plugin.json")
    if manifest is None:
        return not Path(value).exists()
    try:
        return json.loads(manifest).get("id") == PLUGIN_ID
    except ValueError:
        return False


def is_our_entry(value: object) -> bool:
    """plugins.entries.memverbs as memverbs writes it, or the {"enabled": false} OpenClaw's uninstall leaves."""
    if not isinstance(value, dict):
        return False
    config = value.get("config")
    if isinstance(config, dict) and "memverbs" in str(config.get("command", "")):
        return True
    return set(value) <= {"enabled", "hooks"}


def plugin_entry(opts: Options) -> dict:
    config: dict = {"command": memverbs_executable(), "hook": bootstrap_argv()}
    env = server_env(opts)
    if env:
        config["env"] = env
    return {"enabled": True, "hooks": {"allowConversationAccess": True}, "config": config}


def server_entry(opts: Options) -> dict:
    argv = server_argv(opts)
    entry: dict = {"command": argv[0], "args": argv[1:]}
    env = server_env(opts)
    if env:
        entry["env"] = env
    return entry


def _plugins_policy(path: Path) -> dict:
    try:
        plugins = JsonDoc(read_text(path) or "").get(["plugins"], {})
    except JsonEditError:
        return {}  # the first step refuses the file, untouched
    return plugins if isinstance(plugins, dict) else {}


def plan(opts: Options, openclaw: str = "openclaw") -> tuple[list[Step], list[str]]:
    path = config_path(opts)
    steps: list[Step] = [JsonEntry(path, ["mcp", "servers", SERVER_NAME], server_entry(opts), is_our_server)]
    notes: list[str] = []
    if not opts.hooks:
        return steps, notes
    policy = _plugins_policy(path)
    steps.append(JsonEntry(path, ["plugins", "entries", PLUGIN_ID], plugin_entry(opts), is_our_entry))
    steps.append(JsonArrayValue(path, ["plugins", "load", "paths"], plugin_dir(), is_stale_plugin_path))
    if isinstance(policy.get("allow"), list) and PLUGIN_ID not in policy["allow"]:
        steps.append(JsonArrayValue(path, ["plugins", "allow"], PLUGIN_ID))
    if PLUGIN_ID in (policy.get("deny") or []):
        notes.append(f"plugins.deny in {path} lists {PLUGIN_ID!r}: OpenClaw will not load the plugin until you remove it.")
    if policy.get("enabled") is False:
        notes.append(f"plugins.enabled is false in {path}: OpenClaw loads no plugins, so memory stays off until you enable them.")
    cli = shutil.which(openclaw, path=opts.env.get("PATH"))
    if cli is not None:
        # OpenClaw's install ledger (its state database) is written only by its CLI; that CLI
        # also rewrites all of openclaw.json, which our own steps above manage, so its bytes
        # are put back after it. The ledger record is what makes `plugins inspect` trust it.
        install = [cli, "plugins", "install", "--link", plugin_dir(), "--force", "--accept-capabilities"]
        uninstall = [cli, "plugins", "uninstall", PLUGIN_ID, "--force", "--keep-files"]
        steps.append(CliCommand(install, uninstall, "record the linked plugin in OpenClaw's install ledger", opts.env, keep=path))
        ledger = "recorded in OpenClaw's install ledger (`openclaw plugins inspect memverbs` shows its install source)"
    else:
        ledger = "not recorded in OpenClaw's install ledger (no openclaw CLI on PATH), so `openclaw plugins inspect` warns"
    notes.append(
        f"The memverbs OpenClaw plugin is linked from {plugin_dir()} and {ledger}; the Gateway loads it at its "
        "next start (a running one in the default hybrid reload mode picks it up)."
    )
    return steps, notes


# -- the remote brain (`memverbs connect --install openclaw`) ---------------------------------

BEARER = "Bearer ${" + TOKEN_ENV + "}"  # the Authorization value, in OpenClaw's env-var syntax


def remote_plan(opts: Options, record: RemoteRecord, notes: list[str]) -> list[Step]:
    path = config_path(opts)
    keys = ["mcp", "servers", SERVER_NAME]
    refuse_foreign(SPEC.harness, path, json_entry_at(path, keys))
    entry = {"url": record.url, "transport": "streamable-http", "headers": {"Authorization": BEARER}}
    return [JsonEntry(path, keys, entry, is_our_remote, owner="remote"), *local_hook_steps(plan, opts, notes)]


def remote_token(token_store: str) -> str:
    line = token_from_env("openclaw", "${" + TOKEN_ENV + "} in the Authorization header", token_store)
    return line + "; a Gateway running as a service needs it in the service's environment"


SPEC = HarnessSpec(
    name="openclaw",
    title="OpenClaw",
    command="openclaw",
    scopes=("user",),
    plan=plan,
    remote_plan=remote_plan,
    remote_token=remote_token,
    remote_hooks=True,
    docs="docs/install.md#openclaw-openclaw",
)
