"""`memverbs brain-password`: a Postgres brain's password in the OS keyring, against a real server.

The role is the test servers' password-checked one (tests/support/postgres.py: scram-sha-256 on
the unix socket, so no password means no connection). The keyring is a real file-based backend
from PyPI (keyrings.alt's PlaintextKeyring, chosen explicitly as a user would) in throwaway XDG
folders; HOME and PGPASSFILE point at empty places so no ~/.pgpass of this machine answers instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from postgres import PASSWORD, PASSWORD_ROLE

from memverbs.server.brain import password as pw
from memverbs.server.brain.factory import locate
from memverbs.server.home import Home

PLAINTEXT = "keyrings.alt.file.PlaintextKeyring"


@pytest.fixture
def brain_backend() -> str:
    return "postgres"


@pytest.fixture
def role_url(pg):
    """An empty database owned by the password role, and its URL without a password."""
    name = "pw_" + uuid.uuid4().hex[:10]
    pg.admin(f'CREATE DATABASE "{name}" OWNER {PASSWORD_ROLE} TEMPLATE template0')
    yield pg.url(name, user=PASSWORD_ROLE)
    pg.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def machine(tmp_path, role_url) -> dict:
    """A user's environment: their own home, keyring folders and no password anywhere libpq looks."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVERBS_", "PYTHON_KEYRING", "XDG_", "PG"))}
    env |= {
        "HOME": str(tmp_path / "user"),
        "MEMVERBS_HOME": str(tmp_path / "user" / ".memverbs"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "PGPASSFILE": str(tmp_path / "no-pgpass"),
        "PYTHON_KEYRING_BACKEND": PLAINTEXT,
    }
    (tmp_path / "user").mkdir()
    return env


def run(cmd, env, *args, stdin: str | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([*cmd, *args], env=env, input=stdin, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert PASSWORD not in proc.stdout + proc.stderr  # never printed, whatever happened
    return proc


def files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def keyring_holds(env: dict, key: str) -> str:
    """What a separate process reads through keyring itself: the entry really is in the backend."""
    code = f"import keyring; print(keyring.get_password('memverbs', {key!r}))"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60).stdout.strip()


def test_the_password_lives_in_the_keyring_and_every_path_finds_it(memverbs_cmd, machine, role_url, tmp_path):
    env = machine
    home = Path(env["MEMVERBS_HOME"])
    key = pw.brain_key(role_url)
    assert run(memverbs_cmd, env, "config", "set", "brain.url", role_url).returncode == 0

    # No password anywhere: the server refuses, and the fix names the keyring command.
    refused = run(memverbs_cmd, env, "init")
    assert refused.returncode == 1 and "refused the credentials" in refused.stderr
    assert "it refused the password libpq found in ~/.pgpass" in refused.stderr, refused.stderr
    assert "memverbs brain-password set" in refused.stderr

    # A wrong password is checked against the server and stored nowhere.
    wrong = run(memverbs_cmd, env, "brain-password", "set", stdin="Wr0ng-" + PASSWORD[::-1] + "\n")
    assert wrong.returncode == 1 and "refused the credentials" in wrong.stderr
    assert "it refused the password given to `memverbs brain-password set`" in wrong.stderr, wrong.stderr
    assert "keyring" not in wrong.stderr.split("(")[0] and "keeps in the OS keyring" not in wrong.stderr
    assert "Wr0ng-" not in wrong.stderr
    assert not pw.record_path(home).exists() and not (tmp_path / "xdg-data").exists()

    stored = run(memverbs_cmd, env, "brain-password", "set", "--json", stdin=PASSWORD + "\n")
    assert stored.returncode == 0, stored.stderr
    report = json.loads(stored.stdout)
    assert (report["stored"], report["keyring_backend"], report["user"]) == (True, PLAINTEXT, key)
    assert keyring_holds(env, key) == PASSWORD
    assert files_containing(home, PASSWORD) == []  # not in config.toml, not in the note
    assert json.loads(pw.record_path(home).read_text())["brains"][key]["keyring_backend"] == PLAINTEXT

    assert run(memverbs_cmd, env, "init").returncode == 0
    saved = run(memverbs_cmd, env, "remember", "Deploys freeze on Fridays", "--provenance", "t", "--entity", "teams/infra")
    assert saved.returncode == 0, saved.stderr
    saved_at = time.monotonic()

    # A process started without the user's keyring choice (a harness runs hooks and servers with
    # less of the environment) reads the backend the note names.
    bare = {k: v for k, v in env.items() if k != "PYTHON_KEYRING_BACKEND"}
    recalled = run(memverbs_cmd, bare, "recall", "--entity", "teams/infra")
    assert "Deploys freeze on Fridays" in recalled.stdout, recalled.stderr
    # The fact is older than delta's in-flight window before the session starts, so the session-start
    # cursor is past it and the change check below can answer "nothing new" (it errs towards "changed"
    # for anything inside the window).
    time.sleep(max(0.0, 2.2 - (time.monotonic() - saved_at)))
    hook = run(memverbs_cmd, bare, "hook", "session-start", "--harness", "claude",
               stdin=json.dumps({"session_id": "s-kr", "hook_event_name": "SessionStart", "source": "startup"}))
    assert hook.returncode == 0 and "Deploys freeze on Fridays" in hook.stdout, hook.stderr
    # the heartbeat's change check connects on its own (server/brain/plain.py): with the keyring's password too
    time.sleep(2.2)  # past delta's in-flight lag, which the session-start cursor trails by
    beat = run(memverbs_cmd, bare, "hook", "heartbeat", "--harness", "claude",
               stdin=json.dumps({"session_id": "s-kr", "hook_event_name": "UserPromptSubmit", "prompt": "hi"}))
    assert (beat.returncode, beat.stdout) == (0, "")
    assert json.loads((home / "logs" / "hooks.jsonl").read_text().splitlines()[-1])["code"] == "unchanged"

    doctor = run(memverbs_cmd, bare, "doctor", "--json")
    brain = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "brain")
    assert brain["status"] == "ok" and f"password: the OS keyring ({PLAINTEXT})" in brain["detail"], brain
    status = json.loads(run(memverbs_cmd, bare, "brain-password", "status", "--json").stdout)
    assert (status["password_from"], status["in_keyring"]) == (f"the OS keyring ({PLAINTEXT})", True)

    # PGPASSWORD beats the keyring (the environment first, as for provider keys): a wrong one is refused.
    overridden = run(memverbs_cmd, {**bare, "PGPASSWORD": "not-it"}, "recall")
    assert overridden.returncode == 1 and "refused the credentials" in overridden.stderr

    gone = run(memverbs_cmd, env, "brain-password", "delete")
    assert gone.returncode == 0 and "removed from the OS keyring" in gone.stdout
    assert keyring_holds(env, key) == "None" and pw.load_notes(home) == {}
    after = run(memverbs_cmd, env, "recall")
    assert after.returncode == 1 and "refused the credentials" in after.stderr


def test_set_refuses_what_it_cannot_use(memverbs_cmd, machine, role_url, pg):
    env = machine
    home = Path(env["MEMVERBS_HOME"])
    # a SQLite brain has no password
    sqlite = run(memverbs_cmd, env, "brain-password", "set", stdin=PASSWORD + "\n")
    assert sqlite.returncode == 2 and "SQLite file" in sqlite.stderr
    # a URL that carries its own password: that one wins, so storing another would mislead
    with_pw = pg.url(role_url.split("@/", 1)[1].split("?", 1)[0], user=PASSWORD_ROLE, password=PASSWORD)
    carried = run(memverbs_cmd, env, "brain-password", "set", "--url", with_pw, stdin=PASSWORD + "\n")
    assert carried.returncode == 1 and "carries its own password" in carried.stderr and "***" in carried.stderr
    # no keyring backend: nothing stored, and the fix gives the other ways in
    failing = run(memverbs_cmd, {**env, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
                  "brain-password", "set", "--url", role_url, stdin=PASSWORD + "\n")
    assert failing.returncode == 1 and "NOT stored" in failing.stderr and "PGPASSWORD" in failing.stderr
    assert not pw.record_path(home).exists()
    # an empty line is no password
    empty = run(memverbs_cmd, env, "brain-password", "set", "--url", role_url, stdin="\n")
    assert empty.returncode == 2 and "no password given" in empty.stderr


def test_a_wrong_keyring_password_is_refused_without_showing_it(machine, role_url, monkeypatch):
    """Through the factory in-process: the stored password is wrong, the error names the keyring, not the password."""
    import keyring.core

    from memverbs.server.brain.factory import open_brain
    from memverbs.server.errors import BrainError

    for k, v in machine.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    home = Home(Path(machine["MEMVERBS_HOME"]))
    wrong = "Wr0ng-" + PASSWORD[::-1]
    keyring.core.load_keyring(PLAINTEXT).set_password(pw.SERVICE, pw.brain_key(role_url), wrong)
    pw.save_notes(home.root, {pw.brain_key(role_url): {"keyring_backend": PLAINTEXT}})
    where = locate(role_url, home, "brain.db")
    assert where.keyring == PLAINTEXT and wrong not in repr(where) + str(where)
    with pytest.raises(BrainError) as caught:
        open_brain(where, create=True)
    text = caught.value.message + caught.value.fix
    assert "refused the credentials" in text and "keeps in the OS keyring" in text and wrong not in text


def test_the_key_names_the_database_not_the_spelling():
    same = [
        "postgresql://ann@db.internal/memverbs",
        "postgres://ann@db.internal:5432/memverbs?sslmode=require",
        "postgresql://ann:hunter2@db.internal/memverbs",
        "postgresql:///memverbs?host=db.internal&user=ann",
    ]
    assert {pw.brain_key(u) for u in same} == {"brain:postgresql://ann@db.internal:5432/memverbs"}
    assert pw.brain_key("postgresql://ann@db.internal/other") != pw.brain_key(same[0])
    assert pw.brain_key("postgresql://bob@db.internal/memverbs") != pw.brain_key(same[0])
    assert "hunter2" not in pw.brain_key(same[2])
    assert pw.url_password(same[2]) == "hunter2" and pw.url_password("postgresql://a@h/d?password=x%20y") == "x y"
    assert pw.url_password(same[0]) is None


def test_no_note_no_keyring_import(tmp_path):
    """A Postgres brain whose password lives elsewhere never pays for keyring's backend discovery,
    nor does a URL that carries a password even when a note exists."""
    code = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from memverbs.server.brain import password as pw\n"
        "from memverbs.server.brain.factory import locate\n"
        "from memverbs.server.home import Home\n"
        f"home = Home(Path({str(tmp_path)!r}))\n"
        "pw.save_notes(home.root, {pw.brain_key('postgresql://a@h/withnote'): {'keyring_backend': ''}})\n"
        "a = locate('postgresql://a@h/nonote', home, 'brain.db')\n"
        "b = locate('postgresql://a:pw@h/withnote', home, 'brain.db')\n"
        "c = locate('postgresql://a@h/withnote', home, 'brain.db')\n"
        "print(json.dumps([a.keyring, b.keyring, c.keyring, pw.keyring_password(a.url, a.keyring), 'keyring' in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert json.loads(proc.stdout) == [None, None, "", None, False], proc.stderr


def test_doctor_says_when_the_noted_keyring_entry_is_gone(machine, role_url, monkeypatch):
    from memverbs.server.brain.postgres_health import postgres_checks

    for k, v in machine.items():
        monkeypatch.setenv(k, v)
    home = Home(Path(machine["MEMVERBS_HOME"]))
    pw.save_notes(home.root, {pw.brain_key(role_url): {"keyring_backend": PLAINTEXT}})  # noted, never stored
    rows = postgres_checks(locate(role_url, home, "brain.db"))
    assert [(r[0], r[1]) for r in rows] == [("brain", "fail")]
    assert "has no password for this brain" in rows[0][2] and "brain-password set" in rows[0][3]


def test_config_keeps_no_password_and_prints_none(memverbs_cmd, machine, pg, role_url):
    env = machine
    home = Path(env["MEMVERBS_HOME"])
    with_pw = pg.url(role_url.split("@/", 1)[1].split("?", 1)[0], user=PASSWORD_ROLE, password=PASSWORD)
    refused = run(memverbs_cmd, env, "config", "set", "brain.url", with_pw)  # run() checks it is never printed
    assert refused.returncode == 2 and "brain-password set" in refused.stderr
    assert not home.exists() or files_containing(home, PASSWORD) == []
    # a password given in the environment still works, and `config get` shows it as ***
    shown = run(memverbs_cmd, {**env, "MEMVERBS_BRAIN__URL": with_pw}, "config", "get", "brain.url", "--json")
    assert shown.returncode == 0 and "***" in json.loads(shown.stdout)["brain.url"]
