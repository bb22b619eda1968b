"""`memverbs connect URL --install claude,codex,…`: the remote brain as each harness's `memverbs` server.

`memverbs install` registers the local brain (`memverbs serve` over stdio); this module
registers a remote one (MCP streamable HTTP at the connected URL, with a bearer token),
on the same machinery: steps rehearsed before anything is written, surgical edits,
backups, a receipt, and a disconnect that reverses exactly what the receipt records.

* **Name.** The remote server is registered as `memverbs`, the local install's name, so
  every tool keeps its name (`mcp__memverbs__recall`, `memverbs__context_pack`, …) and
  the permissions, pull block and docs that name them hold for either brain. A harness
  talks to one brain: connect refuses a harness where `memverbs install` registered the
  local server (`memverbs uninstall <harness>` first), and `memverbs install` refuses
  one where connect registered the remote (`memverbs disconnect` first).
* **Receipt.** `$MEMVERBS_HOME/integrations/<harness>/remote-receipt.json`, beside the
  local install's `receipt.json`: `memverbs uninstall` never reads it and
  `memverbs disconnect` reads nothing else.
* **Ownership.** A remote entry is ours when it has a `url` and takes its token from
  `memverbs remote-header` or `$MEMVERBS_REMOTE_TOKEN` (base.is_our_remote); in a TOML
  file it sits in a block with markers of its own (toml_block.REMOTE). Disconnect
  removes an entry only while it is still ours.
* **The token is never written into a harness file.** Claude Code and Codex run a
  headers helper at each connection — `memverbs remote-header URL`, which prints
  `{"Authorization": "Bearer …"}` from `$MEMVERBS_REMOTE_TOKEN` or else the OS keyring;
  Grok, opencode and OpenClaw read `$MEMVERBS_REMOTE_TOKEN` from their environment
  (`bearer_token_env_var`, `{env:…}`, `${…}`). Every one of the five supports one of
  the two (checked on the versions in /work/shared/spec/HARNESSES.md), so there is no
  inline-token path.
* Codex runs its helper with a minimal environment (HOME, PATH, SHELL, LANG, TERM —
  observed on 0.171.0): no `PYTHON_KEYRING_BACKEND`, no D-Bus address, no
  `$MEMVERBS_REMOTE_TOKEN`. So the helper command names the keyring backend connect
  stored the token in (`memverbs remote-header URL --keyring-backend …`), `remote-header`
  finds the session bus at its standard address, and with no keyring (the token only in the environment) Codex
  gets `bearer_token_env_var`, which it reads from its own environment instead.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

from memverbs.cli.remote import TOKEN_ENV, RemoteRecord
from memverbs.hooks.events import Harness
from memverbs.installers import claude, codex, grok, openclaw, opencode, registry, toml_block
from memverbs.installers.base import (
    REMOTE_RECEIPT,
    SERVER_NAME,
    Options,
    is_our_hook,
    is_our_remote,
    is_our_server,
    memverbs_executable,
    read_receipt,
    run_install,
    run_uninstall,
)
from memverbs.installers.files import read_text
from memverbs.installers.jsonc import JsonDoc, JsonEditError
from memverbs.installers.steps import CliCommand, Context, InstallError, JsonArrayItem, JsonEntry, TomlBlock
from memverbs.server.home import Home

STARTUP_TIMEOUT_S = 30
TOOL_TIMEOUT_S = 60
BEARER_ENV = {  # the Authorization value, in each harness's own env-var syntax
    Harness.OPENCODE: "Bearer {env:" + TOKEN_ENV + "}",
    Harness.OPENCLAW: "Bearer ${" + TOKEN_ENV + "}",
}
# The harnesses whose remote registration carries the hooks (all of them): `memverbs hook` reads the
# remote receipt and asks the remote brain, whether a harness runs it directly or through our plugin.
HOOKED = (Harness.CLAUDE, Harness.CODEX, Harness.GROK, Harness.OPENCODE, Harness.OPENCLAW)
HELPER = {Harness.CLAUDE: "headersHelper", Harness.CODEX: "http_headers_helper"}  # the key each gives its helper


def options(harness: Harness, *, home: Home | None = None, env: dict | None = None, dry_run: bool = False) -> Options:
    """Options for a remote registration: user scope, the remote receipt, and the lifecycle hooks;
    `memverbs hook` reads the remote receipt and asks the remote brain."""
    return Options(
        harness,
        scope="user",
        hooks=harness in HOOKED,
        dry_run=dry_run,
        home=home or Home.from_env(),
        env=dict(os.environ) if env is None else env,
        receipt=REMOTE_RECEIPT,
    )


def helper_command(record: RemoteRecord) -> str:
    """The shell command a headers helper runs: prints the Authorization header for the URL as JSON,
    from the keyring backend connect stored the token in."""
    command = f"{shlex.quote(memverbs_executable())} remote-header {shlex.quote(record.url)}"
    if record.token_store == "keyring" and record.keyring_backend:
        command += f" --keyring-backend {shlex.quote(record.keyring_backend)}"
    return command


def uses_helper(harness: Harness, token_store: str) -> bool:
    """Claude Code passes its whole environment to the helper; Codex only a minimal one, so with the
    token in the environment (no keyring) Codex reads it itself (bearer_token_env_var)."""
    return harness is Harness.CLAUDE or (harness is Harness.CODEX and token_store == "keyring")


def where_the_token_is(harness: Harness, token_store: str) -> str:
    """One line for connect's output: how this harness gets the token (it is in none of its files)."""
    if uses_helper(harness, token_store):
        source = "the OS keyring" if token_store == "keyring" else f"${TOKEN_ENV} (no keyring here)"
        return (
            f"{HELPER[harness]} runs `memverbs remote-header` at each connection; "
            f"it reads the token from {source} (${TOKEN_ENV} wins when set)"
        )
    how = {
        Harness.CODEX: f"bearer_token_env_var = {TOKEN_ENV}",
        Harness.GROK: f"bearer_token_env_var = {TOKEN_ENV}",
        Harness.OPENCODE: "{env:" + TOKEN_ENV + "} in the Authorization header",
        Harness.OPENCLAW: "${" + TOKEN_ENV + "} in the Authorization header",
    }[harness]
    export = (
        f'export {TOKEN_ENV}="$(memverbs remote-header --bare)"  (reads the keyring, writes nothing)'
        if token_store == "keyring"
        else f"export {TOKEN_ENV}='<the token>'"
    )
    line = f"reads the token from ${TOKEN_ENV} ({how}): set it where {harness.value} starts, e.g. {export}"
    if harness is Harness.OPENCLAW:
        line += "; a Gateway running as a service needs it in the service's environment"
    return line


