"""Each brain store called directly, on every backend: what its methods promise, row for row.

The verb, page and sync tests reach these through the dispatcher; here each store
(sessions, tokens, facts, sync, pages) is pinned on its own, so a backend that
drifts from the other fails next to the method that drifted. Both backends run
the same assertions (tests/server/conftest.py parametrises `brain_backend`).
"""

from __future__ import annotations

import pytest

from memverbs.server.brain.base import FactFilter, NewFact, PageDraft, TokenNameTaken

S = "default"
DAY_MS = 24 * 3600 * 1000
NOW = 1_800_000_000_000


@pytest.fixture
def brain(runtime):
    return runtime.brain()


def new_fact(text: str, *, entity: str | None = "people/alice", visibility: str = "world") -> NewFact:
    return NewFact(fact=text, fact_norm=text.lower(), kind="preference", entity_slug=entity, visibility=visibility,
                   provenance="test", valid_until=None)


def draft(slug: str, title: str, *, visibility: str = "world", aliases: list[str] | None = None) -> PageDraft:
    return PageDraft(slug=slug, title=title, type="person", body=f"# {title}\n", frontmatter={"title": title},
                     summary=None, visibility=visibility, aliases=aliases or [])


# -- sessions: delta's cursors ---------------------------------------------------------------


def test_a_cursor_is_one_row_per_lane_and_session_updated_in_place(brain):
    assert brain.cursor(S, "mcp:claude", "s1") is None
    brain.save_cursor(S, "mcp:claude", "s1", 100, "people/a", NOW)
    brain.save_cursor(S, "mcp:claude", "s1", 200, "people/b", NOW + 1)
    brain.save_cursor(S, "mcp:codex", "s1", 300, "people/c", NOW)
    row = brain.cursor(S, "mcp:claude", "s1")
    assert (row["last_wake_at"], row["cursor_slug"]) == (200, "people/b")
    assert brain.cursor(S, "mcp:codex", "s1")["last_wake_at"] == 300


def test_idle_cursors_are_collected_and_fresh_ones_kept(brain):
    brain.save_cursor(S, "cli", "old", 1, "", NOW - 8 * DAY_MS)
    brain.save_cursor(S, "cli", "new", 1, "", NOW - 1 * DAY_MS)
    assert brain.gc_cursors(NOW, S, "cli") == 1
    assert brain.cursor(S, "cli", "old") is None
    assert brain.cursor(S, "cli", "new") is not None


def test_a_new_sessions_cursor_is_saved_and_the_idle_ones_collected_in_one_write(brain):
    brain.save_cursor(S, "local", "old", 1, "", NOW - 8 * DAY_MS)
    brain.save_cursor(S, "local", "kept", 1, "", NOW - 1 * DAY_MS)
    brain.start_cursor(S, "local", "started", 42, NOW)
    row = brain.cursor(S, "local", "started")
    assert (row["last_wake_at"], row["cursor_slug"]) == (42, "")
    assert brain.cursor(S, "local", "old") is None and brain.cursor(S, "local", "kept") is not None


# -- tokens: hashes only, revoked rather than deleted ----------------------------------------


def token(brain, name: str, token_hash: str) -> int:
    return brain.create_token(name=name, token_hash=token_hash, token_hint="mvb_abcd…", scopes="read,write",
                              surface="full", source_id=S, client_id=f"token:{name}", now=NOW)


def test_tokens_are_created_found_by_hash_and_revoked_with_an_audit_trail(brain):
    first = token(brain, "laptop", "h1")
    with pytest.raises(TokenNameTaken):
        token(brain, "laptop", "h2")
    live = brain.live_token("h1")
    assert (live["id"], live["name"], live["client_id"], live["revoked_at"]) == (first, "laptop", "token:laptop", None)
    assert brain.revoke_token("laptop", NOW + 5) == 1
    assert brain.revoke_token("laptop", NOW + 6) == 0
    assert brain.live_token("h1") is None
    assert brain.tokens() == []
    [revoked] = brain.tokens(include_revoked=True)
    assert revoked["revoked_at"] == NOW + 5


def test_token_use_is_recorded_at_most_once_a_minute(brain):
    token_id = token(brain, "ci", "h3")
    brain.touch_token(token_id, None, NOW)
    brain.touch_token(token_id, NOW, NOW + 1_000)  # within the minute: not written
    assert brain.live_token("h3")["last_used_at"] == NOW
    brain.touch_token(token_id, NOW, NOW + 61_000)
    assert brain.live_token("h3")["last_used_at"] == NOW + 61_000


