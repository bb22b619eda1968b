"""The name index's table on every backend: written with the page, kept current, read as the caller may see."""

from __future__ import annotations

import pytest

from memverbs.server.brain.base import PageDraft
from tests.support.helpers import Client, page

S = "default"


@pytest.fixture
def brain(runtime):
    return runtime.brain()


def rows(brain, source: str = S) -> set[tuple[str, str, str]]:
    found = brain.query("SELECT name_key, slug, how FROM entity_names WHERE source_id = ?".replace(
        "?", "%s" if brain.backend == "postgres" else "?"), (source,))
    return {tuple(r) for r in found}


def named(brain, text: str, *, allow_private: bool = False, source: str = S) -> list[str]:
    return brain.named_in(source, text, allow_private=allow_private).slugs


def test_a_page_is_indexed_when_written_and_again_when_its_names_change(local: Client, brain):
    page(local, "people/alice-example", "Alice Example", type="person", aliases=["alice"])
    assert rows(brain) == {("alice example", "people/alice-example", "title"), ("alice", "people/alice-example", "alias"),
                           ("example", "people/alice-example", "part")}
    page(local, "people/alice-example", "Alice Sample", type="person")
    assert rows(brain) == {("alice sample", "people/alice-example", "title"), ("alice", "people/alice-example", "part"),
                           ("sample", "people/alice-example", "part"), ("alice example", "people/alice-example", "slug")}
    assert named(brain, "ask Alice Sample") == ["people/alice-example"]
    assert named(brain, "ask Alice Smith") == []


def test_an_alias_added_by_hand_names_the_page_and_survives_a_save(local: Client, brain):
    page(local, "companies/widget-co", "Widget Co", type="company")
    local.ok("add_alias", slug="companies/widget-co", alias="WCo")
    assert named(brain, "how is wco doing") == ["companies/widget-co"]
    page(local, "companies/widget-co", "Widget Co", type="company", summary="rewritten")
    assert named(brain, "how is wco doing") == ["companies/widget-co"]


def test_a_deleted_page_is_named_no_more_and_a_revived_one_again(local: Client, brain):
    page(local, "companies/widget-co", "Widget Co")
    local.ok("delete_page", slug="companies/widget-co")
    assert named(brain, "Widget Co") == [] and rows(brain) == set()
    page(local, "companies/widget-co", "Widget Co")
    assert named(brain, "Widget Co") == ["companies/widget-co"]


def test_a_renamed_page_is_named_under_its_new_slug(local: Client, brain):
    page(local, "people/alice-example", "Alice Example", type="person", aliases=["alice"])
    brain.rename_page(S, "people/alice-example", "people/alice-e", 2_000_000_000_000)
    assert named(brain, "Alice Example called") == ["people/alice-e"]
    assert {slug for _, slug, _ in rows(brain)} == {"people/alice-e"}


def test_a_private_page_is_named_only_for_a_caller_who_may_see_it(local: Client, brain):
    page(local, "people/secret-agent", "Secret Agent", type="person", visibility="private")
    assert named(brain, "did Secret Agent call") == []
    assert named(brain, "did Secret Agent call", allow_private=True) == ["people/secret-agent"]


def test_sources_never_see_each_others_names(brain):
    def draft(slug: str, title: str) -> PageDraft:
        return PageDraft(slug=slug, title=title, type="company", body="", frontmatter={}, summary=None,
                         visibility="world", aliases=[], links=[], timeline=[], markdown="")

    brain.save_page("teambrain", "companies/acme-example", lambda _: draft("companies/acme-example", "Acme Example"), 1)
    assert named(brain, "Anything on Acme Example?") == []
    assert named(brain, "Anything on Acme Example?", source="teambrain") == ["companies/acme-example"]


def test_a_long_text_is_looked_up_in_batches(local: Client, brain, monkeypatch):
    from memverbs.server.brain import names_store

    monkeypatch.setattr(names_store, "KEY_BATCH", 7)
    page(local, "companies/widget-co", "Widget Co")
    text = " ".join(f"word{i}" for i in range(40)) + " Widget Co"
    assert named(brain, text) == ["companies/widget-co"]


def test_rebuilding_the_index_writes_the_same_rows(local: Client, brain):
    page(local, "people/alice-example", "Alice Example", type="person", aliases=["alice"])
    local.ok("add_alias", slug="people/alice-example", alias="Ally")
    page(local, "companies/widget-co", "Widget Co")
    before = rows(brain)
    brain.rebuild_names()
    assert rows(brain) == before


def test_an_entity_with_facts_and_no_page_is_named_by_its_slug(local: Client, brain):
    local.ok("remember", fact="Bob owns the billing service", provenance="chat", entity="people/bob-marsh")
    local.ok("remember", fact="Carol's private note", provenance="chat", entity="people/carol-quill", visibility="private")
    assert named(brain, "ask bob marsh about billing") == ["people/bob-marsh"]
    # An entity whose only facts are private is named only for a caller who may see them.
    assert named(brain, "what about carol quill") == []
    assert named(brain, "what about carol quill", allow_private=True) == ["people/carol-quill"]
    # Once it has a page, the page's names are its names.
    page(local, "people/bob-marsh", "Robert Marsh", type="person", aliases=["bob"])
    assert named(brain, "ask Robert Marsh") == ["people/bob-marsh"]
    before = rows(brain)
    brain.rebuild_names()
    assert rows(brain) == before


def test_facts_moved_to_another_entity_take_their_name_along(local: Client, brain):
    local.ok("remember", fact="Ali runs the ops rota", provenance="chat", entity="ali-old")
    assert named(brain, "ask ali old") == ["ali-old"]
    local.ok("remember", fact="Alice owns billing", provenance="chat", entity="people/alice-new")
    brain.move_facts(S, "ali-old", "people/alice-new", "the same person", 2_000_000_000_000)
    assert named(brain, "ask ali old") == [] and named(brain, "ask alice new") == ["people/alice-new"]
    assert {slug for _, slug, _ in rows(brain)} == {"people/alice-new"}
