"""Restoring a forgotten fact and changing one fact's visibility: the trusted caller's audited edits.

On every backend: each rule refuses with its enumerated code and writes nothing; each change
leaves one `fact_audit` row (who, when, why) and the trail keeps what a restore undid. And the
trust rule, as a property over random edit sequences: an untrusted (MCP) caller sees a fact
exactly while it is world — through recall, entity, context_pack and delta alike — and cannot
forget one that is private.
"""

import json

import pytest
from helpers import Client, page, sql_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.server.errors import FACT_EDIT_REFUSALS, FactEditRefused
from memverbs.server.timeparse import now_ms

ALICE = "people/alice"
WHO = "test (user tester)"


def fact_id(client: Client, text: str, **extra) -> int:
    params = {"fact": text, "provenance": "test", "entity": ALICE, **extra}
    return int(client.ok("remember", **params)["id"])


def audit_rows(runtime, fid: int) -> list[tuple]:
    brain = runtime.brain()
    return [tuple(r) for r in brain.query(
        sql_for(brain, "SELECT action, old_value, new_value, reason, actor FROM fact_audit WHERE fact_id = ? ORDER BY id"), (fid,)
    )]


def fact_row(runtime, fid: int) -> tuple | None:
    brain = runtime.brain()
    row = brain.one(sql_for(brain, "SELECT * FROM facts WHERE id = ?"), (fid,))
    return tuple(row) if row is not None else None


def restore(runtime, fid: int, reason: str = "holds again"):
    return runtime.brain().restore_fact(runtime.source, fid, reason=reason, actor=WHO, now=now_ms())


def set_visibility(runtime, fid: int, visibility: str, *, widen: bool = False) -> bool:
    return runtime.brain().set_fact_visibility(runtime.source, fid, visibility, widen=widen, reason="because",
                                               actor=WHO, now=now_ms())


# -- restore ------------------------------------------------------------------------------


def test_a_forgotten_fact_comes_back_and_its_trail_keeps_the_expiry(local, runtime):
    fid = fact_id(local, "Alice drinks green tea")
    local.ok("forget", id=str(fid), reason="thought it was wrong")
    row = restore(runtime, fid, "it was right")
    assert row["expired_at"] is None and row["expiry_reason"] is None
    assert str(fid) in [f["fact_id"] for f in local.ok("recall", entity=ALICE)["facts"]]
    trail = runtime.brain().fact_trail(fid)
    (audit,) = trail["audit"]
    assert (audit["action"], audit["old_value"], audit["reason"], audit["actor"]) == (
        "restored", "thought it was wrong", "it was right", WHO)
    assert audit["old_at"] is not None and audit["at"] >= audit["old_at"]
    # Forgotten again and restored again: both expiries stay in the trail.
    local.ok("forget", id=str(fid), reason="second thoughts")
    restore(runtime, fid, "third thoughts")
    assert [a["old_value"] for a in runtime.brain().fact_trail(fid)["audit"]] == ["thought it was wrong", "second thoughts"]


def refusal(runtime, fid: int) -> str:
    before, audit = fact_row(runtime, fid), audit_rows(runtime, fid)
    with pytest.raises(FactEditRefused) as caught:
        restore(runtime, fid)
    assert caught.value.code in FACT_EDIT_REFUSALS and caught.value.fix
    assert fact_row(runtime, fid) == before and audit_rows(runtime, fid) == audit  # nothing written
    return caught.value.code


def test_an_active_fact_is_not_restored(local, runtime):
    assert refusal(runtime, fact_id(local, "Alice is active")) == "not_forgotten"


def test_a_superseded_fact_is_not_restored_over_its_successor(local, runtime):
    old = fact_id(local, "Alice lives in Paris")
    new = fact_id(local, "Alice lives in Lisbon")
    brain = runtime.brain()
    with brain.write() as db:  # what remember's semantic supersession writes
        db.execute(sql_for(brain, "UPDATE facts SET expired_at = ?, expiry_reason = ?, superseded_by = ? WHERE id = ?"),
                   (now_ms(), f"superseded by fact #{new}", new, old))
    assert refusal(runtime, old) == "superseded"


def test_a_fact_an_active_one_restates_is_not_restored(local, runtime):
    fid = fact_id(local, "Alice plays chess")
    local.ok("forget", id=str(fid), reason="dup soon")
    fact_id(local, "Alice plays chess")  # remembered again: a new active fact says the same
    assert refusal(runtime, fid) == "duplicate"


def test_a_fact_whose_page_was_deleted_is_not_restored(local, runtime):
    page(local, ALICE, "Alice")
    fid = fact_id(local, "Alice has a cat")
    local.ok("forget", id=str(fid), reason="moving on")
    local.ok("delete_page", slug=ALICE)
    assert refusal(runtime, fid) == "entity_gone"
    page(local, ALICE, "Alice")  # the page is back: so may the fact be
    assert restore(runtime, fid)["expired_at"] is None


def test_a_fact_past_its_ttl_is_not_restored(local, runtime):
    fid = fact_id(local, "Alice is in Rome this week", ttl="1d")
    local.ok("forget", id=str(fid), reason="plans changed")
    brain = runtime.brain()
    with brain.write() as db:
        db.execute(sql_for(brain, "UPDATE facts SET valid_until = ? WHERE id = ?"), (now_ms() - 1000, fid))
    assert refusal(runtime, fid) == "lapsed"


def test_another_sources_fact_and_a_missing_one_are_not_found(local, runtime):
    fid = fact_id(local, "Alice is in this source")
    local.ok("forget", id=str(fid), reason="x")
    with pytest.raises(FactEditRefused) as caught:
        runtime.brain().restore_fact("another-source", fid, reason="r", actor=WHO, now=now_ms())
    assert caught.value.code == "not_found"
    assert refusal(runtime, fid + 1000) == "not_found"


