"""`memverbs people`: the people a brain is shared with — add one (with their own Postgres role), list them.

A private fact or page belongs to the person who wrote it and is read by them alone (docs/postgres.md,
"People and privacy"). Person 1, `owner`, is always there: the SQLite file's user, or the role that
owns a Postgres brain's tables.
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


def run_people(args: argparse.Namespace) -> int:
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    runtime = Runtime()
    try:
        brain = runtime.brain()
        if args.people_command == "add":
            return _add(args, brain)
        return _list(args, brain)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    finally:
        runtime.close()


def _add(args: argparse.Namespace, brain: Brain) -> int:
    from memverbs.server import people  # noqa: PLC0415
    from memverbs.server.brain.people_store import PersonTaken  # noqa: PLC0415
    from memverbs.server.timeparse import now_ms  # noqa: PLC0415

    problem = people.check_name(args.name)
    if problem:
        return fail(problem, "Name the person as the team knows them, e.g. `memverbs people add alice`.", code=2)
    role = args.role or (args.name if args.create_role else None)
    postgres = brain.backend == "postgres"
    if role is not None and not postgres:
        return fail(
            "--role and --create-role are for a Postgres brain: a SQLite brain is one person's file, with no roles",
            "Leave them out (the person's tokens act for them), or move the brain to Postgres (`memverbs migrate`).",
            code=2,
        )
    done: list[str] = []
    existing = brain.person_named(args.name)
    if existing is not None and role is None:
        raise PersonTaken(f"person {args.name!r}")
    if role is not None:
        done += brain.grant_person_role(role, create=args.create_role)  # type: ignore[attr-defined]
    if existing is None:
        person_id = brain.add_person(args.name, role, now_ms())
        done.insert(0, f"added person {args.name!r} (id {person_id})")
    else:
        person_id = int(existing["id"])
        if existing["role"] != role:
            brain.set_person_role(args.name, role)
            done.insert(0, f"mapped person {args.name!r} to the role {role!r}")
    if args.json:
        print_json({"id": person_id, "name": args.name, "role": role, "done": done})
        return 0
    for line in done:
        print(f"memverbs: {line}", file=sys.stderr)
    print(
        f"  Their tokens: memverbs auth create NAME --for {args.name} (add --scopes read,write,read:private to let one read "
        "their private facts and pages)."
        + (f"\n  Their CLI: memverbs config set brain.url 'postgresql://{role}@HOST/DB' in their own home." if role else ""),
        file=sys.stderr,
    )
    return 0


def _list(args: argparse.Namespace, brain: Brain) -> int:
    from memverbs.server.people import OWNER, OWNER_NAME  # noqa: PLC0415
    from memverbs.server.timeparse import iso  # noqa: PLC0415

    owner_role = brain.owner_role() if brain.backend == "postgres" else None  # type: ignore[attr-defined]
    rows = [{"id": OWNER, "name": OWNER_NAME, "role": owner_role, "created_at": None}] + [
        {"id": r["id"], "name": r["name"], "role": r["role"], "created_at": iso(r["created_at"])} for r in brain.people()
    ]
    if args.json:
        print_json(rows)
        return 0
    table = [("ID", "NAME", "ROLE", "ADDED")] + [
        (str(r["id"]), r["name"], r["role"] or "-", (r["created_at"] or "-")[:16]) for r in rows
    ]
    print_aligned(table)
    return 0