# -- one plan per harness ------------------------------------------------------------------


def _refuse_foreign(harness: Harness, where: Path | str, entry: object) -> None:
    """An entry named memverbs that is not our remote one: the local server, or someone else's."""
    if entry is None or is_our_remote(entry):
        return
    if is_our_server(entry):
        raise InstallError(
            f"{harness.value} has the local memverbs server registered in {where}",
            f"A harness uses one brain: run `memverbs uninstall {harness.value}` first, "
            "or leave it out of --install.",
        )
    raise InstallError(
        f"{where} already has an MCP server named {SERVER_NAME!r} that memverbs did not write",
        "Rename or remove that entry, or leave this harness out of --install; memverbs will not overwrite it.",
    )


def _json_entry(path: Path, keys: list[str]) -> object | None:
    try:
        return JsonDoc(read_text(path) or "").get(keys)
    except JsonEditError:
        return None  # the step refuses the file with the parse error, untouched


def _toml_conflicts(harness: Harness):
    def conflicts(outside: dict) -> str | None:
        entry = (outside.get("mcp_servers") or {}).get(SERVER_NAME)
        if entry is None:
            return None
        if is_our_server(entry):
            return (
                f"[mcp_servers.{SERVER_NAME}] is the local memverbs server (`memverbs install {harness.value}`); "
                f"run `memverbs uninstall {harness.value}` first"
            )
        return f"[mcp_servers.{SERVER_NAME}] is already defined outside the memverbs remote block"

    return conflicts


