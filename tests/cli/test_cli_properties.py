"""Properties of the CLI's own rules: `--since` forms, wire errors in CLI terms, audited fact moves."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.cli.when import WhenError, to_iso
from memverbs.cli.words import cli_terms
from memverbs.server.protocol.registry import OPERATIONS
from memverbs.server.timeparse import parse_instant

NOW = 1_796_000_000_000


@given(st.text(max_size=40))
def test_since_either_names_an_instant_or_says_which_flag_and_the_forms(text):
    try:
        out = to_iso("--since", text, NOW)
    except WhenError as exc:
        assert str(exc).startswith(f'--since "{text}" is not a time: use a date')
        return
    # An ISO instant every verb parses, and a fixed point: the CLI may check it twice.
    assert parse_instant(out) is not None
    assert to_iso("--since", out, NOW) == out


@given(st.integers(min_value=1, max_value=5000), st.sampled_from(["h", "d", "m", "w", "d ago", " hours ago"]))
def test_a_time_ago_is_in_the_past(n, unit):
    assert parse_instant(to_iso("--since", f"{n}{unit}", NOW)) < NOW


@given(st.sampled_from(OPERATIONS), st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80))
def test_cli_terms_only_rewrites_names(op, text):
    out = cli_terms(text, op)
    # Nothing but names changes: strip the flags' dashes and underscores and the words match.
    norm = lambda s: s.replace("--", "").replace("-", "_")  # noqa: E731
    assert norm(out) == norm(text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["alice-example", "people/alice-example", "bob"]),
                          st.sampled_from(["tea", "coffee", "tea "]), st.sampled_from(["world", "private"])),
                min_size=1, max_size=8))
def test_move_facts_keeps_every_fact_and_audits_each_move(runtime, facts):
    from memverbs.server.brain.base import NewFact

    brain, source = runtime.brain(), runtime.source
    with brain.write() as db:  # each example starts empty
        if brain.backend == "postgres":  # moves are never deleted, by anyone: emptied whole, as the tables' owner
            db.execute("TRUNCATE fact_moves, fact_audit, fact_vectors, facts")
        else:
            db.execute("DELETE FROM fact_moves")
            db.execute("DELETE FROM facts")
    for slug, text, vis in facts:
        brain.insert_fact(source, NewFact(text, text.strip(), "fact", slug, vis, "t", None), NOW)
    before = {r[0]: r[1] for r in brain.query("SELECT id, entity_slug FROM facts")}
    moved = brain.move_facts(source, "alice-example", "people/alice-example", "test", NOW)

    after = {r[0]: r[1] for r in brain.query("SELECT id, entity_slug FROM facts")}
    assert after.keys() == before.keys()  # nothing deleted, no id changed
    assert {i for i, _ in moved} == {i for i, s in before.items() if s == "alice-example"}
    assert all(after[i] == "people/alice-example" for i, _ in moved)
    assert all(after[i] == s for i, s in before.items() if s != "alice-example")
    audited = brain.query("SELECT fact_id, from_slug, to_slug FROM fact_moves")
    assert sorted(tuple(r) for r in audited) == sorted((i, "alice-example", "people/alice-example") for i, _ in moved)
    # A moved fact still active restates nothing else active under the target (else it was expired).
    clash = brain.query(
        "SELECT m.id FROM facts m JOIN facts o ON o.entity_slug = m.entity_slug AND o.fact_norm = m.fact_norm "
        "AND o.visibility = m.visibility AND o.id != m.id AND o.expired_at IS NULL "
        "WHERE m.expired_at IS NULL AND m.id IN (SELECT fact_id FROM fact_moves)"
    )
    assert [r[0] for r in clash] == []
    assert all(status == "duplicate" for i, status in moved if brain.fact(i)["expired_at"] is not None)
