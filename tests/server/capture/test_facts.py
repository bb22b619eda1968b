"""Facts as people state them: about a known person or organisation, filed under it; commitments with
their due dates; decisions with their reasons; everyday phrasings of a rule; a pick from the
assistant's numbered list. Dated when said, with exact provenance, listed on the session page."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import page

from memverbs.server.capture.engine import plan_capture, read_into
from memverbs.server.capture.plan import CaptureOptions
from memverbs.server.capture.reading import read_transcript
from memverbs.server.capture.session import Session
from memverbs.server.capture.statements import statement
from memverbs.server.capture.transcript import Said, Transcript
from memverbs.server.capture.worker import run_job


@dataclass
class M:
    slug: str
    type: str
    title: str
    start: int
    end: int


PAGES = [("people/soren-hartwhistle", "person", "Soren Hartwhistle", ("Soren",)),
         ("people/ingrid-stargazer", "person", "Ingrid Stargazer", ("Ingrid",)),
         ("companies/kelpforge", "company", "Kelpforge", ()),
         ("companies/glintworks-co", "company", "Glintworks Co", ()),
         ("concepts/postgres", "concept", "Postgres", ())]


def names(text: str) -> list[M]:
    """A stand-in for the brain's name index: titles and first names, whole words, longest first."""
    found: list[M] = []
    for slug, type_, title, aliases in PAGES:
        for name in (title, *aliases):
            for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text):
                if not any(f.start < m.end() and m.start() < f.end for f in found):
                    found.append(M(slug, type_, title, m.start(), m.end()))
    return sorted(found, key=lambda m: m.start)


def facts(*turns: tuple[str, str], at: str = "2025-03-03T10:00:00Z") -> list[tuple[str, str, str | None]]:
    t = Transcript(harness="claude", session_id="s", path="/x.jsonl", events=[Said(role, text, at) for role, text in turns])
    session = Session(names, keep=50)
    read_into(session, t)
    return [(f.text, f.kind, f.entity) for f in session.kept()]


@pytest.mark.parametrize(("said", "fact", "kind", "entity"), [
    ("Soren said Kelpforge hit their growth target a month early. Ahead of plan.",
     "Soren said Kelpforge hit their growth target a month early.", "fact", "people/soren-hartwhistle"),
    ("Soren told me the board approved the budget.", "Soren told me the board approved the budget.", "fact", "people/soren-hartwhistle"),
    ("Ingrid is worried the Glintworks Co pricing model undercuts their margin.",
     "Ingrid is worried the Glintworks Co pricing model undercuts their margin.", "belief", "people/ingrid-stargazer"),
    ("Ingrid has concerns about the hiring plan.", "Ingrid has concerns about the hiring plan.", "belief", "people/ingrid-stargazer"),
    ("Soren prefers async updates over standing calls. Noted for next time.",
     "Soren prefers async updates over standing calls.", "preference", "people/soren-hartwhistle"),
    ("Kelpforge raised a seed round in March.", "Kelpforge raised a seed round in March.", "fact", "companies/kelpforge"),
    ("Soren Hartwhistle moved to Lisbon.", "Soren Hartwhistle moved to Lisbon.", "fact", "people/soren-hartwhistle"),
    ("According to Soren, the board approved the budget.", "Soren said the board approved the budget.", "fact", "people/soren-hartwhistle"),
    ("Soren's worried the pricing is off.", "Soren's worried the pricing is off.", "belief", "people/soren-hartwhistle"),
    ("We passed on the Kelpforge round.", "We passed on the Kelpforge round.", "commitment", "companies/kelpforge"),
    ("We are going to lead the Glintworks Co round.", "We are going to lead the Glintworks Co round.", "commitment",
     "companies/glintworks-co"),
    ("Promised Soren the deck by Monday.", "The user promised Soren the deck by Monday (due 2025-03-10).", "commitment",
     "people/soren-hartwhistle"),
])
def test_what_the_user_says_about_a_known_entity_is_filed_under_it(said, fact, kind, entity):
    assert facts(("user", said)) == [(fact, kind, entity)]


