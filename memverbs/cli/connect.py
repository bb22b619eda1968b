"""`memverbs connect URL --token T` and `memverbs disconnect`: use a remote brain from this machine.

connect: normalise and validate the URL, smoke-test the token (`whoami`), keep
the token in the OS keyring (or, with no usable keyring, say so and store it
nowhere: the user sets `MEMVERBS_REMOTE_TOKEN`), record the connection in
`$MEMVERBS_HOME/remote.json` (never the token), then hand over to the harness
registration seam below. disconnect undoes each step.

Nothing is stored until the server has accepted the token.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from memverbs.cli.output import fail, print_json
from memverbs.cli.remote import TOKEN_ENV, RemoteError, RemoteRecord, TokenVault, normalise_url
from memverbs.server.home import Home


# -- the seam the harness installers fill ------------------------------------------------------
#
# `memverbs connect URL --token T --install claude,codex,grok,opencode,openclaw` registers the
# remote brain as the `memverbs` MCP server in each chosen harness. That part belongs to the
# installers (installers/, one module per harness, with their atomic config editing and receipts);
# connect calls these two functions and nothing else, so wiring it up means:
#
#   1. add `--install` to the `connect` parser in memverbs/cli/main.py (a comma-separated list of
#      harness ids; `args.install` is read below with getattr, so nothing else changes here);
#   2. implement `register_harnesses` / `unregister_harnesses` on top of the installers.
#
# What a registration gets: `record.url` (normalised, ends in /mcp); where the token is
# (`record.token_store` is "keyring" — read it with `memverbs.cli.remote.token_for(url)`, e.g. from
# a headers-helper command — or "env": the user exports `record.env_var`). Keep the token out of
# harness config files where the harness allows it (env-var indirection, a headers helper); where
# a harness can only take it inline, write the file 0600 and say so. Return the harness ids
# actually registered: connect stores them in remote.json, and disconnect passes them back.


def register_harnesses(harnesses: Sequence[str], record: RemoteRecord) -> list[str]:
    """Register the remote brain in each harness; returns those registered. (Seam: see above.)"""
    if harnesses:
        raise RemoteError(
            f"registering harnesses ({', '.join(harnesses)}) is not available in this build",
            "Register the server in the harness by hand for now (see the README's \"Remote brains\").",
        )
    return []


def unregister_harnesses(harnesses: Sequence[str], record: RemoteRecord) -> list[str]:
    """Remove what `register_harnesses` added; returns the harnesses cleaned. (Seam: see above.)"""
    return []


# -- the commands -------------------------------------------------------------------------------


def _harness_list(args) -> list[str]:
    raw = getattr(args, "install", None) or ""
    items = raw if isinstance(raw, (list, tuple)) else raw.split(",")
    return [h.strip() for h in items if h and h.strip()]


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
    for warning in warnings:
        print(f"memverbs: warning: {warning}", file=sys.stderr)
    try:
        report = anyio.run(probe, url, token)
        previous = RemoteRecord.load(home)
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
    )
    if previous is not None and previous.url != url and previous.token_store == "keyring":
        vault.delete(previous.url)  # one remote brain at a time: the old token goes
    try:
        record.harnesses = register_harnesses(_harness_list(args), record)
        record.save(home)
    except RemoteError as exc:
        return fail(exc.message, exc.fix)
    except OSError as exc:
        return fail(f"cannot write {RemoteRecord.path(home)}: {exc.strerror}", f"Check that {home.root} is writable.")

    if args.json:
        print_json({**report, "token_store": record.token_store, "keyring_backend": record.keyring_backend,
                    "env_var": None if stored.ok else TOKEN_ENV, "keyring_problem": None if stored.ok else stored.reason,
                    "record": str(RemoteRecord.path(home))})
        return 0
    print(f"connected: {describe(report)}")
    if stored.ok:
        print(f"token stored in the OS keyring ({stored.backend}), service 'memverbs', user {url}")
    else:
        print(
            f"memverbs: the token was NOT stored: {stored.reason}.\n"
            f"  Set it in the environment of each harness that uses this brain instead:\n"
            f"    export {TOKEN_ENV}='<the token>'\n"
            "  (memverbs never writes a token in plaintext on its own; install a keyring backend and run "
            "`memverbs connect` again to store it there.)",
            file=sys.stderr,
        )
    return 0


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
        return fail(exc.message, exc.fix)
    removed_token = TokenVault().delete(record.url)
    RemoteRecord.remove(home)
    if args.json:
        print_json({"disconnected": True, "url": record.url, "keyring_entry_removed": removed_token, "harnesses": cleaned})
        return 0
    print(f"disconnected from {record.url}" + (" (token removed from the keyring)" if removed_token else ""))
    if record.token_store == "env":
        print(f"  the token was never stored here: unset {TOKEN_ENV} where you exported it.")
    return 0