# -- facts -----------------------------------------------------------------------------------


def test_facts_are_inserted_filtered_and_expired_once(brain):
    tea = brain.insert_fact(S, new_fact("Alice prefers tea"), NOW)
    brain.insert_fact(S, new_fact("Alice's door code is 4321", visibility="private"), NOW + 1)
    brain.insert_fact(S, new_fact("Bob prefers coffee", entity="people/bob"), NOW + 2)
    assert brain.fact(tea)["fact"] == "Alice prefers tea"

    def about_alice(*, world_only: bool) -> list[str]:
        f = FactFilter(arm="entity", now=NOW + 10, world_only=world_only, active_only=True, limit=10,
                       entity_slug="people/alice")
        return sorted(r["fact"] for r in brain.facts(S, f))

    assert about_alice(world_only=False) == ["Alice prefers tea", "Alice's door code is 4321"]
    assert about_alice(world_only=True) == ["Alice prefers tea"]
    assert brain.expire_fact(tea, NOW + 20, "switched to coffee") is True
    assert brain.expire_fact(tea, NOW + 30, "again") is False
    assert about_alice(world_only=True) == []
    assert brain.fact(tea)["expiry_reason"] == "switched to coffee"


def test_a_fact_that_requires_its_page_is_written_only_beside_a_page_the_caller_may_see(brain):
    brain.save_page(S, "people/alice", lambda current: draft("people/alice", "Alice"), NOW)
    brain.save_page(S, "people/carol", lambda current: draft("people/carol", "Carol", visibility="private"), NOW)
    brain.save_page(S, "people/dora", lambda current: draft("people/dora", "Dora"), NOW)
    brain.delete_page(S, "people/dora", NOW + 1, allow_private=True)

    def remember(entity: str, *, allow_private: bool) -> tuple[str, int]:
        status, fact_id, _ = brain.remember_fact(S, new_fact(f"{entity} likes tea", entity=entity), NOW + 2,
                                                 require_page=True, allow_private=allow_private)
        return status, fact_id

    def written(entity: str) -> int:
        f = FactFilter(arm="entity", now=NOW + 10, world_only=False, active_only=True, limit=10, entity_slug=entity)
        return len(brain.facts(S, f))

    for missing in ("people/nobody", "people/dora"):  # no page, a deleted page: nothing written
        assert remember(missing, allow_private=True) == ("no_page", 0) and written(missing) == 0
    assert remember("people/carol", allow_private=False) == ("no_page", 0)  # private, to an untrusted caller
    assert written("people/carol") == 0
    assert remember("people/carol", allow_private=True)[0] == "inserted" and written("people/carol") == 1
    status, alice = remember("people/alice", allow_private=False)
    assert status == "inserted" and written("people/alice") == 1
    assert remember("people/alice", allow_private=False) == ("duplicate", alice)  # dedup still applies


def test_moving_facts_refiles_them_audits_each_move_and_expires_duplicates(brain):
    kept = brain.insert_fact(S, new_fact("Likes jazz", entity="people/alice"), NOW)
    moved = brain.insert_fact(S, new_fact("Plays piano", entity="people/ali"), NOW)
    dup = brain.insert_fact(S, new_fact("Likes jazz", entity="people/ali"), NOW)
    outcome = dict(brain.move_facts(S, "people/ali", "people/alice", "same person", NOW + 1))
    assert outcome == {moved: "moved", dup: "duplicate"}
    assert brain.fact(moved)["entity_slug"] == "people/alice"
    assert brain.fact(dup)["expired_at"] is not None and brain.fact(kept)["expired_at"] is None
    [move] = brain.fact_trail(moved)["moves"]
    assert (move["from_slug"], move["to_slug"], move["reason"]) == ("people/ali", "people/alice", "same person")


# -- pages -----------------------------------------------------------------------------------


def test_a_page_is_saved_found_by_alias_and_soft_deleted(brain):
    created, _ = brain.save_page(S, "people/alice", lambda current: draft("people/alice", "Alice", aliases=["Ali"]), NOW)
    assert created is True
    created, _ = brain.save_page(S, "people/alice", lambda current: draft("people/alice", "Alice A."), NOW + 1)
    assert created is False
    assert brain.page(S, "people/alice")["title"] == "Alice A."
    assert brain.add_alias(S, "people/alice", "Al", "al", 1, allow_private=True) is True
    assert brain.alias_slugs(S, "al") == ["people/alice"]
    assert brain.delete_page(S, "people/alice", NOW + 2, allow_private=True) is True
    assert brain.add_alias(S, "people/alice", "Allie", "allie", 1, allow_private=True) is None  # deleted: as if missing


