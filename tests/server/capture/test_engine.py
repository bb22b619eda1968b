"""Capture into a real brain (every backend): the private session page linked to the project, the
facts with their provenance, idempotency, the settings, and no secret or private text stored."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from memverbs.server.capture.engine import apply_plan, plan_capture
from memverbs.server.capture.plan import CaptureOptions
from memverbs.server.capture.reading import read_transcript

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "capture"  # recorded from the real binaries
SECRETS = ("sk-proj-Q9vXw2LmT4pRz8KdYc3NbHf6", "Tr0ub4dor-3x", "AKIAQ3EGUWXZ5MPLE7KD",
           "ghp_R2d2C3poBb8Yoda4LukeLeia5HanSolo9Chewie", "hunter2-correct-horse")


@pytest.fixture
def project(tmp_path) -> Path:
    """A git project named `calc` (projects/calc), where the recorded sessions are replayed."""
    root = tmp_path / "calc"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "https://github.com/acme/calc.git"], check=True)
    return root


def transcript(name: str, project: Path, tmp_path: Path):
    """A recorded transcript whose working directory is `project` (recordings say /bench/project)."""
    path = tmp_path / f"{name}.jsonl"
    path.write_text((DATA / f"{name}.jsonl").read_text().replace("/bench/project", str(project)))
    return read_transcript(path)


def capture(runtime, t, **options):
    opts = CaptureOptions(**options)
    plan = plan_capture(t, opts)
    return apply_plan(plan, runtime.local_dispatcher(project=plan.project), opts)


def test_a_session_becomes_a_private_page_and_facts_filed_under_its_project(runtime, local, remote, project, tmp_path):
    t = transcript("claude-fix-and-commit", project, tmp_path)
    result = capture(runtime, t)
    assert result.page == "created" and result.facts == {"inserted": 2}, result  # commits are events: on the page
    slug = result.plan.page_slug
    assert slug.startswith("sessions/") and slug.endswith("-claude-" + t.session_id.replace("-", "")[:8])
    page = local.ok("get_page", slug=slug)
    assert page["visibility"] == "private" and page["type"] == "session"
    assert "[[projects/calc]]" in page["body"] and "calc.py" in page["body"] and "5531" not in page["body"]
    assert "## Events" in page["body"] and "Record the fix" in page["body"]
    assert remote("get_page", slug=slug)[1]  # an untrusted caller never sees it
    facts = local.ok("recall", entity="projects/calc")["facts"]
    assert {f["provenance"] for f in facts} == {f"capture:claude session {t.session_id}"}
    assert "From now on, run pytest with -q in this repo." in [f["fact"] for f in facts]
    assert {f["visibility"] for f in facts} == {"world"}  # the brain's default, as remember's


def test_capturing_the_same_session_twice_stores_nothing_new(runtime, local, project, tmp_path):
    t = transcript("codex-decision", project, tmp_path)
    first = capture(runtime, t)
    page = local.ok("get_page", slug=first.plan.page_slug)
    again = capture(runtime, t)
    assert again.page == "unchanged" and again.facts == {"duplicate": 2}, again
    assert local.ok("get_page", slug=first.plan.page_slug)["updated_at"] == page["updated_at"]
    assert len(local.ok("recall", entity="projects/calc")["facts"]) == 2


def test_settings_private_facts_no_page_cap_and_excluded_projects(runtime, local, remote, project, tmp_path):
    t = transcript("claude-fix-and-commit", project, tmp_path)
    result = capture(runtime, t, visibility="private", session_page="off", max_facts=1)
    assert result.page is None and result.facts == {"inserted": 1} and result.plan.dropped == 1
    assert {f["visibility"] for f in local.ok("recall", entity="projects/calc", include_private=True)["facts"]} == {"private"}
    assert remote.ok("recall", entity="projects/calc")["facts"] == []
    skipped = capture(runtime, transcript("codex-decision", project, tmp_path), exclude_projects=("calc",))
    assert skipped.plan.skipped == "excluded_project" and skipped.facts == {}
    by_dir = plan_capture(transcript("codex-decision", project, tmp_path), CaptureOptions(exclude_projects=(str(project),)))
    assert by_dir.skipped == "excluded_project"


def test_outside_a_project_facts_go_to_the_users_entity(runtime, local, tmp_path):
    t = transcript("codex-decision", tmp_path / "not-a-repo", tmp_path)
    capture(runtime, t, user_entity="people/sam")
    assert len(local.ok("recall", entity="people/sam")["facts"]) == 2


@pytest.mark.sqlite_only
def test_no_secret_or_private_text_reaches_the_database_file(runtime, home, project, tmp_path):
    for name in ("claude-secrets", "claude-fix-and-commit"):
        capture(runtime, transcript(name, project, tmp_path))
    runtime.close()
    data = b"".join(p.read_bytes() for p in home.root.glob("brain.db*"))  # the file, its WAL and shm
    assert b"keyring" in data  # the session's decision was stored: the file is the one written
    for needle in (*SECRETS, "5531", "bank PIN"):
        assert needle.encode() not in data, needle


def test_a_missing_brain_is_an_error_the_caller_classifies(tmp_path, project):
    from memverbs.server.errors import BrainMissing
    from memverbs.server.home import Home
    from memverbs.server.runtime import Runtime

    shutil.rmtree(tmp_path / "nohome", ignore_errors=True)
    runtime = Runtime(Home(tmp_path / "nohome"))
    with pytest.raises(BrainMissing):
        capture(runtime, transcript("codex-decision", project, tmp_path))
