"""remember: validation order, statuses, nulls, provenance verbatim, ttl."""

from memverbs.server.timeparse import now_ms, parse_instant


def test_inserted_shape_and_nulls(local):
    body = local.ok("remember", fact="Alice prefers async standups", provenance="chat 2026-06-12")
    assert list(body) == ["id", "status", "status_text", "entity_slug", "valid_until", "degraded_dedup", "protocol_version"]
    assert body["status"] == "inserted"
    assert isinstance(body["id"], str)
    assert body["status_text"] == f"remembered as fact #{body['id']}"
    assert body["entity_slug"] is None and body["valid_until"] is None
    assert body["degraded_dedup"] is True and body["protocol_version"] == 1


def test_blank_fact_then_blank_provenance(local):
    err = local.err("remember", fact="   ", provenance="   ")
    assert err["error"] == "invalid_params" and err["message"] == "fact must be a non-empty string."
    err = local.err("remember", fact="x", provenance="  \t ")
    assert err["error"] == "provenance_required"
    assert err["message"] == "provenance is required and must be non-empty."
    assert err["suggestion"].strip() and err["protocol_version"] == 1


def test_missing_provenance_is_invalid_params_not_provenance_required(remote):
    err = remote.err("remember", fact="x")
    assert err == {
        "error": "invalid_params",
        "message": "Missing required parameter: provenance",
        "suggestion": "Check the tool schema — required params and types are declared there.",
        "protocol_version": 1,
    }


def test_provenance_too_long(local):
    err = local.err("remember", fact="x", provenance="p" * 501)
    assert err["message"] == "provenance exceeds 500 chars (got 501)."
    assert "pointer, not a transcript" in err["suggestion"]


def test_provenance_stored_verbatim(local):
    local.ok("remember", fact="x", provenance="  chat, 2026  ", entity="people/a")
    facts = local.ok("recall", entity="people/a")["facts"]
    assert facts[0]["provenance"] == "  chat, 2026  " and facts[0]["source"] == "  chat, 2026  "


def test_ttl_sets_valid_until(local):
    before = now_ms()
    body = local.ok("remember", fact="x", provenance="p", ttl="30d")
    until = parse_instant(body["valid_until"])
    assert before + 30 * 86_400_000 <= until <= now_ms() + 30 * 86_400_000
    assert body["valid_until"].endswith("Z") and len(body["valid_until"]) == 24


def test_iso_duration_ttl_is_rejected_with_fix(local):
    err = local.err("remember", fact="x", provenance="p", ttl="P30D")
    assert err["error"] == "invalid_params" and "30d" in err["suggestion"]


def test_entity_is_canonicalised(local):
    from helpers import page

    page(local, "people/alice-example", "Alice Example", aliases=["Ali"])
    assert local.ok("remember", fact="a", provenance="p", entity="Ali")["entity_slug"] == "people/alice-example"
    assert local.ok("remember", fact="b", provenance="p", entity="Alice Example")["entity_slug"] == "people/alice-example"
    assert local.ok("remember", fact="c", provenance="p", entity="alice")["entity_slug"] == "people/alice-example"
    assert local.ok("remember", fact="d", provenance="p", entity="People/New Person")["entity_slug"] == "people/new-person"


def test_an_entity_slug_is_checked_by_the_write_and_resolved_only_without_its_page(local, remote):
    from helpers import page

    page(local, "people/alice-example", "Alice Example")
    page(local, "people/carol", "Carol", visibility="private")
    page(local, "companies/acme-corp", "Acme Corp", aliases=["acme"])
    first = local.ok("remember", fact="likes tea", provenance="p", entity="people/alice-example")
    assert first["entity_slug"] == "people/alice-example" and first["status"] == "inserted"
    again = local.ok("remember", fact="Likes  tea", provenance="p", entity="people/alice-example")
    assert again["status"] == "duplicate" and again["id"] == first["id"]
    # A slug-shaped entity without a page of that slug is resolved the long way (here by alias).
    assert local.ok("remember", fact="ships", provenance="p", entity="acme")["entity_slug"] == "companies/acme-corp"
    # A private page is not there for a remote caller: the slug is kept as given, exactly as when
    # no page has it, so the answer says nothing about the private page.
    for entity in ("people/carol", "people/nobody"):
        body = remote.ok("remember", fact=f"{entity} met us", provenance="p", entity=entity)
        assert body["entity_slug"] == entity and body["status"] == "inserted"


