"""`memverbs auth`: bearer tokens for `memverbs serve --http` — create, list, revoke, test (OAuth: cli/oauth.py).

`create` prints the token once, alone on stdout (so `TOKEN=$(memverbs auth create ci)`
works); everything said about it goes to stderr. Only the token's hash is stored.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from memverbs.cli.output import fail, print_json
from memverbs.cli.style import print_aligned
from memverbs.server.errors import MemverbsError

if TYPE_CHECKING:
    import argparse

    from memverbs.server.brain.base import Brain
    from memverbs.server.runtime import Runtime


def run_auth(args: argparse.Namespace) -> int:
    if args.auth_command == "test":
        from memverbs.cli.probe import run_test  # noqa: PLC0415 - pulls in the MCP client

        return run_test(args)
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    runtime = Runtime()
    try:
        brain = runtime.brain()
        if args.auth_command == "create":
            return _create(args, runtime, brain)
        if args.auth_command == "list":
            return _list(args, brain)
        if args.auth_command in ("approve", "owner-password", "clients"):
            from memverbs.cli.oauth import run_oauth  # noqa: PLC0415

            return run_oauth(args, brain)
        return _revoke(args, brain)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    finally:
        runtime.close()


def _create(args: argparse.Namespace, runtime: Runtime, brain: Brain) -> int:
    from memverbs.server import tokens  # noqa: PLC0415
    from memverbs.server.brain.base import TokenNameTaken  # noqa: PLC0415
    from memverbs.server.people import OWNER, READ_PRIVATE  # noqa: PLC0415
    from memverbs.server.timeparse import iso, now_ms  # noqa: PLC0415

    problem = tokens.check_name(args.name)
    if problem:
        return fail(problem, "Name the token after who uses it, e.g. `memverbs auth create laptop`.", code=2)
    try:
        scopes = tokens.parse_scopes(args.scopes)
    except ValueError as exc:
        return fail(f"--scopes: {exc}", "Scopes are read, write and read:private, comma-separated: --scopes read or "
                    "--scopes read,write.", code=2)
    if args.person:
        person_name, person = args.person, brain.person_id(args.person)
        if person is None:
            return fail(f"--for: there is no person called {person_name!r}",
                        "See the brain's people with `memverbs people list`; add one with `memverbs people add NAME`.", code=2)
    else:
        # The person this home's brain login is: a teammate's home mints tokens for the teammate.
        person = brain.session_person()
        named = brain.person_name(person) if person else None
        if named is None:
            return fail("this home's brain login is none of the brain's people, so a token would act for nobody",
                        "Name the person with --for PERSON (`memverbs people list`), or have the brain's owner add this "
                        "login: `memverbs people add NAME --role LOGIN`.", code=2)
        person_name = named
    if READ_PRIVATE in scopes and person != OWNER and brain.backend != "postgres":
        # A SQLite brain is one person's file: it cannot keep one person's private rows from another's token.
        return fail("read:private is for the owner's tokens on a SQLite brain",
                    "Leave read:private out, or put the brain on Postgres, where each person's private rows are theirs "
                    "alone (`memverbs docs postgres`).", code=2)
    source = (args.source or "").strip() or runtime.source
    token = tokens.mint()
    now = now_ms()
    row = {
        "name": args.name,
        "scopes": tokens.scopes_text(scopes),
        "surface": args.surface,
        "source_id": source,
        "client_id": tokens.client_id_for(args.name),
    }
    try:
        brain.create_token(token_hash=tokens.digest(token), token_hint=tokens.hint(token), now=now, person=person, **row)
    except TokenNameTaken:
        return fail(
            f"a live token is already called {args.name!r}",
            f"Pick another name, or rotate it: `memverbs auth revoke {args.name}` then create it again.",
        )
    if args.json:
        print_json({"token": token, **row, "person": person_name, "created_at": iso(now)})
        return 0
    print(token)
    print(
        f"memverbs: token {args.name!r} created for {person_name} — scopes {row['scopes']}, surface {args.surface} (capped by the "
        f"server's --surface), source {source}, delta lane {row['client_id']}.\n"
        "  This is the only time it is shown: memverbs stores just its hash. On the machine that connects:\n"
        "  memverbs connect https://YOUR-HOST/mcp      (it asks for the token; or pipe it in)",
        file=sys.stderr,
    )
    return 0


def _list(args: argparse.Namespace, brain: Brain) -> int:
    from memverbs.server.timeparse import iso  # noqa: PLC0415

    names: dict[int, str] = {}

    def person(person_id: int) -> str:
        if person_id not in names:
            names[person_id] = brain.person_name(person_id) or f"person {person_id}"
        return names[person_id]

    rows = [
        {
            "name": r["name"],
            "person": person(int(r["person"])),
            "hint": r["token_hint"],
            "scopes": r["scopes"],
            "surface": r["surface"],
            "source_id": r["source_id"],
            "client_id": r["client_id"],
            "created_at": iso(r["created_at"]),
            "last_used_at": iso(r["last_used_at"]),
            "revoked_at": iso(r["revoked_at"]),
        }
        for r in brain.tokens(include_revoked=args.all)
    ]
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no access tokens (create one with `memverbs auth create NAME`)")
        return 0
    header = ("NAME", "FOR", "TOKEN", "SCOPES", "SURFACE", "SOURCE", "CREATED", "LAST USED", "REVOKED")
    table = [header] + [
        (r["name"], r["person"], r["hint"], r["scopes"], r["surface"], r["source_id"], r["created_at"][:16],
         (r["last_used_at"] or "never")[:16], (r["revoked_at"] or "-")[:16])
        for r in rows
    ]
    print_aligned(table if args.all else [row[:-1] for row in table])  # REVOKED only with --all
    return 0


def _revoke(args: argparse.Namespace, brain: Brain) -> int:
    from memverbs.server.timeparse import now_ms  # noqa: PLC0415

    if brain.revoke_token(args.name, now_ms()) == 0:
        return fail(f"no live token is called {args.name!r}", "See the live tokens with `memverbs auth list`.")
    if getattr(args, "json", False):
        print_json({"name": args.name, "revoked": True})
        return 0
    print(f"memverbs: token {args.name!r} revoked; requests with it are refused (401) from now on.")
    return 0