def _plan_claude(opts: Options, record: RemoteRecord, notes: list[str]) -> list:
    cli = shutil.which(registry.COMMANDS[Harness.CLAUDE], path=opts.env.get("PATH"))
    if cli is None:
        raise InstallError("claude is not on PATH", "Install Claude Code first (its CLI writes ~/.claude.json), or leave it out.")
    existing = claude.registered_server(opts)
    _refuse_foreign(Harness.CLAUDE, claude.claude_json(opts), existing)
    entry = {"type": "http", "url": record.url, "headersHelper": helper_command(record)}
    add = [cli, "mcp", "add-json", SERVER_NAME, json.dumps(entry), "--scope", "user"]
    remove = [cli, "mcp", "remove", SERVER_NAME, "--scope", "user"]
    steps: list = []
    if existing is not None:
        steps.append(CliCommand(remove, [], "replace the previous remote registration", opts.env))
    steps.append(CliCommand(add, remove, "register the remote brain (user scope)", opts.env))
    return steps + claude.hook_steps(opts, notes)


def _plan_codex(opts: Options, record: RemoteRecord, notes: list[str]) -> list:
    server: dict = {"url": record.url}
    if uses_helper(Harness.CODEX, record.token_store):
        server["http_headers_helper"] = helper_command(record)
    else:
        server["bearer_token_env_var"] = TOKEN_ENV
    server["startup_timeout_sec"] = STARTUP_TIMEOUT_S
    hooks_file = codex.codex_home(opts) / "hooks.json"
    steps: list = [JsonArrayItem(hooks_file, ["hooks", event], codex.hook_group(opts, event), is_our_hook) for event in codex.EVENTS]

    def block(ctx: Context) -> dict:
        # The hooks are trusted in the same block, so disconnect removes the trust with the server.
        return {"mcp_servers": {SERVER_NAME: server}, "hooks": {"state": codex.trust_entries(hooks_file, ctx.read(hooks_file))}}

    notes.append("Codex hooks are trusted in config.toml ([hooks.state]); `memverbs doctor` re-checks the hashes.")
    return [
        *steps,
        TomlBlock(
            codex.codex_home(opts) / "config.toml",
            block,
            _toml_conflicts(Harness.CODEX),
            top={"mcp_optional_startup_grace_ms": codex.STARTUP_GRACE_MS},
            markers=toml_block.REMOTE,
        ),
    ]


def _plan_grok(opts: Options, record: RemoteRecord, notes: list[str]) -> list:
    server = {
        "url": record.url,
        "bearer_token_env_var": TOKEN_ENV,
        "enabled": True,
        "startup_timeout_sec": STARTUP_TIMEOUT_S,
        "tool_timeout_sec": TOOL_TIMEOUT_S,
    }
    config = grok.grok_home(opts) / "config.toml"
    block = TomlBlock(config, {"mcp_servers": {SERVER_NAME: server}}, _toml_conflicts(Harness.GROK), markers=toml_block.REMOTE)
    return [block, *_local_hook_steps(grok.plan, opts, notes)]


def _plan_opencode(opts: Options, record: RemoteRecord, notes: list[str]) -> list:
    path = opencode.config_file(opts)
    _refuse_foreign(Harness.OPENCODE, path, _json_entry(path, ["mcp", SERVER_NAME]))
    entry = {
        "type": "remote",
        "url": record.url,
        "headers": {"Authorization": BEARER_ENV[Harness.OPENCODE]},
        "oauth": False,  # a 401 means a missing token here, not an OAuth server to sign in to
        "enabled": True,
        "timeout": opencode.STARTUP_TIMEOUT_MS,
    }
    return [JsonEntry(path, ["mcp", SERVER_NAME], entry, is_our_remote, owner="remote"), *_local_hook_steps(opencode.plan, opts, notes)]


