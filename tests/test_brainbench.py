"""BrainBench, on synthetic fixtures of our own in the corpus's schema (the real corpus is not in a clean
clone): the scoring rules exactly, then a smoke replay through the installed hooks and capture."""

import json
import shutil

import pytest

from benchmarks import brainbench, brainbench_brain, brainbench_data, brainbench_score
from benchmarks import brainbench_transcripts as tr
from benchmarks.brainbench_data import Decision, GoldFact, Turn, TurnGold
from benchmarks.brainbench_harnesses import _carry
from benchmarks.brainbench_score import Delivery
from memverbs.server.capture.reading import read_transcript

PERSON = "---\ntitle: Quillon Marsh\ntype: person\naliases: [quillon]\nsummary: Founder of Brindle Works.\n---\n\nQuillon Marsh founded Brindle Works.\n"
COMPANY = "---\ntitle: Brindle Works\ntype: company\nsummary: Seed-stage kiln maker.\n---\n\nBrindle Works makes kilns.\n"
OTHER = "---\ntitle: Tessaly Vane\ntype: person\nsummary: Only in the team brain.\n---\n\nTessaly Vane is a team-brain page.\n"


def gold(should=True, slugs=(), ok=()):
    return TurnGold(should, frozenset(slugs), frozenset(ok), ())


def row(injected, g, text=None):
    return brainbench_score.TurnRow("f", 1, "codex", ("know-to-ask", "push"), text if text is not None else " ".join(f"`{s}`" for s in injected),
                                    {}, list(injected), [], g, 1.0)


# -- the rules ---------------------------------------------------------------------------------------


def test_a_pointer_is_a_backticked_slug_not_a_slug_in_prose():
    text = ("- **Quillon Marsh** → `people/quillon-marsh` — Founder.\n"
            "Expand any item: `entity <slug>`; see also `entity companies/brindle-works`.\n"
            "- 2026-03-02: prefers async [people/tessaly-vane]; people/in-prose is prose; use `uv`, not `Pip/X`.")
    assert brainbench_score.pointers(text) == ["people/quillon-marsh", "companies/brindle-works"]
    assert brainbench_score.pointers("`readme` and `uv`", known={"readme"}) == ["readme"]  # one segment: only a known page
    assert brainbench_score.pointers("`people/a` `people/a`") == ["people/a"]


