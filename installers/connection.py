"""Connecting this machine to a remote brain, and disconnecting it: the workflow behind
`memverbs connect URL --token T [--install …]` and `memverbs disconnect`.

connect: every harness registration is rehearsed first (a refusal leaves everything as it
was and stores nothing), the token goes to the OS keyring (or, with no usable keyring,
nowhere: the user sets `MEMVERBS_REMOTE_TOKEN`), harnesses no longer wanted are
unregistered, the wanted ones registered, and the connection is recorded in
`$MEMVERBS_HOME/remote.json` (never the token) — also after a failure, so disconnect can
undo what was done. disconnect reverses each step.

Registering the remote brain in a harness runs the installers' machinery (steps rehearsed,
surgical edits, backups, a receipt) with the harness's `remote_plan` (its SPEC):

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
  `memverbs remote-header` or `$MEMVERBS_REMOTE_TOKEN` (installers/base.is_our_remote);
  in a TOML file it sits in a block with markers of its own (toml_block.REMOTE).
  Disconnect removes an entry only while it is still ours.
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
  finds the session bus at its standard address, and with no keyring (the token only in
  the environment) Codex gets `bearer_token_env_var`, which it reads from its own
  environment instead.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from memverbs.installers import registry
from memverbs.installers.base import Options, read_receipt, run_install, run_uninstall
from memverbs.installers.spec import HarnessSpec
from memverbs.installers.steps import InstallError, Step
from memverbs.remote.record import RemoteError, RemoteRecord
from memverbs.remote.vault import Stored, TokenVault
from memverbs.server.home import REMOTE_RECEIPT, Home


def options(spec: HarnessSpec, *, home: Home | None = None, env: dict | None = None, dry_run: bool = False) -> Options:
    """Options for a remote registration: user scope, the remote receipt, the hooks where the
    harness's remote registration carries them (`memverbs hook` reads the remote receipt and
    asks the remote brain)."""
    return Options(
        spec.harness,
        scope="user",
        hooks=spec.remote_hooks,
        dry_run=dry_run,
        home=home or Home.from_env(),
        env=dict(os.environ) if env is None else env,
        receipt=REMOTE_RECEIPT,
    )


def plan(spec: HarnessSpec, opts: Options, record: RemoteRecord, notes: list[str] | None = None) -> list[Step]:
    if read_receipt(opts.home, opts.harness) is not None:
        raise InstallError(
            f"memverbs is installed into {spec.name} with the local brain (`memverbs install {spec.name}`)",
            f"A harness uses one brain: run `memverbs uninstall {spec.name}` first, or leave it out of --install.",
        )
    return spec.remote_plan(opts, record, notes if notes is not None else [])


def parse_harnesses(names: Sequence[str]) -> list[HarnessSpec]:
    """The harnesses --install names, in order, once each (`all`: those on PATH); InstallError names an unknown one."""
    if "all" in names:
        return registry.on_path()  # as `memverbs install all`: every harness whose CLI is on PATH
    unknown = [n for n in names if n not in registry.BY_NAME]
    if unknown:
        raise InstallError(
            f"unknown harness {unknown[0]!r} in --install",
            f"Use a comma-separated list of: {', '.join(registry.BY_NAME)} (or all).",
        )
    return [registry.BY_NAME[n] for n in dict.fromkeys(names)]


def register(spec: HarnessSpec, record: RemoteRecord, *, home: Home | None = None, env: dict | None = None,
             dry_run: bool = False) -> dict:
    """Register the remote brain of `record` (its URL; where its token is) in one harness,
    replacing an earlier remote registration there.

    Every step is rehearsed before the first byte is written (run_install); `dry_run`
    stops there and returns the changes. Raises InstallError, with nothing written."""
    opts = options(spec, home=home, env=env, dry_run=dry_run)
    notes: list[str] = []
    steps = plan(spec, opts, record, notes)
    extra = {"surface": None, "remote_url": record.url, "token": spec.remote_token(record.token_store)}
    return run_install(opts, steps, notes, extra=extra)


def unregister(spec: HarnessSpec, *, home: Home | None = None, env: dict | None = None) -> dict | None:
    """Undo `register` from the remote receipt; None when there is none. An entry someone replaced stays."""
    opts = options(spec, home=home, env=env)
    return run_uninstall(opts, spec.remote_keep(opts) if spec.remote_keep is not None else None)


def registered(home: Home) -> list[HarnessSpec]:
    """Harnesses that hold a remote registration (have a remote receipt)."""
    return [spec for spec in registry.HARNESSES if read_receipt(home, spec.harness, REMOTE_RECEIPT) is not None]


def where_the_token_is(name: str, token_store: str) -> str:
    """One line for connect's output: how this harness gets the token (it is in none of its files)."""
    return registry.BY_NAME[name].remote_token(token_store)


# -- across harnesses -------------------------------------------------------------------------


def check_harnesses(names: Sequence[str]) -> list[str]:
    """The harness ids --install names, checked (`all` expanded); RemoteError names an unknown one."""
    try:
        return [spec.name for spec in parse_harnesses(names)]
    except InstallError as exc:
        raise RemoteError(exc.message, exc.fix) from exc


def rehearse(names: Sequence[str], url: str) -> None:
    """Every registration, dry-run: a refusal comes before the token is stored anywhere.
    (Where the token will be changes what is written, never whether it can be.)"""
    try:
        for spec in parse_harnesses(names):
            register(spec, RemoteRecord(url=url, token_store="env"), dry_run=True)
    except InstallError as exc:
        raise RemoteError(exc.message, exc.fix) from exc