def test_a_commitment_carries_its_due_date_from_when_it_was_said():
    assert facts(("user", "I committed to sending Soren the diligence checklist by Friday.")) == [
        ("The user committed to sending Soren the diligence checklist by Friday (due 2025-03-07).", "commitment",
         "people/soren-hartwhistle")]
    assert facts(("user", "I'll send Ingrid the deck by tomorrow.")) == [
        ("The user will send Ingrid the deck by tomorrow (due 2025-03-04).", "commitment", "people/ingrid-stargazer")]
    assert facts(("user", "I'll send Ingrid the deck.")) == []  # a plan without a deadline is no promise


def test_a_pronoun_names_the_one_person_the_user_just_spoke_of():
    assert facts(("user", "Just got off the call with Ingrid Stargazer."), ("assistant", "How did it go?"),
                 ("user", "She is worried the churn numbers are off. I promised her the cohort report by Monday.")) == [
        ("Ingrid Stargazer is worried the churn numbers are off.", "belief", "people/ingrid-stargazer"),
        ("The user promised Ingrid Stargazer the cohort report by Monday (due 2025-03-10).", "commitment", "people/ingrid-stargazer")]
    # Two people in play: a pronoun is never a guess.
    assert facts(("user", "Met Soren and Ingrid today."), ("user", "She is worried the churn numbers are off.")) == []


def test_a_decision_is_filed_under_what_it_is_about_with_its_reason():
    assert facts(("user", "We decided to pass on the Kelpforge round. Pricing is too rich at this stage. Logging it now.")) == [
        ("We decided to pass on the Kelpforge round: pricing is too rich at this stage.", "commitment", "companies/kelpforge")]
    # A decision naming a tool or a concept is the project's, whatever it mentions.
    assert facts(("user", "We decided to use Postgres for the queue.")) == [("We decided to use Postgres for the queue.", "commitment", None)]


@pytest.mark.parametrize("said", [
    "Soren might be worried about the pricing.",  # a hedge
    "Is Soren worried about the pricing?",  # a question
    "Mallory said the release slipped.",  # nobody the brain knows
    "Soren's team raised a round.",  # the subject is the team, not Soren
    "Postgres is slow on this query.",  # a concept is not something statements are about
    "Soren will review the PR tomorrow.",  # a plan, not a fact
    "I talked to Soren.",  # no statement made
    "We passed the tests.",  # a decision about nobody the brain knows
])
def test_not_a_statement_about_a_known_entity(said):
    assert facts(("user", said)) == []


@pytest.mark.parametrize(("said", "fact", "kind"), [
    ("I only want one version of you, preferably brew", "The user only wants one version of you, preferably brew.", "preference"),
    ("Don't use pip here, use uv", "Don't use pip here, use uv.", "preference"),
    ("We'll go with Postgres instead of MySQL", "We'll go with Postgres instead of MySQL.", "commitment"),
    ("complete the commit, always verify and run hooks", "Complete the commit, always verify and run hooks.", "preference"),
    ("I never want force pushes on main.", "The user never wants force pushes on main.", "preference"),
    ("Let's switch to ruff for linting.", "Let's switch to ruff for linting.", "commitment"),
])
def test_everyday_phrasings_of_rules_and_decisions(said, fact, kind):
    got = statement(said)
    assert got is not None and (got.text, got.kind) == (fact, kind)


@pytest.mark.parametrize("said", ["Let's go with option B.", "I always forget this.", "Never mind, keep going.", "go with 2"])
def test_not_a_rule(said):
    assert statement(said) is None


MENU = ("Done. **Would you like me to set up automated weekly status checks via cron?** Your options:\n\n"
        "1. **Yes, weekly Mondays at 9am** — automatic snapshot\n2. **No, I'll run checks manually** — use the tracker\n"
        "3. **Custom schedule** — tell me when\n\nLet me know which way you want it.")


@pytest.mark.parametrize(("reply", "chosen"), [("2", "No, I'll run checks manually"), ("option 1", "Yes, weekly Mondays at 9am"),
                                               ("Let's do 3 please", "Custom schedule"), ("the second one", "No, I'll run checks manually")])
