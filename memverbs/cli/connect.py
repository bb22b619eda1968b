"""`memverbs connect URL --token T` and `memverbs disconnect`: use a remote brain from this machine.

connect: normalise and validate the URL, smoke-test the token (`whoami`), keep
the token in the OS keyring (or, with no usable keyring, say so and store it
nowhere: the user sets `MEMVERBS_REMOTE_TOKEN`), record the connection in
`$MEMVERBS_HOME/remote.json` (never the token), and with `--install` register the
remote brain in harnesses (installers/remote.py). disconnect undoes each step.
`memverbs remote-header` is the helper those registrations run for the token.

Nothing is stored until the server has accepted the token and every harness
registration has been rehearsed.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from collections.abc import Sequence

from memverbs.cli.output import fail, print_json
from memverbs.cli.remote import TOKEN_ENV, RemoteError, RemoteRecord, TokenVault, normalise_url
from memverbs.server.brain.password import find_session_bus as _find_session_bus  # also reads a brain's password
from memverbs.server.home import Home

# -- registering the remote brain in harnesses (installers/remote.py) ---------------------------
#
# `--install claude,codex,grok,opencode,openclaw` registers the remote brain as the `memverbs` MCP
# server in each harness, with the token in none of their files: Claude Code and Codex run
# `memverbs remote-header URL` (a headers helper that reads the keyring, or $MEMVERBS_REMOTE_TOKEN);
# Grok, opencode and OpenClaw read $MEMVERBS_REMOTE_TOKEN from their environment. Each registration
# has its own receipt (`integrations/<harness>/remote-receipt.json`), which disconnect reverses.


def register_harnesses(harnesses: Sequence[str], record: RemoteRecord) -> list[str]:
    """Register the remote brain in each harness; returns those registered.

    All are rehearsed first, so a refusal (a foreign entry, a local install in the way, a
    file that does not parse) leaves every harness untouched. A failure while applying
    (a harness CLI erroring) stops there: the message names the ones already registered."""
    from memverbs.installers import remote  # noqa: PLC0415 - only connect pays for the installers
    from memverbs.installers.steps import InstallError  # noqa: PLC0415

    try:
        targets = remote.parse_harnesses(list(harnesses))
        for harness in targets:
            remote.register(harness, record, dry_run=True)
    except InstallError as exc:
        raise RemoteError(exc.message, exc.fix) from exc
    done: list[str] = []
    for harness in targets:
        try:
            remote.register(harness, record)
        except InstallError as exc:
            record.harnesses = done
            raise RemoteError(
                f"{harness.value}: {exc.message}" + (f" (registered so far: {', '.join(done)})" if done else ""),
                exc.fix,
            ) from exc
        done.append(harness.value)
    return done


def unregister_harnesses(harnesses: Sequence[str], record: RemoteRecord) -> list[str]:
    """Remove what `register_harnesses` added; returns the harnesses cleaned.

    Raises RemoteError after trying every one if any failed; `record.harnesses` then
    lists the ones still registered, so a later disconnect retries exactly those."""
    from memverbs.hooks.events import Harness  # noqa: PLC0415
    from memverbs.installers import remote  # noqa: PLC0415
    from memverbs.installers.steps import InstallError  # noqa: PLC0415

    cleaned: list[str] = []
    left: list[str] = []
    problems: list[InstallError] = []
    for name in harnesses:
        try:
            remote.unregister(Harness(name))
        except (InstallError, ValueError) as exc:
            left.append(name)
            problems.append(exc if isinstance(exc, InstallError) else InstallError(str(exc)))
            continue
        cleaned.append(name)
    if problems:
        record.harnesses = left
        raise RemoteError(
            f"could not unregister {', '.join(left)}: {problems[0].message}",
            problems[0].fix or "Fix that, then run `memverbs disconnect` again.",
        )
    return cleaned


# -- the commands -------------------------------------------------------------------------------


def _harness_list(args) -> list[str] | None:
    """The harness ids --install names (None when --install was not given)."""
    raw = getattr(args, "install", None)
    if raw is None:
        return None
    items = raw if isinstance(raw, (list, tuple)) else raw.split(",")
    return [h.strip() for h in items if h and h.strip()]


def _rehearse(harnesses: Sequence[str], url: str) -> None:
    """Every registration, dry-run: a refusal comes before the token is stored anywhere.
    (Where the token will be changes what is written, never whether it can be.)"""
    from memverbs.installers import remote  # noqa: PLC0415
    from memverbs.installers.steps import InstallError  # noqa: PLC0415

    try:
        for harness in remote.parse_harnesses(list(harnesses)):
            remote.register(harness, RemoteRecord(url=url, token_store="env"), dry_run=True)
    except InstallError as exc:
        raise RemoteError(exc.message, exc.fix) from exc


def run_connect(args) -> int:
    import anyio  # noqa: PLC0415

    from memverbs.cli.probe import describe, probe  # noqa: PLC0415
    from memverbs.server.timeparse import iso, now_ms  # noqa: PLC0415

    home = Home.from_env()
    try:
        url, warnings = normalise_url(args.url)
    except RemoteError as exc:
        return fail(exc.message, exc.fix, code=2)
    token = (args.token or "").strip()
    if not token:
        return fail("--token is empty", "Pass the token `memverbs auth create` printed on the server.", code=2)
    requested = _harness_list(args)
    if requested:
        from memverbs.installers import remote  # noqa: PLC0415
        from memverbs.installers.steps import InstallError  # noqa: PLC0415

        try:
            requested = [h.value for h in remote.parse_harnesses(requested)]
        except InstallError as exc:
            return fail(exc.message, exc.fix, code=2)
    for warning in warnings:
        print(f"memverbs: warning: {warning}", file=sys.stderr)
    try:
        report = anyio.run(probe, url, token)
        previous = RemoteRecord.load(home)
    except RemoteError as exc:
        return fail(exc.message, exc.fix)
    # Without --install, the harnesses registered for the previous connection stay registered
    # (re-pointed at this URL); with it, exactly the ones named are.
    earlier = list(previous.harnesses) if previous is not None else []
    wanted = requested if requested is not None else earlier
    try:
        _rehearse(wanted, url)
    except RemoteError as exc:
        return fail(exc.message, exc.fix)

    vault = TokenVault()
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
        connected_at=iso(now_ms()),
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
        return fail(f"cannot write {RemoteRecord.path(home)}: {exc.strerror}", f"Check that {home.root} is writable.")
    if problem is not None:
        return fail(problem.message, problem.fix)

    token_lines = _token_lines(record)
    if args.json:
        print_json({**report, "token_store": record.token_store, "keyring_backend": record.keyring_backend,
                    "env_var": None if stored.ok else TOKEN_ENV, "keyring_problem": None if stored.ok else stored.reason,
                    "record": str(RemoteRecord.path(home)),
                    "harnesses": [{"harness": h, "token": line} for h, line in token_lines]})
        return 0
    print(f"connected: {describe(report)}")
    if stored.ok:
        print(f"token stored in the OS keyring ({stored.backend}), service 'memverbs', user {url}")
    else:
        print(
            f"memverbs: the token was NOT stored: {stored.reason}.\n"
            f"  Set it in the environment of each harness that uses this brain instead:\n"
            f"    export {TOKEN_ENV}={shlex.quote(token)}\n"
            "  (memverbs never writes a token in plaintext on its own; install a keyring backend and run "
            "`memverbs connect` again to store it there.)",
            file=sys.stderr,
        )
    for harness, line in token_lines:
        print(f"registered in {harness} as the 'memverbs' MCP server: {line}")
    for name in (h for h in earlier if h not in record.harnesses):
        print(f"unregistered from {name}")
    return 0


def _token_lines(record: RemoteRecord) -> list[tuple[str, str]]:
    if not record.harnesses:
        return []
    from memverbs.hooks.events import Harness  # noqa: PLC0415
    from memverbs.installers.remote import where_the_token_is  # noqa: PLC0415

    return [(h, where_the_token_is(Harness(h), record.token_store)) for h in record.harnesses]


def run_disconnect(args) -> int:
    home = Home.from_env()
    try:
        record = RemoteRecord.load(home)
    except RemoteError as exc:
        return fail(exc.message, exc.fix)
    if record is None:
        if args.json:
            print_json({"disconnected": False, "reason": "not connected"})
        else:
            print("not connected to a remote brain: nothing to undo")
        return 0
    try:
        cleaned = unregister_harnesses(record.harnesses, record)
    except RemoteError as exc:
        record.save(home)  # the harnesses still registered, for the next try; the token stays for them
        return fail(exc.message, exc.fix)
    removed_token = TokenVault().delete(record.url)
    RemoteRecord.remove(home)
    if args.json:
        print_json({"disconnected": True, "url": record.url, "keyring_entry_removed": removed_token, "harnesses": cleaned})
        return 0
    print(f"disconnected from {record.url}" + (" (token removed from the keyring)" if removed_token else ""))
    for name in cleaned:
        print(f"  unregistered from {name}")
    if record.token_store == "env":
        print(f"  the token was never stored here: unset {TOKEN_ENV} where you exported it.")
    return 0


def run_remote_header(args) -> int:
    """`memverbs remote-header [URL] [--bare] [--keyring-backend B]`: what a harness's headers helper runs.

    Prints `{"Authorization": "Bearer <token>"}` (Claude Code's headersHelper and Codex's
    http_headers_helper both read a JSON object of headers), or with --bare the token
    alone, for `export MEMVERBS_REMOTE_TOKEN="$(memverbs remote-header --bare)"`. The
    token is $MEMVERBS_REMOTE_TOKEN when set, else the keyring's for the URL (default:
    the connected brain). Nothing but the header goes to stdout; a missing token exits 1."""
    import json  # noqa: PLC0415

    from memverbs.cli.remote import token_for  # noqa: PLC0415

    if args.url:
        try:
            url, _ = normalise_url(args.url)
        except RemoteError as exc:
            return fail(exc.message, exc.fix, code=2)
    else:
        try:
            record = RemoteRecord.load(Home.from_env())
        except RemoteError as exc:
            return fail(exc.message, exc.fix)
        if record is None:
            return fail("not connected to a remote brain", "Run `memverbs connect URL --token T`, or pass the URL.")
        url = record.url
    _find_session_bus()
    if args.keyring_backend:
        os.environ["PYTHON_KEYRING_BACKEND"] = args.keyring_backend  # keyring reads it when first used, below
    token = token_for(url)
    if not token:
        return fail(
            f"no token for {url}: not in the OS keyring and {TOKEN_ENV} is not set",
            f"Run `memverbs connect {url} --token T` again, or export {TOKEN_ENV}.",
        )
    if args.bare:
        print(token)
    else:
        print(json.dumps({"Authorization": f"Bearer {token}"}))
    return 0
