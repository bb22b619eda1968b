"""recall: the arm precedence, since in every arm (B2), limit, grep, budget, search arm."""

import pytest
from helpers import page


def seed(local):
    ids = {}
    for n, (fact, entity, kind) in enumerate(
        [("alice likes tea", "people/alice", "preference"), ("alice moved to Lisbon", "people/alice", "event"), ("bob ships on fridays", "people/bob", "fact")]
    ):
        ids[n] = local.ok("remember", fact=fact, provenance=f"src {n}", entity=entity, kind=kind)["id"]
    return ids


def test_empty_brain_is_success(remote):
    assert remote.ok("recall") == {"facts": [], "total": 0, "protocol_version": 1}


def test_fact_object_keys_in_order(local):
    seed(local)
    fact = local.ok("recall", entity="people/bob")["facts"][0]
    assert list(fact) == [
        "id", "fact", "kind", "entity_slug", "visibility", "notability", "valid_from", "valid_until", "expired_at",
        "superseded_by", "consolidated_at", "consolidated_into", "source", "source_session", "context", "confidence",
        "created_at", "fact_id", "provenance",
    ]
    assert isinstance(fact["id"], int) and fact["fact_id"] == str(fact["id"])
    assert fact["confidence"] == 1.0 and fact["notability"] == "medium" and fact["visibility"] == "world"


def test_entity_arm_newest_first(local):
    seed(local)
    facts = local.ok("recall", entity="people/alice")["facts"]
    assert [f["fact"] for f in facts] == ["alice moved to Lisbon", "alice likes tea"]


def test_recent_arm_and_limit(local):
    seed(local)
    assert local.ok("recall")["total"] == 3
    assert local.ok("recall", limit=2)["total"] == 2
    assert local.ok("recall", limit=0)["total"] == 3  # non-positive means the default


def test_since_filters_every_arm_and_rejects_garbage(local):
    seed(local)
    assert local.ok("recall", entity="people/alice", since="2999-01-01T00:00:00Z")["facts"] == []
    assert local.ok("recall", since="2999-01-01")["facts"] == []
    assert local.ok("recall", since="1 hour ago")["total"] == 3
    err = local.err("recall", since="last tuesday-ish")
    assert err["error"] == "invalid_params" and "ISO 8601" in err["suggestion"]


@pytest.mark.parametrize("since", ["99999999999d", "99999999999999999999d", "9999-12-31T23:59-23:59", "0001-01-01T00:00+23:59"])
@pytest.mark.parametrize("verb", ["recall", "delta", "context_pack"])
def test_since_past_any_instant_is_invalid_params_not_internal(local, remote, verb, since):
    seed(local)
    for caller in (local, remote):
        err = caller.err(verb, since=since)
        assert err["error"] == "invalid_params", err


def test_grep_after_limit(local):
    seed(local)
    body = local.ok("recall", grep="ALICE")
    assert body["total"] == 2 and all("alice" in f["fact"] for f in body["facts"])


def test_include_expired_and_supersessions_arm(local):
    ids = seed(local)
    local.ok("forget", id=ids[0])
    assert local.ok("recall", entity="people/alice")["total"] == 1
    assert local.ok("recall", entity="people/alice", include_expired=True)["total"] == 2
    assert local.ok("recall", supersessions=True)["facts"] == []


def test_budget_packs_facts_first_strict_prefix(local):
    seed(local)
    body = local.ok("recall", entity="people/alice", budget_tokens=10000)
    assert body["budget_tokens"] == 10000 and body["dropped_count"] == 0
    assert body["budget_used"] == sum(-(-len(f["fact"]) // 4) for f in body["facts"])
    tiny = local.ok("recall", entity="people/alice", budget_tokens=1)
    assert tiny["total"] == 0 and tiny["facts"] == [] and tiny["dropped_count"] == 2
    assert "budget_tokens" not in local.ok("recall", entity="people/alice", budget_tokens=-5)


def test_search_arm_keyword_only(local, remote):
    page(local, "companies/acme", "Acme Payments", body="Acme runs the payments platform for Example Corp.")
    body = remote.ok("recall", query="payments platform")
    assert body["search_degraded"] == "keyword_only_no_embedding_provider"
    result = body["results"][0]
    assert list(result) == ["slug", "title", "chunk", "evidence", "create_safety", "provenance"]
    assert result["slug"] == "companies/acme" and result["provenance"] == "companies/acme"
    assert result["evidence"] == "keyword_exact" and result["create_safety"] == "probable"
    assert remote.ok("recall", query="Acme Payments")["results"][0]["evidence"] == "exact_title_match"
    assert "results" not in remote.ok("recall", query="   ")


def test_keyword_pages_rank_on_the_questions_content_words(local, remote):
    # A long page that happens to hold "what" and "did" besides the question's words used to come
    # first, found by every word of the question; the short page about exactly those words did not
    # hold "what" or "did" and came after it, whatever its score.
    filler = " ".join(f"word{n}" for n in range(120))
    page(local, "notes/diary", "Diary", body=f"what did {filler} alice {filler} paint {filler} at the lake {filler}")
    page(local, "notes/lake", "Lake painting", body="Alice likes to paint the lake at dawn.")
    slugs = [r["slug"] for r in remote.ok("recall", query="What did Alice paint at the lake?")["results"]]
    assert slugs == ["notes/lake", "notes/diary"]


def test_search_bumps_last_retrieved(local):
    page(local, "companies/acme", "Acme", body="payments")
    assert local.ok("entity", name="companies/acme")["card"]["last_touched"]["last_retrieved_at"] is None
    local.ok("recall", query="payments")
    assert local.ok("entity", name="companies/acme")["card"]["last_touched"]["last_retrieved_at"] is not None


def test_alias_hit_evidence(local):
    page(local, "people/alice", "Alice Example", aliases=["The Boss"])
    result = local.ok("recall", query="the boss")["results"][0]
    assert result["evidence"] == "alias_hit" and result["create_safety"] == "exists"


def test_budget_results_get_the_remainder(local):
    page(local, "companies/acme", "Acme", body="payments " * 200)
    seed(local)
    body = local.ok("recall", entity="people/bob", query="payments on fridays", budget_tokens=8)
    assert body["total"] == 1 and body["results"] == [] and body["dropped_count"] == 1


def test_include_pending(local):
    assert local.ok("recall", include_pending=True)["pending_consolidation_count"] == 0
    assert "pending_consolidation_count" not in local.ok("recall")
