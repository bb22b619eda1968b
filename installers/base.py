"""What every harness installer shares: the server command, the receipt, install and uninstall.

A harness module (claude.py, codex.py, …) only says *which* steps wire memverbs
into that harness. This module runs them: --dry-run prints their diffs, install
applies them and writes a receipt under `$MEMVERBS_HOME/integrations/<harness>/`,
and uninstall reverses exactly what the receipt records — and nothing else.
`memverbs connect --install` (installers/connection.py) runs the same
machinery with each harness's `remote_plan` and a receipt of its own,
`remote-receipt.json`, beside the local install's `receipt.json`; the helpers those
plans share are at the end of this module.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from memverbs.hooks.events import Harness
from memverbs.installers.command_steps import CliCommand
from memverbs.installers.files import atomic_write_through
from memverbs.installers.json_steps import JsonArrayItem, JsonArrayValue, JsonEntry
from memverbs.installers.steps import Context, InstallError, Step, remove_empty_dirs
from memverbs.installers.text_steps import LauncherFile, MarkedBlock, OwnedFile, TomlBlock
from memverbs.remote.record import TOKEN_ENV, RemoteRecord
from memverbs.server.home import DEFAULT_SOURCE, LOCAL_RECEIPT, Home

SERVER_NAME = "memverbs"
REMOTE_STARTUP_TIMEOUT_S = 30  # how long a harness waits for the remote brain's tools at start-up
REMOTE_TOOL_TIMEOUT_S = 60
HOOK_TIMEOUT_S = 10  # the harness's limit; the hook's own deadline is well inside it


@dataclass
class Options:
    harness: Harness
    scope: str = "user"
    surface: str = "verbs"
    hooks: bool = True
    dry_run: bool = False
    project_dir: Path = field(default_factory=Path.cwd)
    home: Home = field(default_factory=Home.from_env)
    env: dict = field(default_factory=lambda: dict(os.environ))
    receipt: str = LOCAL_RECEIPT

    @property
    def user_home(self) -> Path:
        return Path(self.env.get("HOME") or Path.home())


def memverbs_executable() -> str:
    """The absolute path of the installed `memverbs` command (what harnesses will spawn)."""
    beside = Path(sys.executable).parent / "memverbs"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("memverbs")
    if found:
        return str(Path(found).resolve())
    raise InstallError(
        "cannot find the installed `memverbs` command",
        "Install memverbs with pip (pip install memverbs) so the command exists, then run the install again.",
    )


def server_env(opts: Options) -> dict[str, str]:
    """MEMVERBS_HOME / MEMVERBS_SOURCE, only when not the defaults (a harness spawns with its own env)."""
    env: dict[str, str] = {}
    default_home = opts.user_home / ".memverbs"
    if opts.home.root.resolve() != default_home.resolve():
        env["MEMVERBS_HOME"] = str(opts.home.root.resolve())
    source = opts.env.get("MEMVERBS_SOURCE", "").strip()
    if source and source != DEFAULT_SOURCE:
        env["MEMVERBS_SOURCE"] = source
    return env


def server_argv(opts: Options) -> list[str]:
    return [memverbs_executable(), "serve", "--surface", opts.surface]


def launcher_path(opts: Options) -> Path:
    """Where the hook launcher of this home lives (hooks/launcher.py): `$MEMVERBS_HOME/bin/memverbs-hook`."""
    from memverbs.hooks.launcher import LAUNCHER_NAME  # noqa: PLC0415

    return opts.home.root.resolve() / "bin" / LAUNCHER_NAME


def launcher_step(opts: Options) -> LauncherFile:
    """The step that writes the hook launcher: every plan whose hooks run `hook_command` has it."""
    from memverbs.hooks.launcher import LAUNCHER_MARK, launcher_script  # noqa: PLC0415

    return LauncherFile(launcher_path(opts), launcher_script(), LAUNCHER_MARK)


def hook_command(opts: Options, moment: str) -> str:
    """The shell command a harness runs for a hook, with our env when it is not the default: the lean
    launcher (hooks/launcher.py), a file that starts the interpreter without `site` or the CLI's parser.
    A short line: Claude Code shows it to the model after a compaction."""
    env = " ".join(f"{k}={_quote(v)}" for k, v in server_env(opts).items())
    cmd = f"{_quote(str(launcher_path(opts)))} {moment} --harness {opts.harness.value}"
    return f"{env} {cmd}" if env else cmd


# What runs a hook of ours, in each form an install has written: the launcher file
# (`…/memverbs-hook MOMENT`), the bootstrap one-liner of earlier installs (`python -I -S -c '…'
# hook MOMENT`) and the console script (`memverbs hook MOMENT`). The moment is the word after.
_HOOK_RUN = re.compile(r"""(?:memverbs-hook['"]?|\shook)\s+([a-z][a-z-]*)""")


def hook_moment(command: object) -> str | None:
    """The moment a hook command of ours runs (`heartbeat`, `capture`, …); None when it is not ours."""
    text = str(command)
    if "memverbs" not in text:
        return None
    m = _HOOK_RUN.search(text)
    return m.group(1) if m else None


def is_our_hook(value: object) -> TypeGuard[dict[str, Any]]:
    """A hook group (Claude's format) that runs `memverbs hook …`, in any form an install wrote."""
    if not isinstance(value, dict):
        return False
    hooks = value.get("hooks")
    return isinstance(hooks, list) and any(isinstance(h, dict) and hook_moment(h.get("command", "")) for h in hooks)


def is_our_server(value: object) -> bool:
    """An MCP server entry that starts `memverbs serve` (any harness's shape).

    A remote entry (it has a `url`; `memverbs connect --install` writes those) is not: its
    helper command or URL may well contain both words."""
    if isinstance(value, dict) and "url" in value:
        return False
    text = json.dumps(value)
    return "memverbs" in text and "serve" in text


def is_our_remote(value: object) -> bool:
    """A remote MCP server entry `memverbs connect --install` wrote: a `url`, and the token from
    `memverbs remote-header` (a headers helper) or from $MEMVERBS_REMOTE_TOKEN — never inline."""
    if not isinstance(value, dict) or "url" not in value:
        return False
    text = json.dumps(value)
    return "remote-header" in text or TOKEN_ENV in text


def _quote(s: str) -> str:
    import shlex  # noqa: PLC0415

    return shlex.quote(s)


# -- receipts ---------------------------------------------------------------------


def receipt_path(home: Home, harness: Harness, name: str = LOCAL_RECEIPT) -> Path:
    return home.receipt(harness.value, name)


def read_receipt(home: Home, harness: Harness, name: str = LOCAL_RECEIPT) -> dict | None:
    try:
        return json.loads(receipt_path(home, harness, name).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def run_install(opts: Options, steps: list, notes: list[str], extra: dict | None = None) -> dict:
    backups = opts.home.backups / opts.harness.value
    # Rehearse every step against an overlay first: a file that does not parse, a
    # foreign entry in the way — any refusal comes before the first byte is written.
    rehearsal = Context(backups=backups, dry_run=True)
    for step in steps:
        step.apply(rehearsal)
    ctx = rehearsal if opts.dry_run else Context(backups=backups)
    records = [] if opts.dry_run else [step.apply(ctx) for step in steps]
    if opts.dry_run:
        return {"harness": opts.harness.value, "dry_run": True, "changes": ctx.commands + ctx.diffs(), "notes": notes}
    previous = read_receipt(opts.home, opts.harness, opts.receipt)
    receipt = {
        "harness": opts.harness.value,
        "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "scope": opts.scope,
        "surface": opts.surface,
        "hooks": opts.hooks,
        "steps": _merge(previous, records),
        "notes": notes,
        "backups": [str(p) for p in sorted(ctx.backed_up)],
        "created_dirs": sorted(set((previous or {}).get("created_dirs", [])) | set(ctx.created_dirs)),
        **(extra or {}),
    }
    atomic_write_through(receipt_path(opts.home, opts.harness, opts.receipt), json.dumps(receipt, indent=2) + "\n", default_mode=0o600)
    # What this run changed, for the summary (not kept in the receipt): the files whose bytes differ
    # (a write of the same bytes is skipped), and the harness commands that register something.
    # A re-install that changed no file and ran only the commands the receipt already had is a no-op.
    commands = [r["argv"] for r in records if r.get("kind") == "cli" and r.get("undo")]
    earlier = [r.get("argv") for r in (previous or {}).get("steps", []) if r.get("kind") == "cli"]
    changed = [{"path": str(path), "created": before is None, "deleted": not path.exists()}
               for path, before in ctx.originals.items()]
    same = previous is not None and not changed and all(c in earlier for c in commands)
    return {**receipt, "changed": {"files": changed, "commands": commands, "nothing": same}}


def _merge(previous: dict | None, records: list[dict]) -> list[dict]:
    """Fold a re-install into the earlier receipt.

    Steps this run did not redo stay recorded, so uninstall still finds them; and
    what the first run created (a file, parent objects) stays ours to remove,
    although the re-run found it already there.
    """
    if not previous:
        return records
    earlier = {_step_key(r): r for r in previous.get("steps", [])}
    for record in records:
        old = earlier.pop(_step_key(record), None)
        if old is None:
            continue
        if old.get("created_file"):
            record["created_file"] = True
        if old.get("created_parents"):
            record["created_parents"] = sorted(set(old["created_parents"]) | set(record.get("created_parents", [])))
    return list(earlier.values()) + records


def _step_key(record: dict) -> str:
    return json.dumps([record.get("kind"), record.get("path"), record.get("keys"), record.get("argv")])


OWNERS = {"remote": is_our_remote}  # a json_entry record's "owner": revert only while the entry is still ours


def run_uninstall(opts: Options, skip: Callable[[dict], bool] | None = None) -> dict | None:
    """Reverse the receipt's steps, last first; `skip(record)` leaves a step's change in place."""
    receipt = read_receipt(opts.home, opts.harness, opts.receipt)
    if receipt is None:
        return None
    ctx = Context(backups=opts.home.backups / opts.harness.value, dry_run=opts.dry_run)
    for record in reversed(receipt.get("steps", [])):
        kind = record["kind"]
        if skip is not None and skip(record):
            continue
        if kind == "json_entry":
            JsonEntry.revert(record, ctx, OWNERS.get(record.get("owner")))
        elif kind == "json_item":
            JsonArrayItem.revert(record, ctx, is_our_hook)
        elif kind == "toml_block":
            TomlBlock.revert(record, ctx)
        elif kind == "owned_file":
            if record.get("shared") and _recorded_elsewhere(opts, record):
                continue  # the hook launcher another harness's hooks still run
            OwnedFile.revert(record, ctx)
        elif kind == "cli":
            CliCommand.revert(record, ctx, opts.env if record.get("env") else None)
        elif kind == "marked_block":
            MarkedBlock.revert(record, ctx)
        elif kind == "json_value":
            JsonArrayValue.revert(record, ctx)
    if opts.dry_run:
        return {**receipt, "dry_run": True, "changes": ctx.commands + ctx.diffs()}
    remove_empty_dirs(receipt.get("created_dirs", []))
    receipt_path(opts.home, opts.harness, opts.receipt).unlink(missing_ok=True)
    return receipt


def _recorded_elsewhere(opts: Options, record: dict) -> bool:
    """Does another receipt of this home (another harness, or this one's other brain) record the file too?"""
    mine = receipt_path(opts.home, opts.harness, opts.receipt).resolve()
    for other in sorted(opts.home.integrations.glob("*/*.json")):
        if other.resolve() == mine:
            continue
        try:
            steps = json.loads(other.read_text(encoding="utf-8")).get("steps", [])
        except (OSError, ValueError, AttributeError):
            continue
        if any(isinstance(s, dict) and s.get("kind") == "owned_file" and s.get("path") == record["path"] for s in steps):
            return True
    return False


# -- what the remote plans share (each harness's `remote_plan`) -----------------------------


def helper_command(record: RemoteRecord) -> str:
    """The shell command a headers helper runs: prints the Authorization header for the URL as JSON,
    from the keyring backend connect stored the token in."""
    command = f"{_quote(memverbs_executable())} remote-header {_quote(record.url)}"
    if record.token_store == "keyring" and record.keyring_backend:
        command += f" --keyring-backend {_quote(record.keyring_backend)}"
    return command


def token_from_helper(key: str, token_store: str) -> str:
    """Connect's line for a harness whose `key` runs `memverbs remote-header` at each connection."""
    source = "the OS keyring" if token_store == "keyring" else f"${TOKEN_ENV} (no keyring here)"
    return f"{key} runs `memverbs remote-header` at each connection; it reads the token from {source} (${TOKEN_ENV} wins when set)"


def token_from_env(harness: str, how: str, token_store: str) -> str:
    """Connect's line for a harness that reads $MEMVERBS_REMOTE_TOKEN from its environment (`how`)."""
    export = (
        f'export {TOKEN_ENV}="$(memverbs remote-header --bare)"  (reads the keyring, writes nothing)'
        if token_store == "keyring"
        else f"export {TOKEN_ENV}='<the token>'"
    )
    return f"reads the token from ${TOKEN_ENV} ({how}): set it where {harness} starts, e.g. {export}"


def refuse_foreign(harness: Harness, where: Path | str, entry: object) -> None:
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


def json_entry_at(path: Path, keys: list[str]) -> object | None:
    """The value at `keys` in a JSON(C) file, None when absent or the file does not parse (the
    step then refuses the file with the parse error, untouched)."""
    from memverbs.installers.files import read_text  # noqa: PLC0415
    from memverbs.installers.jsonc import JsonDoc, JsonEditError  # noqa: PLC0415

    where: list[str | int] = [*keys]
    try:
        return JsonDoc(read_text(path) or "").get(where)
    except JsonEditError:
        return None


def remote_toml_conflicts(harness: Harness) -> Callable[[dict], str | None]:
    """A TOML block's conflict check for the remote server: `[mcp_servers.memverbs]` outside our block."""

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


def local_hook_steps(
    local_plan: Callable[[Options], tuple[list[Step], list[str]]], opts: Options, notes: list[str]
) -> list[Step]:
    """The hook wiring of a harness's local install plan (Grok's hooks file and pull block, opencode's
    and OpenClaw's plugin) for its remote registration: every step after the first, which registers
    the local server; the remote plan registers the remote one in its place. The hooks themselves are
    the same: `memverbs hook` finds the remote receipt and asks the remote brain."""
    if not opts.hooks:
        return []
    steps, local_notes = local_plan(opts)
    assert isinstance(steps[0], (JsonEntry, TomlBlock)), "a local plan starts with its server entry"
    notes.extend(n for n in local_notes if "mcp add/remove" not in n)  # that note is about the local server
    return steps[1:]