# -- visibility ---------------------------------------------------------------------------


def test_narrowing_needs_no_intent_widening_does(local, runtime):
    fid = fact_id(local, "Alice's salary is high")
    assert set_visibility(runtime, fid, "private") is True
    assert set_visibility(runtime, fid, "private") is False  # unchanged: no audit row
    before = fact_row(runtime, fid)
    with pytest.raises(FactEditRefused) as caught:
        set_visibility(runtime, fid, "world")
    assert caught.value.code == "needs_intent" and "--widen" in caught.value.fix
    with pytest.raises(FactEditRefused) as caught:
        set_visibility(runtime, fid, "public", widen=True)
    assert caught.value.code == "invalid_visibility"
    assert fact_row(runtime, fid) == before
    assert set_visibility(runtime, fid, "world", widen=True) is True
    assert audit_rows(runtime, fid) == [("visibility", "world", "private", "because", WHO),
                                        ("visibility", "private", "world", "because", WHO)]


def test_a_fact_is_not_given_a_visibility_in_which_the_same_fact_is_active(local, runtime):
    """remember keeps one active copy per visibility; a visibility change must not make two."""
    world = fact_id(local, "Alice likes jazz")
    private = fact_id(local, "Alice likes jazz", visibility="private")  # dedup is per visibility: a second fact
    assert world != private
    before = (fact_row(runtime, world), fact_row(runtime, private))
    for fid, other, target, widen in ((world, private, "private", False), (private, world, "world", True)):
        with pytest.raises(FactEditRefused) as caught:
            set_visibility(runtime, fid, target, widen=widen)
        assert caught.value.code == "duplicate" and f"#{other}" in caught.value.message, caught.value.message
        assert f"`memverbs forget {fid}`" in caught.value.fix
    assert (fact_row(runtime, world), fact_row(runtime, private)) == before
    assert audit_rows(runtime, world) == [] and audit_rows(runtime, private) == []
    local.ok("forget", id=str(private), reason="the world copy is the one")
    assert set_visibility(runtime, world, "private") is True  # the other copy is gone: one active private fact
    assert set_visibility(runtime, private, "world", widen=True) is True  # a forgotten fact is no active copy
    active = [(f["fact_id"], f["visibility"]) for f in local.ok("recall", entity=ALICE)["facts"] if f["fact"] == "Alice likes jazz"]
    assert active == [(str(world), "private")]


SENTINEL = "VIS-SENTINEL-{}"


def untrusted_views(remote: Client) -> dict[str, str]:
    """Everything an MCP caller can read about Alice's facts, each view as JSON text."""
    return {
        "recall": json.dumps(remote.ok("recall", entity=ALICE, include_expired=True, limit=100)),
        "recall-query": json.dumps(remote.ok("recall", query="sentinel", include_expired=True, limit=100)),
        "entity": json.dumps(remote.ok("entity", name=ALICE)),
        "context_pack": json.dumps(remote.ok("context_pack", entities=ALICE, include_private=True)),
        "delta": json.dumps(remote.ok("delta", since="1970-01-01T00:00:00Z", entities=ALICE, include_private=True)),
    }


_steps = st.lists(
    st.tuples(st.sampled_from(["remember", "narrow", "widen", "forget", "restore"]), st.integers(0, 5),
              st.sampled_from(["world", "private"])),
    min_size=1, max_size=10,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_steps)
def test_an_untrusted_caller_sees_a_fact_exactly_while_it_is_world(local, remote, runtime, steps):
    brain = runtime.brain()
    with brain.write() as db:  # hypothesis reuses the function's brain: start each example empty
        if brain.backend == "postgres":  # audit rows are never deleted, by anyone: emptied whole, as the tables' owner
            db.execute("TRUNCATE fact_audit, fact_moves, fact_vectors, facts")
        else:
            db.execute("DELETE FROM fact_audit")
            db.execute("DELETE FROM fact_vectors")
            db.execute("DELETE FROM facts")
    page(local, ALICE, "Alice")
    ids: list[int] = []
    for action, pick, visibility in steps:
        if action == "remember":
            n = len(ids)
            ids.append(fact_id(local, f"Alice {SENTINEL.format(n)} note {n}", visibility=visibility, kind="commitment"))
            continue
        if not ids:
            continue
        fid = ids[pick % len(ids)]
        try:
            if action == "narrow":
                set_visibility(runtime, fid, "private")
            elif action == "widen":
                set_visibility(runtime, fid, "world", widen=True)
            elif action == "forget":
                local.ok("forget", id=str(fid), reason="step")
            else:
                restore(runtime, fid)
        except FactEditRefused as exc:
            assert exc.code in FACT_EDIT_REFUSALS
        views = untrusted_views(remote)
        for n, fid_n in enumerate(ids):
            row = brain.fact(fid_n)
            token = SENTINEL.format(n)
            if row["visibility"] == "private":  # nor can it forget one: as if it did not exist
                before = fact_row(runtime, fid_n)
                assert remote.err("forget", id=str(fid_n), reason="untrusted")["error"] == "not_found"
                assert fact_row(runtime, fid_n) == before
            active = row["expired_at"] is None
            for name, text in views.items():
                if row["visibility"] == "private":
                    assert token not in text, (name, n, steps)
                elif name == "recall" or (name == "delta" and active):
                    # recall lists every world fact (include_expired), delta every active one (the
                    # pack and the card choose within a budget, so only their silence is asserted).
                    assert token in text, (name, n, steps)