def test_exact_restatement_is_duplicate(local):
    first = local.ok("remember", fact="Alice likes tea", provenance="p", entity="people/alice")
    again = local.ok("remember", fact="  alice   LIKES tea ", provenance="q", entity="people/alice")
    assert again["status"] == "duplicate" and again["id"] == first["id"]
    assert again["status_text"] == f"already knew this — kept fact #{first['id']}"
    other = local.ok("remember", fact="Alice likes tea", provenance="p", entity="people/bob")
    assert other["status"] == "inserted"  # another entity is never a candidate


def test_a_duplicate_answers_the_kept_facts_ttl_and_buckets_split_by_visibility(local):
    """Without a provider the exact-restatement rule alone decides (one statement on Postgres)."""
    first = local.ok("remember", fact="Alice likes tea", provenance="p", entity="people/alice", ttl="30d")
    again = local.ok("remember", fact="Alice likes tea", provenance="p", entity="people/alice")
    assert again["status"] == "duplicate" and again["id"] == first["id"]
    assert again["valid_until"] == first["valid_until"] is not None  # the kept fact's ttl, not the restatement's
    private = local.ok("remember", fact="Alice likes tea", provenance="p", entity="people/alice", visibility="private")
    assert private["status"] == "inserted"  # another visibility is another bucket
    assert local.ok("remember", fact="Alice likes tea", provenance="p", entity="people/alice",
                    visibility="private")["status"] == "duplicate"
    for _ in range(2):  # no entity, no bucket: never a duplicate
        assert local.ok("remember", fact="Alice likes tea", provenance="p")["status"] == "inserted"
    rows = local.dispatcher.open_brain().query("SELECT valid_from, created_at FROM facts")
    assert len(rows) == 4 and all(r["valid_from"] == r["created_at"] for r in rows)  # stamped once


def test_forgotten_fact_is_not_a_duplicate_candidate(local):
    first = local.ok("remember", fact="Alice likes tea", provenance="p", entity="people/alice")
    local.ok("forget", id=first["id"])
    again = local.ok("remember", fact="Alice likes tea", provenance="p", entity="people/alice")
    assert again["status"] == "inserted" and again["id"] != first["id"]


def test_dry_run_writes_nothing(remote):
    body = remote.ok("remember", fact="x", provenance="p", dry_run=True)
    assert body == {"dry_run": True, "action": "remember", "fact": "x", "protocol_version": 1}
    assert remote.ok("recall")["total"] == 0


TITLED = [  # (slug, title, the ways an entity may name it)
    ("tech/k8s", "Kubernetes", ["Kubernetes", "kubernetes", "KUBERNETES"]),
    ("notes/summer-2024", "Été 2024", ["Été 2024", "été 2024", "ÉTÉ  2024"]),
    ("notes/tokyo", "東京メモ", ["東京メモ"]),
    ("notes/strasse", "Straße", ["STRASSE", "straße"]),
]


def test_an_entity_named_by_a_page_title_resolves_to_that_page(local):
    """One word, accents, CJK: a page's title names it for remember and recall, with one folding on
    every backend (SQLite's lower() folds ASCII only, Postgres's follows the database's locale)."""
    for slug, title, _ in TITLED:
        local.ok("put_page", slug=slug, content=f"---\ntitle: {title}\n---\nAbout {title}.\n")
    for slug, _, names in TITLED:
        for n, name in enumerate(names):
            fact = f"fact {n} about {name}"
            body = local.ok("remember", fact=fact, provenance="p", entity=name)
            assert body["entity_slug"] == slug, (name, body)
            assert fact in [f["fact"] for f in local.ok("recall", entity=name)["facts"]]
            assert local.ok("entity", name=name)["card"]["entity"]["slug"] == slug, name
