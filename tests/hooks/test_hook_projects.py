"""The pack knows the project: a session started in one repository gets that repository's memory and the user's,
not another repository's; its heartbeats put the project's news first. Real git repositories, real hook processes."""

from __future__ import annotations

import json
import subprocess

import payloads
import pytest
from helpers import ROOMY_DEADLINE, Client

from memverbs.server.projects import find_project


def repo(path, remote):
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run(["git", "remote", "add", "origin", remote], cwd=path, check=True)
    (path / "src").mkdir()
    return path


@pytest.fixture
def repos(tmp_path):
    return repo(tmp_path / "alpha", "git@github.com:org/alpha.git"), repo(tmp_path / "beta", "https://github.com/org/beta")


@pytest.fixture
def grown(runtime, local, repos):
    """Each project's agent remembers as agents do (no project named); the user's own facts come from outside both."""
    alpha, beta = (Client(runtime.local_dispatcher(project=find_project(r))) for r in repos)
    alpha.ok("remember", fact="Ship the Alpha importer by Friday", provenance="chat", kind="commitment")
    alpha.ok("remember", fact="Alpha stores its queue in Postgres", provenance="chat")
    alpha.ok("remember", fact="Bob reviews every Alpha migration", provenance="chat", entity="people/bob")
    beta.ok("remember", fact="Migrate Beta's CI to the new runners", provenance="chat", kind="commitment")
    beta.ok("remember", fact="Beta deploys only on Tuesdays", provenance="chat")
    local.ok("remember", fact="I prefer short answers", provenance="chat", entity="people/me", kind="preference")
    return alpha, beta


def start(memverbs_cmd, env, cwd, session):
    payload = {**payloads.CLAUDE_SESSION_START, "cwd": str(cwd), "session_id": session}
    return _run(memverbs_cmd, env, "session-start", payload)


def beat(memverbs_cmd, env, cwd, session):
    payload = {**payloads.CLAUDE_PROMPT, "cwd": str(cwd), "session_id": session}
    return _run(memverbs_cmd, env, "heartbeat", payload)


def _run(memverbs_cmd, env, moment, payload):
    proc = subprocess.run([*memverbs_cmd, "hook", moment, *ROOMY_DEADLINE, "--harness", "claude"],
                          input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=30)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout else ""


def test_each_repository_gets_its_own_memory_and_the_users(memverbs_cmd, env, repos, grown):
    alpha, beta = repos
    a = start(memverbs_cmd, env, alpha / "src", "s-alpha")
    b = start(memverbs_cmd, env, beta, "s-beta")
    assert "Project: alpha (`projects/alpha`)" in a and "Project: beta (`projects/beta`)" in b
    for text, mine, theirs in ((a, ("Alpha importer", "Alpha stores", "Bob reviews"), ("Beta",)),
                               (b, ("Beta's CI", "Beta deploys"), ("Alpha",))):
        assert all(m in text for m in mine), text
        assert not any(t in text for t in theirs), text
        assert "I prefer short answers" in text  # the user's own entity stands in every project
    # Dated, labelled, no bare number, one way to expand.
    assert "commitment: Ship the Alpha importer by Friday" in a and "(1.00)" not in a and "get_page" not in a
    assert a.rstrip().endswith("search the rest: `recall <words>`.")


def test_a_heartbeat_puts_the_projects_news_first_and_leaves_another_projects_out(memverbs_cmd, env, repos, grown):
    alpha_dir, _ = repos
    alpha, beta = grown
    start(memverbs_cmd, env, alpha_dir, "s-news")
    beta.ok("remember", fact="Carol joined the on-call rota", provenance="chat", entity="people/carol")
    beta.ok("remember", fact="Beta's staging is down", provenance="chat")  # about projects/beta
    alpha.ok("remember", fact="Alpha's release is tagged", provenance="chat")
    text = ""
    for _ in range(3):  # delta re-delivers the last seconds at least once: the news may come with the first beat
        text += beat(memverbs_cmd, env, alpha_dir, "s-news")
        if "Alpha's release is tagged" in text:
            break
    assert text.index("Alpha's release is tagged") < text.index("Carol joined the on-call rota")
    assert "Beta's staging is down" not in text
