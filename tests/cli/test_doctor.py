"""`memverbs doctor`, and what verb calls say, for a healthy home and each kind of broken one."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from runcli import CliResult, run_cli


def run(env: dict, *args: str) -> CliResult:
    return run_cli(*args, env=env)


def doctor_json(env) -> tuple[int, dict]:
    proc = run(env, "doctor", "--json")
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def check(report: dict, name: str) -> dict:
    [found] = [c for c in report["checks"] if c["name"] == name]
    return found


def assert_doctor_names(env, name: str, problem: str, fix: str) -> None:
    """Text mode: exit 1, a failed line naming the problem, then its fix; json mode agrees."""
    proc = run(env, "doctor")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    [at] = [i for i, line in enumerate(lines) if line.startswith(f"✗ {name}:")]
    assert problem in lines[at]
    assert lines[at + 1].strip().startswith("fix:") and fix in lines[at + 1]
    assert lines[-1] == "problems found"

    code, report = doctor_json(env)
    assert code == 1
    assert report["ok"] is False
    failed = check(report, name)
    assert failed["status"] == "fail"
    assert problem in failed["detail"]
    assert fix in failed["fix"]


def assert_verb_call_explains(env, *fragments: str) -> None:
    proc = run(env, "recall")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == ""
    assert "fix:" in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


def remember(home, fact: str) -> None:
    from memverbs.server.runtime import Runtime

    rt = Runtime(home)
    try:
        assert not rt.local_dispatcher().call("remember", {"fact": fact, "provenance": "test"}).is_error
    finally:
        rt.close()


def write_garbage_brain(home) -> None:
    for suffix in ("-wal", "-shm"):
        (home.root / f"brain.db{suffix}").unlink(missing_ok=True)
    (home.root / "brain.db").write_bytes(b"this is not an sqlite database, just garbage \x00\xff" * 400)


# -- healthy ------------------------------------------------------------------------


def test_doctor_reports_a_healthy_home(env):
    proc = run(env, "doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "healthy"
    assert "✗" not in proc.stdout
    assert "✓ brain:" in proc.stdout and "✓ schema:" in proc.stdout and "✓ config:" in proc.stdout


def test_doctor_json_shape(env):
    code, report = doctor_json(env)
    assert code == 0
    assert list(report) == ["ok", "checks"]
    assert report["ok"] is True
    assert {"home", "config", "brain", "schema"} <= {c["name"] for c in report["checks"]}
    for c in report["checks"]:
        assert list(c) == ["name", "status", "detail", "fix"]
        assert c["status"] in ("ok", "warn", "fail")
        assert isinstance(c["detail"], str) and c["detail"]
        assert c["status"] != "ok" or c["fix"] is None


def test_doctor_json_gives_a_fix_for_every_failure(env, home):
    home.config_path.write_text("mcp_surface = [\n")
    write_garbage_brain(home)

    code, report = doctor_json(env)

    assert code == 1 and report["ok"] is False
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert {c["name"] for c in failed} == {"config", "brain"}
    assert all(c["fix"] and c["fix"].strip() for c in failed)


# -- missing home / brain -------------------------------------------------------------


def test_doctor_without_a_home_says_run_init_and_creates_nothing(env, home):
    shutil.rmtree(home.root)
    assert_doctor_names(env, "home", "no memverbs home", "memverbs init")
    assert not home.root.exists()


def test_doctor_with_a_missing_brain_says_run_init(env, home):
    (home.root / "brain.db").unlink()
    assert_doctor_names(env, "brain", "no brain", "memverbs init")
    assert not (home.root / "brain.db").exists()


def test_verb_call_with_a_missing_brain_says_what_is_wrong_and_the_fix(env, home):
    (home.root / "brain.db").unlink()
    assert_verb_call_explains(env, "no brain", "memverbs init")
    assert not (home.root / "brain.db").exists()


def test_verb_call_without_a_home_says_what_is_wrong_and_the_fix(env, home):
    shutil.rmtree(home.root)
    assert_verb_call_explains(env, "no brain", "memverbs init")


# -- future schema --------------------------------------------------------------------


def mark_future_schema(home) -> None:
    with sqlite3.connect(home.root / "brain.db") as db:
        db.execute("INSERT INTO _migrations (name, applied_at) VALUES ('9999_from_the_future', 0)")


def test_doctor_names_a_future_schema_and_the_upgrade(env, home):
    remember(home, "Alice prefers tea")
    mark_future_schema(home)

    assert_doctor_names(env, "schema", "9999_from_the_future", "Upgrade memverbs")

    with sqlite3.connect(home.root / "brain.db") as db:
        assert db.execute("SELECT fact FROM facts").fetchall() == [("Alice prefers tea",)]
        assert ("9999_from_the_future",) in db.execute("SELECT name FROM _migrations").fetchall()


def test_verb_call_on_a_future_schema_refuses_and_changes_nothing(env, home):
    remember(home, "Alice prefers tea")
    mark_future_schema(home)

    assert_verb_call_explains(env, "9999_from_the_future", "Upgrade memverbs")
    proc = run(env, "remember", "Bob prefers coffee", "--provenance", "t")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr

    with sqlite3.connect(home.root / "brain.db") as db:
        assert db.execute("SELECT fact FROM facts").fetchall() == [("Alice prefers tea",)]


# -- config --------------------------------------------------------------------------


def test_doctor_names_a_malformed_config_and_the_fix(env, home):
    home.config_path.write_text('mcp_surface = "verbs\n[mcp\n')
    assert_doctor_names(env, "config", "not valid TOML", str(home.config_path))


def test_doctor_names_an_invalid_config_value_and_the_fix(env, home):
    home.config_path.write_text('mcp_surface = "everything"\n')
    assert_doctor_names(env, "config", "mcp_surface", str(home.config_path))


def test_doctor_names_an_unknown_config_key(env, home):
    home.config_path.write_text('mcp_surfce = "verbs"\n')
    assert_doctor_names(env, "config", "mcp_surfce", str(home.config_path))


@pytest.mark.parametrize(
    "content, problem",
    [('mcp_surface = "verbs\n[mcp\n', "not valid TOML"), ('mcp_surface = "everything"\n', "mcp_surface")],
    ids=["malformed", "invalid-value"],
)
def test_verb_call_with_a_broken_config_says_what_is_wrong_and_the_fix(env, home, content, problem):
    home.config_path.write_text(content)
    assert_verb_call_explains(env, problem, str(home.config_path))


# -- corrupt brain ---------------------------------------------------------------------


def test_doctor_names_a_corrupt_brain_and_the_fix(env, home):
    write_garbage_brain(home)
    before = (home.root / "brain.db").read_bytes()

    assert_doctor_names(env, "brain", "not a readable brain", "restore it from a backup")

    assert (home.root / "brain.db").read_bytes() == before


def test_verb_call_on_a_corrupt_brain_says_what_is_wrong_and_the_fix(env, home):
    write_garbage_brain(home)
    before = (home.root / "brain.db").read_bytes()

    assert_verb_call_explains(env, "corrupt", "backup")

    assert (home.root / "brain.db").read_bytes() == before


def test_init_does_not_overwrite_a_corrupt_brain(env, home):
    write_garbage_brain(home)
    before = (home.root / "brain.db").read_bytes()

    proc = run(env, "init")

    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "fix:" in proc.stderr
    assert (home.root / "brain.db").read_bytes() == before