def _plan_openclaw(opts: Options, record: RemoteRecord, notes: list[str]) -> list:
    path = openclaw.config_path(opts)
    keys = ["mcp", "servers", SERVER_NAME]
    _refuse_foreign(Harness.OPENCLAW, path, _json_entry(path, keys))
    entry = {"url": record.url, "transport": "streamable-http", "headers": {"Authorization": BEARER_ENV[Harness.OPENCLAW]}}
    return [JsonEntry(path, keys, entry, is_our_remote, owner="remote"), *_local_hook_steps(openclaw.plan, opts, notes)]


def _local_hook_steps(local_plan, opts: Options, notes: list[str]) -> list:
    """The hook wiring of a harness's local install plan (Grok's hooks file and pull block, opencode's
    and OpenClaw's plugin): every step after its first, which registers the local server — the remote
    plan registers the remote one in its place. The hooks are the same: they find the remote receipt."""
    if not opts.hooks:
        return []
    steps, local_notes = local_plan(opts)
    assert isinstance(steps[0], (JsonEntry, TomlBlock)), "a local plan starts with its server entry"
    notes.extend(n for n in local_notes if "mcp add/remove" not in n)  # that note is about the local server
    return steps[1:]


PLANS = {
    Harness.CLAUDE: _plan_claude,
    Harness.CODEX: _plan_codex,
    Harness.GROK: _plan_grok,
    Harness.OPENCODE: _plan_opencode,
    Harness.OPENCLAW: _plan_openclaw,
}


def plan(opts: Options, record: RemoteRecord, notes: list[str] | None = None) -> list:
    if read_receipt(opts.home, opts.harness) is not None:
        raise InstallError(
            f"memverbs is installed into {opts.harness.value} with the local brain (`memverbs install {opts.harness.value}`)",
            f"A harness uses one brain: run `memverbs uninstall {opts.harness.value}` first, or leave it out of --install.",
        )
    return PLANS[opts.harness](opts, record, notes if notes is not None else [])


# -- what connect and disconnect call ----------------------------------------------------


def parse_harnesses(names: list[str]) -> list[Harness]:
    """Harness ids from --install, in order, once each (`all`: those on PATH); InstallError names an unknown one."""
    known = {h.value: h for h in registry.INSTALLABLE}
    if "all" in names:
        return registry.on_path()  # as `memverbs install all`: every harness whose CLI is on PATH
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InstallError(
            f"unknown harness {unknown[0]!r} in --install",
            f"Use a comma-separated list of: {', '.join(known)} (or all).",
        )
    return list(dict.fromkeys(known[n] for n in names))


def register(harness: Harness, record: RemoteRecord, *, home: Home | None = None, env: dict | None = None,
             dry_run: bool = False) -> dict:
    """Register the remote brain of `record` (its URL; where its token is) in `harness`,
    replacing an earlier remote registration there.

    Every step is rehearsed before the first byte is written (run_install); `dry_run`
    stops there and returns the changes. Raises InstallError, with nothing written."""
    opts = options(harness, home=home, env=env, dry_run=dry_run)
    notes: list[str] = []
    steps = plan(opts, record, notes)
    extra = {"surface": None, "remote_url": record.url, "token": where_the_token_is(harness, record.token_store)}
    return run_install(opts, steps, notes, extra=extra)


def unregister(harness: Harness, *, home: Home | None = None, env: dict | None = None) -> dict | None:
    """Undo `register` from the remote receipt; None when there is none. An entry someone replaced stays."""
    opts = options(harness, home=home, env=env)
    skip = None
    if harness is Harness.CLAUDE:
        entry = claude.registered_server(opts)
        if entry is not None and not is_our_remote(entry):
            skip = lambda record: record.get("kind") == "cli"  # noqa: E731 - `claude mcp remove` would remove theirs
    return run_uninstall(opts, skip)


def registered(home: Home) -> list[Harness]:
    """Harnesses that hold a remote registration (have a remote receipt)."""
    return [h for h in registry.INSTALLABLE if read_receipt(home, h, REMOTE_RECEIPT) is not None]