def register_harnesses(names: Sequence[str], record: RemoteRecord) -> list[str]:
    """Register the remote brain in each harness; returns those registered.

    All are rehearsed first, so a refusal (a foreign entry, a local install in the way, a
    file that does not parse) leaves every harness untouched. A failure while applying
    (a harness CLI erroring) stops there: the message names the ones already registered,
    and `record.harnesses` lists them."""
    try:
        targets = parse_harnesses(names)
        for spec in targets:
            register(spec, record, dry_run=True)
    except InstallError as exc:
        raise RemoteError(exc.message, exc.fix) from exc
    done: list[str] = []
    for spec in targets:
        try:
            register(spec, record)
        except InstallError as exc:
            record.harnesses = done
            raise RemoteError(
                f"{spec.name}: {exc.message}" + (f" (registered so far: {', '.join(done)})" if done else ""),
                exc.fix,
            ) from exc
        done.append(spec.name)
    return done


def unregister_harnesses(names: Sequence[str], record: RemoteRecord) -> list[str]:
    """Remove what `register_harnesses` added; returns the harnesses cleaned.

    Raises RemoteError after trying every one if any failed; `record.harnesses` then
    lists the ones still registered, so a later disconnect retries exactly those."""
    cleaned: list[str] = []
    left: list[str] = []
    problems: list[InstallError] = []
    for name in names:
        spec = registry.BY_NAME.get(name)
        if spec is None:
            left.append(name)
            problems.append(InstallError(f"{name!r} is not a harness memverbs knows", "Edit it out of remote.json."))
            continue
        try:
            unregister(spec)
        except InstallError as exc:
            left.append(name)
            problems.append(exc)
            continue
        cleaned.append(name)
    if problems:
        record.harnesses = left
        raise RemoteError(
            f"could not unregister {', '.join(left)}: {problems[0].message}",
            problems[0].fix or "Fix that, then run `memverbs disconnect` again.",
        )
    return cleaned


# -- connect and disconnect -------------------------------------------------------------------


@dataclass
class Connected:
    """What `connect` did: the record it saved, where the token went, and the harnesses it dropped."""

    record: RemoteRecord
    stored: Stored
    unregistered: list[str] = field(default_factory=list)


def connect(home: Home, url: str, token: str, report: dict, requested: list[str] | None,
            vault: TokenVault | None = None) -> Connected:
    """Connect to the brain at `url` (normalised), whose server accepted `token` (`report` is the
    probe's account of it). `requested`: the harnesses to register (checked), or None to keep the
    previous connection's (re-pointed at this URL).

    Raises RemoteError; after a failure while registering, the record of what is registered is
    saved all the same, so `memverbs disconnect` can undo it."""
    from memverbs.server.timeparse import iso, now_ms  # noqa: PLC0415

    previous = RemoteRecord.load(home)
    earlier = list(previous.harnesses) if previous is not None else []
    wanted = requested if requested is not None else earlier
    rehearse(wanted, url)

    vault = vault or TokenVault()
    stored = vault.store(url, token)
    who = report.get("whoami") or {}
    record = RemoteRecord(
        url=url,
        token_store="keyring" if stored.ok else "env",
        keyring_backend=stored.backend if stored.ok else "",
        client_id=who.get("client_id"),
        scopes=list(who.get("scopes") or []),
        surface=report.get("surface"),
        source_id=who.get("source_id"),
        connected_at=iso(now_ms()) or "",
        harnesses=[h for h in earlier if h in wanted],
    )
    if previous is not None and previous.url != url and previous.token_store == "keyring":
        vault.delete(previous.url)  # one remote brain at a time: the old token goes
    problem: RemoteError | None = None
    try:
        dropped = [h for h in earlier if h not in wanted]
        if dropped:
            leaving = RemoteRecord(url=url, token_store=record.token_store, harnesses=list(dropped))
            try:
                unregister_harnesses(dropped, leaving)
            except RemoteError:
                record.harnesses = list(dict.fromkeys(record.harnesses + leaving.harnesses))
                raise
        registering = dataclasses.replace(record, harnesses=[])
        try:
            record.harnesses = list(dict.fromkeys(record.harnesses + register_harnesses(wanted, registering)))
        except RemoteError:
            record.harnesses = list(dict.fromkeys(record.harnesses + registering.harnesses))
            raise
    except RemoteError as exc:
        problem = exc
    try:
        record.save(home)  # also after a failure: what is registered must stay undoable by disconnect
    except OSError as exc:
        raise RemoteError(f"cannot write {RemoteRecord.path(home)}: {exc.strerror}", f"Check that {home.root} is writable.") from exc
    if problem is not None:
        raise problem
    return Connected(record, stored, [h for h in earlier if h not in record.harnesses])


@dataclass
class Disconnected:
    record: RemoteRecord
    cleaned: list[str]
    token_removed: bool


def disconnect(home: Home) -> Disconnected | None:
    """Unregister the remote brain from every harness connect wired, forget its token and the
    record; None when not connected. Raises RemoteError, after saving which harnesses are still
    registered (the token stays for them), when one could not be unregistered."""
    record = RemoteRecord.load(home)
    if record is None:
        return None
    try:
        cleaned = unregister_harnesses(record.harnesses, record)
    except RemoteError:
        record.save(home)
        raise
    removed = TokenVault().delete(record.url)
    RemoteRecord.remove(home)
    return Disconnected(record, cleaned, removed)