def test_page_writes_refuse_a_private_page_to_an_untrusted_caller_as_if_it_were_missing(brain):
    brain.save_page(S, "people/carol", lambda current: draft("people/carol", "Carol", visibility="private"), NOW)
    assert brain.page(S, "people/carol", allow_private=False) is None
    assert brain.add_alias(S, "people/carol", "Caz", "caz", 1, allow_private=False) is None
    assert brain.add_timeline_entry(S, "people/carol", "2026-01-01", "met", None, NOW, allow_private=False) is None
    assert brain.delete_page(S, "people/carol", NOW, allow_private=False) is None
    assert brain.page(S, "people/carol")["title"] == "Carol"  # still there, untouched


def test_a_rename_moves_aliases_links_timeline_and_facts(brain):
    brain.save_page(S, "people/ali", lambda current: draft("people/ali", "Alice", aliases=["Ali"]), NOW)
    brain.save_page(S, "companies/acme", lambda current: draft("companies/acme", "Acme"), NOW)
    brain.add_link(S, "people/ali", "companies/acme", "works_at", "manual", None, NOW, allow_private=True)
    brain.add_timeline_entry(S, "people/ali", "2026-01-01", "joined Acme", None, NOW, allow_private=True)
    fact_id = brain.insert_fact(S, new_fact("Likes jazz", entity="people/ali"), NOW)
    brain.rename_page(S, "people/ali", "people/alice", NOW + 1)
    assert brain.page(S, "people/ali") is None
    assert [a.lower() for a in brain.aliases_of(S, "people/alice")] == ["ali"]
    assert [r["to_slug"] for r in brain.page_links(S, "people/alice", allow_private=True, private_rows=True)] == ["companies/acme"]
    assert [r["summary"] for r in brain.timeline_entries(S, "people/alice", 10)] == ["joined Acme"]
    assert brain.fact(fact_id)["entity_slug"] == "people/alice"


# -- sync: folders, files and conflicts ------------------------------------------------------


def test_a_folder_is_created_once_and_upgraded_from_import_to_sync(brain):
    first = brain.sync_folder(S, "/notes", "notes/", "import", NOW)
    again = brain.sync_folder(S, "/notes", "notes/", "sync", NOW + 1)
    assert again["id"] == first["id"] and again["mode"] == "sync"
    assert brain.sync_folder(S, "/notes", "notes/", "import", NOW + 2)["mode"] == "sync"  # never downgraded
    assert [r["root"] for r in brain.sync_folder_rows(S, "sync")] == ["/notes"]
    brain.sync_folder_stamp(first["id"], passed_at=NOW + 3, changed_at=NOW + 4)
    [row] = brain.sync_folder_rows(S)
    assert (row["last_pass_at"], row["last_change_at"]) == (NOW + 3, NOW + 4)


def test_file_rows_are_upserted_found_by_path_or_slug_and_forgotten(brain):
    folder = brain.sync_folder(S, "/notes", "", "sync", NOW)["id"]
    brain.sync_record_file(folder, ("a.md", "a", "hash1", 10, 1, NOW, NOW))
    brain.sync_record_file(folder, ("a.md", "a", "hash2", 12, 2, NOW + 1, NOW + 1))
    [row] = brain.sync_file_rows(folder)
    assert (row["file_hash"], row["size"]) == ("hash2", 12)
    assert brain.sync_file_row(folder, slug="a")["rel_path"] == "a.md"
    brain.sync_forget_file(folder, "a.md")
    assert brain.sync_file_row(folder, rel_path="a.md") is None


def test_conflicts_are_listed_per_folder(brain):
    notes = brain.sync_folder(S, "/notes", "", "sync", NOW)["id"]
    other = brain.sync_folder(S, "/other", "", "sync", NOW)["id"]
    brain.sync_add_conflict(notes, "a.md", "a", "brain side", NOW)
    brain.sync_add_conflict(other, "b.md", "b", "brain side", NOW)
    assert [r["rel_path"] for r in brain.sync_conflict_rows(S, notes)] == ["a.md"]
    assert sorted(r["rel_path"] for r in brain.sync_conflict_rows(S)) == ["a.md", "b.md"]