def test_an_answer_picking_from_the_assistants_list_is_the_users_decision(reply, chosen):
    assert facts(("assistant", MENU), ("user", reply)) == [
        (f"Asked “Would you like me to set up automated weekly status checks via cron?”, the user chose: {chosen}.", "commitment", None)]


def test_a_pick_counts_only_as_the_direct_answer_to_a_choice():
    assert facts(("assistant", MENU), ("harness", "<system-reminder>x</system-reminder>"), ("user", "9")) == []  # no such option
    assert facts(("assistant", MENU), ("user", "fix the tests"), ("user", "2")) == []  # not the answer to it
    assert facts(("assistant", "I did this:\n1. Fixed the parser\n2. Updated the docs"), ("user", "2")) == []  # steps, not a choice
    assert facts(("assistant", "Which approach?\nA) Rewrite the parser\nB) Patch the regex"), ("user", "1")) == []  # letters answer letters


# -- in a real brain: filed, dated, provenance, the page -----------------------------------------------------


def _transcript(path: Path, turns: list[tuple[str, str, str]], cwd: Path) -> Path:
    lines = [json.dumps({"type": role, "sessionId": "bb-1", "cwd": str(cwd), "timestamp": ts,
                         "message": {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}})
             for role, text, ts in turns]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_captured_facts_are_filed_dated_when_said_and_listed_on_the_page(home, local, remote, tmp_path):
    page(local, "people/soren-hartwhistle", "Soren Hartwhistle", type="person", aliases=["soren"])
    page(local, "companies/kelpforge", "Kelpforge", type="company")
    path = _transcript(tmp_path / "s.jsonl", [
        ("user", "Just wrapped the Kelpforge call with Soren Hartwhistle.", "2025-03-03T09:13:00Z"),
        ("assistant", "How did it go?", "2025-03-03T09:14:00Z"),
        ("user", "Soren is worried the Kelpforge pricing model undercuts their gross margin.", "2025-03-03T10:00:00Z"),
        ("user", "I committed to sending Soren the diligence checklist by Friday. We decided to pass on the Kelpforge round.",
         "2025-03-03T10:01:00Z"),
    ], tmp_path / "nowhere")
    assert run_job({"harness": "claude", "session_id": "bb-1", "transcript_path": str(path), "home": str(home.root)}) == "ok"
    soren = local.ok("recall", entity="people/soren-hartwhistle")["facts"]
    assert sorted((f["fact"], f["kind"]) for f in soren) == [
        ("Soren is worried the Kelpforge pricing model undercuts their gross margin.", "belief"),
        ("The user committed to sending Soren the diligence checklist by Friday (due 2025-03-07).", "commitment")]
    kelpforge = local.ok("recall", entity="companies/kelpforge")["facts"]
    assert [f["fact"] for f in kelpforge] == ["We decided to pass on the Kelpforge round."]
    everything = soren + kelpforge
    assert {f["provenance"] for f in everything} == {"capture:claude session bb-1"}
    assert sorted(f["valid_from"][:16] for f in everything) == ["2025-03-03T10:00", "2025-03-03T10:01", "2025-03-03T10:01"]
    session_page = local.ok("get_page", slug="sessions/2025-03-03-claude-bb1")["body"]
    assert "Each with provenance `capture:claude session bb-1`" in session_page
    assert "(about [[people/soren-hartwhistle]])" in session_page and "(about [[companies/kelpforge]])" in session_page
    assert local.ok("recall", entity="people/me")["facts"] == []  # nothing left over for the user's own entity


def test_without_the_name_index_nothing_is_said_about_others(tmp_path):
    path = _transcript(tmp_path / "s.jsonl", [("user", "Soren said the round closed. We decided to ship on Tuesdays.",
                                                  "2025-03-03T10:00:00Z")], tmp_path)
    plan = plan_capture(read_transcript(path), CaptureOptions())
    assert [(f.text, f.entity) for f in plan.facts] == [("We decided to ship on Tuesdays.", None)]
