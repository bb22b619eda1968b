"""What capture keeps from a session: the user's explicit statements as facts; confirmed outcomes as
events on the session page, never as facts."""

from __future__ import annotations

import pytest

from memverbs.server.capture.engine import read_into
from memverbs.server.capture.session import Session
from memverbs.server.capture.statements import statement
from memverbs.server.capture.transcript import Said, ToolRun, Transcript, remembered_fact


def read(t: Transcript, **options) -> Session:
    session = Session(**options)
    read_into(session, t)
    return session


def user_facts(t: Transcript) -> list:
    return read(t).kept()


@pytest.mark.parametrize(("sentence", "fact", "kind"), [
    ("Remember that the staging database lives on db-staging.internal.", "The staging database lives on db-staging.internal.", "fact"),
    ("Please remember: deploys need two approvals", "Deploys need two approvals.", "fact"),
    ("We decided to deploy from the main branch only.", "We decided to deploy from the main branch only.", "commitment"),
    ("OK, we've decided to ship releases on Tuesdays.", "We've decided to ship releases on Tuesdays.", "commitment"),
    ("Decision: the queue moves to Postgres.", "Decided: the queue moves to Postgres.", "commitment"),
    ("From now on, run pytest with -q in this repo.", "From now on, run pytest with -q in this repo.", "preference"),
    ("Also, I prefer small commits with imperative subjects.", "The user prefers small commits with imperative subjects.", "preference"),
    ("I'd rather keep the changelog in CHANGELOG.md", "The user would rather keep the changelog in CHANGELOG.md.", "preference"),
    ("Always run the linter before committing.", "Always run the linter before committing.", "preference"),
])
def test_explicit_statements_become_facts(sentence, fact, kind):
    got = statement(sentence)
    assert got is not None and (got.text, got.kind) == (fact, kind)


@pytest.mark.parametrize("sentence", [
    "Should we move the cron jobs to Kubernetes?",
    "If we decided to use Redis, what would change?",
    "Maybe we decided too early to use Redis.",
    "I think we prefer tabs, but I'm not sure.",
    "Remember that the token is [redacted:github-token].",
    "Never mind, keep going.",
    "Fix the failing test in test_calc.py.",
    "Remember it.",
])
def test_questions_hedges_conditionals_and_redacted_text_are_not_facts(sentence):
    assert statement(sentence) is None


def _t(*events) -> Transcript:
    return Transcript(harness="claude", session_id="s1", path="/x.jsonl", cwd="/repo", events=list(events))


def test_only_the_users_words_count_never_the_assistants_or_code():
    t = _t(Said("user", "Here is the plan:\n```\nWe decided to drop Redis.\n```\n> From now on, use spaces.\nThanks"),
           Said("assistant", "We decided to use Postgres. From now on, I will always run the linter."))
    assert user_facts(t) == []


def test_private_text_is_gone_before_a_sentence_is_read():
    t = _t(Said("user", "<private>Remember that my PIN is 5531.</private> Remember that deploys need two approvals."))
    assert [f.text for f in user_facts(t)] == ["Deploys need two approvals."]


def outcomes(t: Transcript) -> list[str]:
    return read(t).record.outcomes


def test_a_test_that_passes_after_an_edit_is_an_event_on_the_page_and_a_failure_is_not():
    fail = ToolRun("Bash", command="pytest -q tests/test_calc.py", ok=False, output="1 failed")
    edit = ToolRun("Edit", paths=["/repo/calc.py"], ok=True)
    passed = ToolRun("Bash", command="pytest -q tests/test_calc.py", ok=True, output="1 passed")
    assert outcomes(_t(fail, edit, passed)) == ["`pytest -q tests/test_calc.py` passes after a fix (changed calc.py)."]
    assert read(_t(fail, edit, passed)).kept() == []  # an event, not a fact
    assert outcomes(_t(passed)) == []  # nothing was fixed
    assert outcomes(_t(fail, edit)) == []  # never passed
    assert outcomes(_t(fail, edit, ToolRun("Bash", command="pytest -q tests/test_calc.py", ok=None))) == []  # no result
    assert outcomes(_t(fail, passed)) == []  # passed without a change: flaky, not a fix


def test_a_commit_is_an_event_on_the_page_only_when_git_printed_it():
    ok = ToolRun("Bash", command="git commit -m 'Fix add'", ok=True, output="[main 9d4ee4e] Fix add\n 1 file changed")
    refused = ToolRun("Bash", command="git commit -m 'Fix add'", ok=False, output="nothing to commit")
    assert read(_t(ok)).record.commits == [["9d4ee4e", "main", "Fix add"]] and read(_t(ok)).kept() == []
    assert read(_t(refused)).record.commits == []
    # `git commit -q … && git log --oneline -1`: no "[branch sha]" line, the log's first line is the commit.
    quiet = ToolRun("Bash", command="git commit -q -m 'Fix add' && git log --oneline -1", ok=True, output="5fb1b16 Fix add\n")
    assert read(_t(quiet)).record.commits == [["5fb1b16", "", "Fix add"]]


def test_the_record_is_short_cleaned_and_capped():
    runs = [ToolRun("Bash", command=f"echo {n} AKIAJ5QXZ7NPL2W4EXRT", ok=True) for n in range(40)]
    rec = read(_t(Said("user", "x" * 1000), *runs, Said("assistant", "Done. <private>secret plan</private>"))).record
    assert len(rec.commands) == 15 and rec.commands_run == 40
    assert all("AKIA" not in c for c, _ in rec.commands)
    assert len(rec.asked[0]) == 300 and rec.final == "Done."


def test_the_final_state_is_the_last_answer_with_substance_not_the_thanks_after_it():
    done = "The migration ran and all 412 tests pass; the PR is #88."
    for manners in ("You're welcome!", "You’re welcome! Let me know if you need anything else.", "Happy to help — ping me anytime.",
                    "Glad I could help! 🙂"):
        rec = read(_t(Said("assistant", done), Said("user", "thanks!"), Said("assistant", manners))).record
        assert rec.final == done, manners
    assert read(_t(Said("assistant", "Thanks! The flag is on in staging."))).record.final == "Thanks! The flag is on in staging."
    assert read(_t(Said("assistant", "You're welcome!"))).record.final == "You're welcome!"  # nothing else was said


@pytest.mark.parametrize("tool", ["mcp__memverbs__remember", "memverbs_remember", "remember"])
def test_what_the_agent_already_remembered_is_not_kept_again(tool):
    saved = remembered_fact(tool, {"fact": "Alice moved to Lisbon", "entity": "people/alice"})
    t = _t(Said("user", "Remember that Alice moved to Lisbon. Also remember that the staging database is db-2."),
           ToolRun(name=tool, remembered=saved))
    assert [f.text for f in user_facts(t)] == ["The staging database is db-2."]


def test_only_a_remember_call_with_a_fact_counts_as_remembered():
    assert remembered_fact("mcp__memverbs__recall", {"fact": "x y z"}) is None
    assert remembered_fact("mcp__other__remember_me", {"fact": "x y z"}) is None
    assert remembered_fact("remember", {"entity": "people/a"}) is None
    assert remembered_fact("remember", "not a dict") is None
