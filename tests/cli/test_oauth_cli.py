"""`memverbs auth approve | owner-password | clients`: the owner's side of OAuth, in process on a real brain."""

from __future__ import annotations

import json
import re

from oauth_support import oauth_grant
from runcli import run_cli

from memverbs.server.oauth import owner
from memverbs.server.runtime import Runtime


def test_approve_prints_a_one_time_code_alone_on_stdout(env, home):
    proc = run_cli("auth", "approve", env=env)
    assert proc.returncode == 0 and re.fullmatch(r"[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}\n", proc.stdout), proc.stdout
    assert "works once" in proc.stderr
    runtime = Runtime(home)
    try:
        assert owner.check(runtime.brain(), proc.stdout.strip()) and not owner.check(runtime.brain(), proc.stdout.strip())
    finally:
        runtime.close()
    as_json = json.loads(run_cli("auth", "approve", "--json", env=env).stdout)
    assert set(as_json) == {"code", "expires_at"}


def test_owner_password_is_kept_hashed_and_a_short_one_refused(env, home):
    short = run_cli("auth", "owner-password", env=env, stdin="short\n")
    assert short.returncode == 2 and "shorter than" in short.stderr and "fix:" in short.stderr
    assert run_cli("auth", "owner-password", env=env, stdin="a long enough passphrase\n").returncode == 0
    runtime = Runtime(home)
    try:
        brain = runtime.brain()
        assert owner.check(brain, "a long enough passphrase") and not owner.check(brain, "a long enough passphrase!")
        assert b"a long enough passphrase" not in (home.root / "brain.db").read_bytes()
    finally:
        runtime.close()
    assert run_cli("auth", "owner-password", "--clear", env=env).returncode == 0
    runtime = Runtime(home)
    try:
        assert not owner.check(runtime.brain(), "a long enough passphrase")
    finally:
        runtime.close()


def test_clients_lists_and_revokes(env, home):
    assert "no OAuth clients" in run_cli("auth", "clients", env=env).stdout
    runtime = Runtime(home)
    try:
        oauth_grant(runtime.brain(), runtime.source, client_id="abcdef-1234", scopes="read", surface="verbs")
    finally:
        runtime.close()
    table = run_cli("auth", "clients", env=env).stdout
    assert "abcdef-1234" in table and "read / verbs" in table
    missing = run_cli("auth", "clients", "--revoke", "nope", env=env)
    assert missing.returncode == 1 and "no live client" in missing.stderr and "fix:" in missing.stderr
    done = run_cli("auth", "clients", "--revoke", "abcdef", env=env)  # a unique prefix
    assert done.returncode == 0 and "revoked" in done.stdout
    assert json.loads(run_cli("auth", "clients", "--json", env=env).stdout) == []
    [revoked] = json.loads(run_cli("auth", "clients", "--all", "--json", env=env).stdout)
    assert revoked["client_id"] == "abcdef-1234" and revoked["revoked_at"] and revoked["scopes"] is None