def test_tokens_are_characters_over_four_rounded_up():
    assert [brainbench_score.tokens("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]


def test_know_to_ask_and_false_fire_count_turns():
    rows = [row(["people/a"], gold(True, ["people/a"])), row(["people/z"], gold(True, ["people/a"], ["people/z"])),
            row([], gold(True, ["people/b"])), row([], gold(False), text=""), row([], gold(False), text="some pack text"),
            row(["people/q"], gold(False)), row(["people/q"], None)]
    m = brainbench_score.know_to_ask(rows)
    assert m["know_to_ask_failure_rate"] == pytest.approx(1 / 3)  # the third asked turn got nothing
    assert m["false_fire_rate"] == pytest.approx(2 / 3) and m["false_fire_pointer_rate"] == pytest.approx(1 / 3)
    assert (m["gold_total"], m["gold_failed"], m["quiet_turns"]) == (3, 1, 3)


def test_push_precision_and_recall_sum_over_turns_and_nothing_injected_is_not_a_free_score():
    rows = [row(["people/a", "people/x"], gold(True, ["people/a", "people/b"])), row(["people/c"], gold(True, ["people/d"], ["people/c"])),
            row(["people/n"], None)]
    m = brainbench_score.push(rows)
    assert m["push_precision"] == pytest.approx(2 / 3)  # a and c count, x does not; the ungraded turn is left out
    assert m["push_recall"] == pytest.approx(1 / 3)  # a of a, b, d
    assert brainbench_score.push([row([], gold(True, ["people/a"]))])["push_precision"] is None


def fact(i, text, entity, provenance="capture:codex session s1", active=True, source="default"):
    return brainbench_score.StoredFact(i, source, text, "fact", entity, provenance, active)


def test_write_back_fidelity_is_a_maximum_matching_with_each_stored_fact_used_once():
    golds = [GoldFact("a", "", "people/q", ("pricing",), None), GoldFact("b", "", "people/q", ("pricing", "margin"), None),
             GoldFact("c", "", "companies/b", ("kiln",), None)]
    stored = [fact(1, "Pricing and margin worry", "people/q"), fact(2, "pricing is high", "people/q"),
              fact(3, "The kiln ships Friday", "people/q"),  # right words, wrong entity
              fact(4, "pricing", "people/q", active=False), fact(5, "Kiln order", "companies/b", provenance="capture:codex session s2")]
    result = brainbench_score.write_back(golds, stored, "capture:codex session s1")
    # Greedy would give fact 1 to "a" and leave "b" unmatched; the matching gives both.
    assert result["survived"] == 3 and result["matches"]["b"] == "Pricing and margin worry"
    assert (result["stored"], result["exact_provenance"]) == (5, 4)
    cell = brainbench_score.write_back_cell([result])
    assert cell["fidelity"] == 1.0 and cell["provenance"] == pytest.approx(4 / 5)
    assert brainbench_score.write_back_cell([brainbench_score.write_back(golds, [], "p")])["provenance"] is None


def test_a_stored_fact_that_only_repeats_an_injection_is_an_echo():
    stored = [fact(1, "Quillon prefers tea.", "people/q"), fact(2, "We ship on Fridays", "people/me"), fact(3, "ok", "people/me")]
    injected = ["- 2026-03-02 preference: Quillon prefers tea [people/q]", "ok"]
    assert brainbench_score.echoes(stored, injected, ["We ship on Fridays, and ok"]) == ["Quillon prefers tea."]
    assert brainbench_score.echoes(stored, injected, ["I know quillon prefers   TEA"]) == []  # said as well: not an echo


def test_a_decision_reaches_the_reader_when_one_line_holds_every_keyword():
    d = Decision("d1", ("companies/b",), ("pass", "brindle"))
    assert brainbench_score.decision_reached(d, ["- 2026-03-09: We decided to PASS on Brindle's seed"])
    assert not brainbench_score.decision_reached(d, ["We decided to pass.\nBrindle Works is a kiln maker."])
    c = brainbench_score.continuity((d,), ["we pass on brindle"], {"companies/b"})
    assert (c["reached"], c["linked"]) == (1, 1)


def test_cross_source_leaks_are_decoy_slugs_canaries_and_foreign_summaries(tmp_path):
    root = synthetic_corpus(tmp_path)
    ms = brainbench_data.load(root).by_id()["syn-ms"]
    index = brainbench_brain.ForeignIndex([ms], ms.active_source)
    twin, own = (slug for slug, _ in brainbench_brain.decoy_pages(ms.pages[0]))
    assert index.leaks(f"`{own}`", [own]) == [own]
    assert index.leaks(f"x {brainbench_brain.canary(twin)} y", []) == [f"{brainbench_brain.DECOY_SOURCE}:{twin}"]
    assert index.leaks("`people/tessaly-vane` — Only in the team brain.", ["people/tessaly-vane"]) == [
        "people/tessaly-vane", "teambrain:people/tessaly-vane"]
    assert index.leaks("`people/quillon-marsh` — Founder of Brindle Works.", ["people/quillon-marsh"]) == []


@pytest.mark.parametrize("harness", ["claude-code", "codex", "openclaw"])
def test_each_harness_transcript_reads_back_as_what_the_user_said_and_nothing_injected(tmp_path, harness):
    turns = [Turn(1, "user", "We decided to ship on Fridays.", "2026-03-02T17:00:00Z"), Turn(2, "assistant", "Noted.", None),
             Turn(3, "user", "Thanks!", None)]
    start = Delivery(parts={"session-start": "PACK `people/a`"}, raw={"stdout": "{}", "command": "memverbs hook"})
    given = {1: Delivery(parts={"prompt": "REFLEX `people/b`"}), 3: Delivery()}
    cwd, sid = tmp_path / "work", "0b6e2d4c-1111-4222-8333-944455556666"
    if harness == "claude-code":
        path = tr.claude_path(tmp_path, cwd, sid)
        tr.write_claude(path, sid, cwd, turns, given, start, 1_800_000_000.0)
    elif harness == "codex":
        path = tr.codex_path(tmp_path, sid, 1_800_000_000.0)
        tr.write_codex(path, sid, cwd, turns, given, start, 1_800_000_000.0)
    else:
        path = tr.write_openclaw(tmp_path, "main", sid, cwd, turns, 1_800_000_000.0)
    t = read_transcript(path, brainbench.hx.MEMVERBS_NAME[harness], session_id=sid)
    assert (t.session_id, t.cwd) == (sid, str(cwd))
    assert t.said("user") == ["We decided to ship on Fridays.", "Thanks!"] and t.said("assistant") == ["Noted."]
    assert t.started.startswith("2026-03-02T17:00:00")
    assert tr.turn_times(turns, 0.0)[1:] == [tr.turn_times(turns, 0.0)[0] + 20, tr.turn_times(turns, 0.0)[0] + 40]


def test_openclaws_resent_pack_is_carried_not_injected_and_what_comes_with_it_counts():
    pack = "<!-- pack -->\n- **Q** → `people/q`"
    d = Delivery(parts={"prependContext": pack, "appendContext": "NEW `people/r`"})
    _carry(d, pack)
    assert (d.parts, d.carried) == ({"appendContext": "NEW `people/r`"}, {"prependContext": pack})
    d = Delivery(parts={"prependContext": pack + "\n\nREFLEX `people/s`"})
    _carry(d, pack)
    assert d.text == "REFLEX `people/s`" and d.carried == {"prependContext": pack}


def test_a_fixture_brain_is_seeded_through_the_page_ops_each_page_in_its_source_beside_the_decoy(tmp_path):
    import sqlite3

    corpus = brainbench_data.load(synthetic_corpus(tmp_path))
    ms = corpus.by_id()["syn-ms"]
    ms.seed_facts.append(brainbench_data.SeedFact("Quillon likes kilns", "people/quillon-marsh", None, "a note"))
    home = tmp_path / "home"
    assert brainbench_brain.seed(home, [ms], "default") == {"pages": 2, "facts": 1, "decoy_pages": 4}
    db = sqlite3.connect(home / "brain.db")
    pages = set(db.execute("SELECT source_id, slug FROM pages"))
    assert pages == {("default", "people/quillon-marsh"), ("teambrain", "people/tessaly-vane"),
                     (brainbench_brain.DECOY_SOURCE, "people/quillon-marsh"), (brainbench_brain.DECOY_SOURCE, "decoy/quillon-marsh"),
                     (brainbench_brain.DECOY_SOURCE, "people/tessaly-vane"), (brainbench_brain.DECOY_SOURCE, "decoy/tessaly-vane")}
    decoy = db.execute("SELECT title FROM pages WHERE source_id = ? AND slug = 'decoy/quillon-marsh'", (brainbench_brain.DECOY_SOURCE,)).fetchone()
    assert decoy == ("Quillon Marsh",)  # the decoy answers to the same name
    [(_, stored)] = brainbench_brain.read_facts(home)
    assert (stored.source, stored.entity_slug, stored.provenance, stored.active) == ("default", "people/quillon-marsh", "a note", True)


def test_a_page_without_a_source_is_the_users_own_even_when_another_source_is_active(tmp_path):
    import sqlite3

    team = brainbench_data.load(synthetic_corpus(tmp_path)).by_id()["syn-ms-team"]
    brainbench_brain.seed(tmp_path / "home", [team], team.active_source)
    pages = set(sqlite3.connect(tmp_path / "home" / "brain.db").execute("SELECT source_id, slug FROM pages WHERE source_id != ?",
                                                                        (brainbench_brain.DECOY_SOURCE,)))
    assert pages == {("default", "people/quillon-marsh"), ("teambrain", "people/tessaly-vane")}
    index = brainbench_brain.ForeignIndex([team], "teambrain")
    assert index.leaks("`people/quillon-marsh` — Founder of Brindle Works.", ["people/quillon-marsh"]) == [
        "default:people/quillon-marsh", "people/quillon-marsh"]
    assert index.leaks("`people/tessaly-vane` — Only in the team brain.", ["people/tessaly-vane"]) == []


def test_the_loader_refuses_inline_gold_and_a_gold_file_without_its_fixture(tmp_path):
    root = synthetic_corpus(tmp_path)
    path = root / "fixtures" / "syn-kta.fixture.json"
    data = json.loads(path.read_text())
    data["turns"][0]["gold"] = {"should_retrieve": True}
    path.write_text(json.dumps(data))
    with pytest.raises(brainbench_data.CorpusError, match="sealed"):
        brainbench_data.load(root)
    path.unlink()
    with pytest.raises(brainbench_data.CorpusError, match="no fixture file"):
        brainbench_data.load(root)


def test_a_continuity_half_brings_its_pair_and_suites_filter(tmp_path):
    corpus = brainbench_data.load(synthetic_corpus(tmp_path))
    assert {f.fixture_id for f in brainbench_data.select(corpus, fixture_ids={"syn-cont-reader"})} == {"syn-cont-writer", "syn-cont-reader"}
    assert {f.fixture_id for f in brainbench_data.select(corpus, suites={"write-back"})} == {"syn-wb", "syn-cont-writer", "syn-cont-reader"}
    units = brainbench.plan(brainbench_data.select(corpus), corpus, ["claude-code", "codex", "openclaw"])
    pairs = [(u.harness, u.reader_harness) for u in units if u.reader_harness]
    assert pairs == [("claude-code", "codex"), ("codex", "openclaw"), ("openclaw", "claude-code")]
    # One harness: the pairs it writes and the pairs it reads (a decision always crosses harnesses).
    units = brainbench.plan(brainbench_data.select(corpus), corpus, ["codex"], ["claude-code", "codex", "openclaw"])
    assert [(u.harness, u.reader_harness) for u in units if u.reader_harness] == [("claude-code", "codex"), ("codex", "openclaw")]
    assert {u.harness for u in units if not u.reader_harness} == {"codex"}


# -- the replay ----------------------------------------------------------------------------------------


@pytest.mark.e2e
def test_the_replay_runs_every_turn_through_the_installed_hooks_and_capture(tmp_path):
    root = synthetic_corpus(tmp_path)
    out = tmp_path / "result.json"
    harnesses = ["claude-code", "codex"] + (["openclaw"] if shutil.which("node") else [])
    assert brainbench.main(["--data", str(root), "--out", str(out), "--no-results-md", "--jobs", "2",
                            "--harness", ",".join(harnesses)]) == 0
    result = json.loads(out.read_text())
    meta = result["_meta"]
    assert result["seed_failures"] == [] and meta["failures"] == []
    corpus = brainbench_data.load(root)
    user_turns = sum(len(f.user_turns()) for f in corpus.fixtures)
    assert len(meta["deliveries"]) == user_turns * len(harnesses)  # every user turn of every session, once
    assert all(not d["problems"] for d in meta["deliveries"]), [d["problems"] for d in meta["deliveries"] if d["problems"]]
    assert {(c["harness"], c["suite"]) for c in result["cells"]} == {(h, s) for h in harnesses for s in brainbench_data.SUITES}
    for w in meta["writeback_rows"]:  # capture ran to its end in every harness, from the transcript the harness keeps
        assert w["capture"]["code"] in ("ok", "empty"), w
        assert all(f["provenance"] == f"capture:{brainbench.hx.MEMVERBS_NAME[w['harness']]} session {w['session_id']}"
                   for f in w["stored_facts"] if f["provenance"].startswith("capture:"))
    assert len(meta["continuity_rows"]) == len(harnesses)
    reader = {d["harness"]: d for d in meta["deliveries"] if d["fixture_id"] == "syn-cont-reader" and d["turn_id"] == 2}
    first = {d["harness"]: d for d in meta["deliveries"] if d["fixture_id"] == "syn-cont-reader" and d["turn_id"] == 1}
    if "openclaw" in harnesses and first["openclaw"]["parts"].get("prependContext"):  # the reader's pack came with turn 1 …
        assert reader["openclaw"]["carried"] == first["openclaw"]["parts"]["prependContext"]  # … and again with turn 2
        assert first["openclaw"]["parts"]["prependContext"] not in reader["openclaw"]["text"]
    for h in harnesses:
        summary = meta["summary"][h]
        assert summary["cross_source_injections"] == 0  # the decoy and the team brain stay out of every turn
        assert 0 <= summary["know_to_ask_failure_rate"] <= 1 and 0 <= summary["false_fire_rate"] <= 1
    assert "══ syn-kta · codex (know-to-ask, push) ══" in brainbench.report.verbose(result)


def synthetic_corpus(tmp_path):
    """Four fixtures and a continuity pair, invented here, in the corpus's schema (version 1)."""
    root = tmp_path / "corpus"
    (root / "fixtures").mkdir(parents=True)
    (root / "gold").mkdir()

    def put(fid, fixture, gold_turns, continuity=None):
        (root / "fixtures" / f"{fid}.fixture.json").write_text(json.dumps({"schema_version": 1, "fixture_id": fid, **fixture}))
        g = {"fixture_id": fid, "turns": gold_turns}
        if continuity:
            g["continuity"] = continuity
        (root / "gold" / f"{fid}.gold.json").write_text(json.dumps(g))

    pages = [{"slug": "people/quillon-marsh", "content": PERSON}, {"slug": "companies/brindle-works", "content": COMPANY}]
    put("syn-kta", {"suites": ["know-to-ask", "push"], "category": "kta-pos", "seed_pages": pages, "turns": [
        {"turn_id": 1, "role": "user", "text": "What is the latest with Quillon Marsh at Brindle Works?"},
        {"turn_id": 2, "role": "assistant", "text": "Checking."},
        {"turn_id": 3, "role": "user", "text": "Great, thank you."}]},
        {"1": {"should_retrieve": True, "gold_slugs": ["people/quillon-marsh", "companies/brindle-works"]},
         "3": {"should_retrieve": False}})
    put("syn-ms", {"suites": ["know-to-ask", "push"], "category": "multi-source", "sources": ["teambrain"],
                   "active_source": "default",
                   "seed_pages": [pages[0], {"slug": "people/tessaly-vane", "content": OTHER, "source_id": "teambrain"}],
                   "turns": [{"turn_id": 1, "role": "user", "text": "Anything on Tessaly Vane?"}]},
        {"1": {"should_retrieve": False}})
    put("syn-ms-team", {"suites": ["know-to-ask", "push"], "category": "multi-source", "sources": ["teambrain"],
                        "active_source": "teambrain",
                        "seed_pages": [pages[0], {"slug": "people/tessaly-vane", "content": OTHER, "source_id": "teambrain"}],
                        "turns": [{"turn_id": 1, "role": "user", "text": "Anything on Quillon Marsh in here?"},
                                  {"turn_id": 2, "role": "user", "text": "And what about Tessaly Vane?"}]},
        {"1": {"should_retrieve": False}, "2": {"should_retrieve": True, "gold_slugs": ["people/tessaly-vane"]}})
    put("syn-wb", {"suites": ["write-back"], "category": "write-back", "seed_pages": pages, "turns": [
        {"turn_id": 1, "role": "user", "ts": "2026-03-02T17:00:00Z", "text": "Call with Quillon Marsh just ended."},
        {"turn_id": 2, "role": "assistant", "ts": "2026-03-02T17:00:30Z", "text": "How was it?"},
        {"turn_id": 3, "role": "user", "ts": "2026-03-02T17:01:00Z",
         "text": "Quillon prefers weekly written updates. I committed to sending him the kiln specs by Thursday."}]},
        {"3": {"should_retrieve": False, "gold_facts": [
            {"gist": "updates", "fact": "Quillon prefers weekly written updates", "entity_slug": "people/quillon-marsh",
             "match_keywords": ["weekly", "updates"], "kind": "preference"},
            {"gist": "specs", "fact": "Committed to send Quillon the kiln specs by Thursday", "entity_slug": "people/quillon-marsh",
             "match_keywords": ["kiln specs", "Thursday"], "kind": "commitment"}]}})
    decisions = {"pair_id": "syn-cont", "decisions": [{"decision_id": "d1", "expected_slugs": ["companies/brindle-works"],
                                                        "match_keywords": ["pass", "brindle"]}]}
    put("syn-cont-writer", {"suites": ["write-back", "continuity"], "category": "continuity", "seed_pages": [pages[1]],
                            "continuity": {"pair_id": "syn-cont", "pair_role": "writer"}, "turns": [
        {"turn_id": 1, "role": "user", "ts": "2026-03-09T16:00:00Z", "text": "We decided to pass on the Brindle Works round."}]},
        {"1": {"should_retrieve": False, "gold_facts": [
            {"gist": "pass", "fact": "Decided to pass on the Brindle Works round", "entity_slug": "companies/brindle-works",
             "match_keywords": ["pass", "Brindle"], "kind": "commitment"}]}}, decisions)
    put("syn-cont-reader", {"suites": ["continuity"], "category": "continuity",
                            "continuity": {"pair_id": "syn-cont", "pair_role": "reader"},
                            "turns": [{"turn_id": 1, "role": "user", "text": "Where did we land on Brindle Works?"},
                                      {"turn_id": 2, "role": "user", "text": "Fine, then draft the note."}]},
        {"1": {"should_retrieve": True, "gold_slugs": ["companies/brindle-works"]}}, decisions)
    return root
