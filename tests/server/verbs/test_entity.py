"""entity: resolution precedence, the card, suggestions, never an error on a miss."""

import time
from datetime import UTC, datetime, timedelta

from helpers import page


def day(offset: int) -> str:
    return (datetime.now(UTC) + timedelta(days=offset)).strftime("%Y-%m-%d")


def test_blank_name_is_invalid(remote):
    err = remote.err("entity", name="  ")
    assert err["error"] == "invalid_params" and err["message"] == "name must be a non-empty string."
    assert err["suggestion"].strip()


def test_miss_is_found_false_with_suggestions(remote, local):
    body = remote.ok("entity", name="zzz-nobody")
    assert body["found"] is False and body["suggestions"] == [] and "card" not in body
    assert list(body) == ["protocol_version", "found", "latency_ms", "suggestions"]
    page(local, "companies/acme-payments", "Acme Payments", body="Acme payments platform.")
    near = remote.ok("entity", name="acme platform")
    assert near["found"] is False
    assert near["suggestions"] == [{"slug": "companies/acme-payments", "title": "Acme Payments", "create_safety": "probable"}]


def test_resolution_forms(local):
    page(local, "people/target-person-1", "Target Person 1", aliases=["tp1"])
    for name in ("tp1", "Target Person 1", "target person 1", "people/target-person-1", "target-person-1"):
        body = local.ok("entity", name=name)
        assert body["found"] is True and body["card"]["entity"]["slug"] == "people/target-person-1", name


def test_alias_beats_title_beats_suffix(local):
    page(local, "people/sam", "Sam")
    page(local, "companies/sam", "Sam Industries")
    page(local, "people/samuel", "Samuel Ex", aliases=["Sam"])
    body = local.ok("entity", name="Sam")
    assert body["card"]["entity"]["slug"] == "people/samuel"
    # exact title (rank 1) before slug suffix (rank 2)
    assert [s["slug"] for s in body["suggestions"]] == ["people/sam", "companies/sam"]
    assert all(s["create_safety"] == "exists" for s in body["suggestions"])


def test_ties_break_on_most_recently_touched(local):
    page(local, "people/kim", "Kim")
    time.sleep(0.005)  # timestamps are milliseconds: make "more recent" unambiguous
    page(local, "companies/kim", "Kim")
    assert local.ok("entity", name="Kim")["card"]["entity"]["slug"] == "companies/kim"
    time.sleep(0.005)
    page(local, "people/kim", "Kim", body="updated")
    assert local.ok("entity", name="Kim")["card"]["entity"]["slug"] == "people/kim"


def test_card_shape_and_contents(local):
    page(
        local,
        "people/alice",
        "Alice Example",
        body=f"Alice runs payments. She also writes.\n\n## Timeline\n- {day(-3)}: Shipped v2\n- {day(-200)}: Joined\n",
        type="person",
        aliases=["Ali", "A. Example"],
        links={"works_at": "companies/acme"},
    )
    page(local, "companies/acme", "Acme", body="See [[people/alice]].")
    page(local, "people/bob", "Bob")
    local.ok("add_link", **{"from": "people/bob", "to": "people/alice", "link_type": "knows"})
    local.ok("add_link", **{"from": "people/bob", "to": "people/alice", "link_type": "mentioned", "link_source": "mentions"})
    local.ok("remember", fact="Alice will send the deck", provenance="p", entity="people/alice", kind="commitment")
    local.ok("remember", fact="Alice likes tea", provenance="p", entity="people/alice")
    card = local.ok("entity", name="Ali")["card"]
    assert list(card) == ["entity", "aka", "summary", "last_touched", "open_threads", "edges", "backlink_count", "active_fact_count"]
    assert card["entity"] == {"slug": "people/alice", "title": "Alice Example", "type": "person"}
    assert card["aka"] == ["a. example", "ali"]
    assert card["summary"] == "Alice runs payments."
    assert card["last_touched"]["last_timeline_date"] == day(-3)
    assert card["open_threads"][0]["kind"] == "commitment" and card["open_threads"][0]["text"] == "Alice will send the deck"
    assert card["open_threads"][1] == {"kind": "recent_event", "text": "Shipped v2", "date": day(-3)}
    assert len(card["open_threads"]) == 2  # the 200-day-old entry is not recent
    assert card["edges"][0] == {"type": "works_at", "direction": "out", "slug": "companies/acme", "context": None}
    directions = [e["direction"] for e in card["edges"]]
    assert directions == sorted(directions, key=lambda d: d != "out")  # out-edges first
    assert {"type": "knows", "direction": "in", "slug": "people/bob", "context": None} in card["edges"]
    assert all(e["type"] != "mentioned" for e in card["edges"])
    assert card["backlink_count"] == 2  # acme's [[link]] and bob's knows; the mention does not count
    assert card["active_fact_count"] == 2


def test_summary_clipped_to_160(local):
    page(local, "people/long", "Long", summary="word " * 100)
    summary = local.ok("entity", name="people/long")["card"]["summary"]
    assert len(summary) <= 160 and summary.endswith("…")


def test_caps(local):
    page(local, "people/hub", "Hub")
    for n in range(15):
        local.ok("add_link", **{"from": "people/hub", "to": f"x/n{n}", "link_type": "rel"})
        local.ok("remember", fact=f"commit {n}", provenance="p", entity="people/hub", kind="commitment")
    card = local.ok("entity", name="people/hub")["card"]
    assert len(card["edges"]) == 10 and len(card["open_threads"]) == 3


def test_active_fact_count_capped_at_100(local):
    page(local, "people/busy", "Busy")
    for n in range(105):
        local.ok("remember", fact=f"fact {n}", provenance="p", entity="people/busy")
    assert local.ok("entity", name="people/busy")["card"]["active_fact_count"] == 100


def test_deleted_page_is_a_miss(local):
    page(local, "people/gone", "Gone Person")
    local.ok("delete_page", slug="people/gone")
    assert local.ok("entity", name="Gone Person")["found"] is False


def test_a_summary_from_a_list_reads_its_item_not_its_marker(local):
    """The first line under the heading is a numbered list, or a task: the card says the item, not `1.`."""
    for slug, first in (("projects/steps", "1. Ship the billing flag first. Then the rest."),
                        ("projects/todo", "- [ ] Ship the billing flag first. Then the rest."),
                        ("projects/paren", "3) Ship the billing flag first. Then the rest.")):
        local.ok("put_page", slug=slug, content=f"# Steps\n\n{first}\n2. More.\n")
        assert local.ok("entity", name=slug)["card"]["summary"] == "Ship the billing flag first."
