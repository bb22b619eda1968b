"""`memverbs auth approve | owner-password | clients`: the owner's side of OAuth for `serve --http`.

`approve` prints a one-time approval code alone on stdout; `owner-password` reads
the password from the terminal (or one line of stdin) and keeps its scrypt hash;
`clients` lists the registered clients with what they hold now, and `--revoke`
ends one at once: its next request is refused (401).
"""

from __future__ import annotations

import getpass
import sys
from typing import TYPE_CHECKING

from memverbs.cli.output import fail, print_json
from memverbs.cli.style import print_aligned

if TYPE_CHECKING:
    import argparse

    from memverbs.server.brain.base import Brain


def run_oauth(args: argparse.Namespace, brain: Brain) -> int:
    if args.auth_command == "approve":
        return _approve(args, brain)
    if args.auth_command == "owner-password":
        return _owner_password(args, brain)
    if args.revoke:
        return _revoke(args, brain)
    return _clients(args, brain)


def _approve(args: argparse.Namespace, brain: Brain) -> int:
    from memverbs.server.oauth import owner  # noqa: PLC0415
    from memverbs.server.timeparse import iso, now_ms  # noqa: PLC0415

    code = owner.new_approval_code(brain)
    expires = iso(now_ms() + owner.APPROVAL_TTL_S * 1000)
    if args.json:
        print_json({"code": code, "expires_at": expires})
        return 0
    print(code)
    print(f"memverbs: type this code on the consent page to approve one client; it works once, until {expires[:16]} UTC.",
          file=sys.stderr)
    return 0


def _owner_password(args: argparse.Namespace, brain: Brain) -> int:
    from memverbs.server.oauth import owner  # noqa: PLC0415
    from memverbs.server.timeparse import now_ms  # noqa: PLC0415

    if args.clear:
        brain.oauth_clear_owner_secrets("password", now_ms())
        print("memverbs: owner password removed; approve clients with `memverbs auth approve` codes.", file=sys.stderr)
        return 0
    if sys.stdin.isatty():
        password = getpass.getpass("owner password: ")
        if getpass.getpass("again: ") != password:
            return fail("the two passwords differ", "Run it again and type the same password twice.", code=2)
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if len(password) < owner.MIN_PASSWORD:
        return fail(f"the password is shorter than {owner.MIN_PASSWORD} characters",
                    "Choose a longer one (a passphrase), or use one-time codes: `memverbs auth approve`.", code=2)
    owner.set_password(brain, password)
    print("memverbs: owner password set (kept as a salted scrypt hash); the consent page accepts it from now on.",
          file=sys.stderr)
    return 0


def _clients(args: argparse.Namespace, brain: Brain) -> int:
    from memverbs.server.oauth.clients import client_rows  # noqa: PLC0415

    rows = client_rows(brain, include_revoked=args.all)
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no OAuth clients (a connector registers itself when it first connects; see `memverbs docs remote`)")
        return 0
    header = ("CLIENT ID", "NAME", "GRANT", "CALLBACK", "CREATED", "LAST USED", "REVOKED")
    table = [header] + [
        (r["client_id"], r["name"], f"{r['scopes']} / {r['surface']}" if r["scopes"] else "none (not approved or ended)",
         ", ".join(r["redirect_uris"])[:60], r["created_at"][:16], (r["last_used_at"] or "never")[:16],
         (r["revoked_at"] or "-")[:16])
        for r in rows
    ]
    print_aligned(table if args.all else [row[:-1] for row in table])  # REVOKED only with --all
    return 0


def _revoke(args: argparse.Namespace, brain: Brain) -> int:
    from memverbs.server.timeparse import now_ms  # noqa: PLC0415

    wanted = args.revoke.strip()
    live = brain.oauth_clients()
    exact = [c for c in live if c["client_id"] == wanted]
    matches = exact or [c for c in live if c["client_id"].startswith(wanted) and len(wanted) >= 4] or \
        [c for c in live if c["name"] == wanted]
    if len(matches) != 1:
        what = "no live client" if not matches else f"{len(matches)} live clients"
        return fail(f"{what} match {wanted!r}", "See the clients and their ids with `memverbs auth clients`; give the full id.")
    client = matches[0]
    brain.oauth_revoke_client(client["id"], now_ms())
    if getattr(args, "json", False):
        print_json({"client_id": client["client_id"], "name": client["name"], "revoked": True})
        return 0
    print(f"memverbs: client {client['name']!r} ({client['client_id']}) revoked; its next request is refused (401).")
    return 0
