"""remember with an embedding provider: duplicate, superseded, inserted — and the degraded paths."""

import time

import pytest
import respx
from provider_fakes import EMBED_BASE, clients, embeddings_env, hashing_embeddings, hashing_runtime, provider_error

from memverbs.server.runtime import Runtime


@pytest.fixture
def rt(home):
    runtime = hashing_runtime(home)
    yield runtime
    runtime.close()


@pytest.fixture
def local(rt):
    return clients(rt)[0]


def remember(client, fact, **kw):
    kw.setdefault("provenance", "chat")
    kw.setdefault("entity", "people/alice")
    return client.ok("remember", fact=fact, **kw)


def test_same_fact_again_is_a_duplicate_with_the_existing_id(local):
    first = remember(local, "Alice prefers tea")
    again = remember(local, "Alice prefers tea")
    assert first["status"] == "inserted" and "degraded_dedup" not in first
    assert again["status"] == "duplicate" and again["id"] == first["id"]
    assert list(again) == ["id", "status", "status_text", "entity_slug", "valid_until", "protocol_version"]
    assert local.ok("recall", entity="people/alice")["total"] == 1


def test_a_restatement_with_the_same_kind_supersedes(local):
    old = remember(local, "Alice prefers tea", kind="preference", ttl="30d")
    new = remember(local, "Alice likes tea", kind="preference")
    assert new["status"] == "superseded" and new["id"] != old["id"]
    assert new["status_text"] == f"updated — fact #{new['id']} supersedes the previous version"
    assert new["valid_until"] is None  # the new fact's own ttl, not the old one's
    active = local.ok("recall", entity="people/alice")["facts"]
    assert [f["fact"] for f in active] == ["Alice likes tea"]
    [audit] = local.ok("recall", supersessions=True)["facts"]
    assert audit["fact_id"] == old["id"] and audit["superseded_by"] == int(new["id"]) and audit["expired_at"]
    row = local.dispatcher.open_brain().fact(int(old["id"]))
    assert row["expiry_reason"] == f"superseded by fact #{new['id']}"


def test_a_restatement_of_another_kind_is_a_duplicate(local):
    old = remember(local, "Alice prefers tea", kind="preference")
    again = remember(local, "Alice likes tea", kind="belief")
    assert again["status"] == "duplicate" and again["id"] == old["id"]


def test_another_entity_is_never_a_candidate_and_no_entity_never_dedups(local):
    remember(local, "Alice prefers tea")
    assert remember(local, "Alice prefers tea", entity="people/bob")["status"] == "inserted"
    plain = remember(local, "Alice prefers tea", entity=None)
    assert plain["status"] == "inserted" and "degraded_dedup" not in plain  # embedded, though no bucket
    assert remember(local, "Alice prefers tea", entity=None)["status"] == "inserted"


def test_different_facts_about_one_entity_both_insert(local):
    remember(local, "Alice prefers tea")
    assert remember(local, "Alice moved to Lisbon in March")["status"] == "inserted"


def test_expired_facts_are_not_candidates(local):
    first = remember(local, "Alice prefers tea", ttl="1s")
    local.ok("forget", id=remember(local, "Alice runs marathons")["id"])
    time.sleep(1.1)
    assert remember(local, "Alice likes tea")["status"] == "inserted"  # the ttl passed: not active (B1)
    assert remember(local, "Alice runs marathons")["status"] == "inserted"  # forgotten: not active
    assert local.ok("recall", supersessions=True)["facts"] == []
    assert first["status"] == "inserted"


@respx.mock
def test_over_http_and_degraded_when_the_provider_fails(home, monkeypatch):
    embeddings_env(monkeypatch)
    route = respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=hashing_embeddings)
    rt = Runtime(home)
    try:
        local = clients(rt)[0]
        first = remember(local, "Alice prefers tea")
        assert first["status"] == "inserted" and "degraded_dedup" not in first
        assert remember(local, "Alice likes tea")["status"] == "superseded"
        assert route.call_count == 2

        route.mock(return_value=provider_error(429))
        down = remember(local, "Alice enjoys tea")
        assert down["status"] == "inserted" and down["degraded_dedup"] is True  # near-duplicate slipped in, and says so
        exact = remember(local, "alice   ENJOYS tea")
        assert exact["status"] == "duplicate" and exact["degraded_dedup"] is True  # exact text still caught
    finally:
        rt.close()


def test_beside_the_entitys_page_the_write_checks_the_page_and_still_dedups_and_supersedes(local):
    from helpers import page

    page(local, "people/alice", "Alice")
    first = remember(local, "Alice prefers tea", kind="preference")
    assert first["status"] == "inserted" and first["entity_slug"] == "people/alice"
    assert remember(local, "Alice prefers tea", kind="preference")["id"] == first["id"]
    assert remember(local, "Alice likes tea", kind="preference")["status"] == "superseded"


def test_the_bucket_is_one_visibility(local):
    private = remember(local, "Alice prefers tea", visibility="private")
    world = remember(local, "Alice prefers tea")
    assert world["status"] == "inserted" and world["id"] != private["id"]  # publishing is not a duplicate
    assert remember(local, "Alice likes tea", visibility="private")["status"] == "superseded"


def test_near_identical_words_on_another_day_are_a_duplicate_not_an_update(local):
    # The embedder calls these the same (cosine 1: the same words); nothing in the new one changes what was said.
    first = remember(local, "Thanks, Nate! Your support is greatly appreciated.", provenance="conversation 2023-05-01")
    again = remember(local, "Thanks Nate - your support is greatly appreciated!", provenance="conversation 2023-09-14")
    assert again["status"] == "duplicate" and again["id"] == first["id"]
    words = " ".join(f"word{n}" for n in range(30))
    long = remember(local, f"Nate sent {words} today")
    fewer = remember(local, f"Nate sent {words}", provenance="conversation 2023-10-02")
    assert fewer["status"] == "duplicate" and fewer["id"] == long["id"]  # says less than what is known
    assert local.ok("recall", supersessions=True)["facts"] == []


def test_an_event_never_supersedes_another(local):
    words = " ".join(f"step{n}" for n in range(24))  # a long shared text: cosine above the 0.95 floor
    first = remember(local, f"Deployed the billing service after {words}", kind="event")
    second = remember(local, f"Deployed the billing service twice after {words}", kind="event")
    assert second["status"] == "inserted" and second["id"] != first["id"]  # both happened
    again = remember(local, f"Deployed billing service after {words}", kind="event")
    assert again["status"] == "duplicate"  # nothing new: the same event told again
    assert [f["fact_id"] for f in local.ok("recall", supersessions=True)["facts"]] == []
    # A state with the same words changes: the newer one is the fact now.
    old = remember(local, f"The billing service runs on {words}", kind="fact", entity="services/billing")
    new = remember(local, f"The billing service runs daily on {words}", kind="fact", entity="services/billing")
    assert new["status"] == "superseded" and local.ok("recall", supersessions=True)["facts"][0]["fact_id"] == old["id"]
