"""`memverbs protocol conformance` never writes into the user's brain unless told to, and its calls
are never counted as the user's in the usage log."""

import json
import sqlite3

from runcli import run_cli


def conformance(env, *args):
    proc = run_cli("protocol", "conformance", "--json", *args, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def counts(home) -> tuple[int, int]:
    db = sqlite3.connect(home.root / "brain.db")
    try:
        return db.execute("SELECT count(*) FROM pages").fetchone()[0], db.execute("SELECT count(*) FROM facts").fetchone()[0]
    finally:
        db.close()


def test_the_default_run_leaves_the_users_brain_and_usage_log_alone(env, home):
    proc = conformance(env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"] is True, proc.stdout
    assert counts(home) == (0, 0)
    assert not home.usage_log.exists()


def test_certifying_your_own_brain_is_explicit_and_says_what_it_writes(env, home):
    proc = conformance(env, "--target", "self")
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"] is True, proc.stdout
    assert f"your brain in {home.root}" in proc.stderr
    assert "it writes one page (people/conformance-run-" in proc.stderr and "facts" in proc.stderr
    pages, facts = counts(home)
    assert pages == 1 and facts >= 1
    # Time-to-hello-world is measured from the usage log: the run's calls are not the user's.
    assert not home.usage_log.exists()
