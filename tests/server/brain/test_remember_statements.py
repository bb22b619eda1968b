"""remember's write on SQLite runs each check only when the one before it let the write go on.

The store is written once for both backends in the order Postgres's pipeline wants (every check
sent before any answer is read, `Store.ahead`); on SQLite, in process, a check an earlier answer
made moot must not run at all. remember is the hot write, so its statements are pinned here:
which statements run, in order, for each way a write ends (SQLite's trace callback sees them all).
"""

from __future__ import annotations

import sqlite3
import struct

import pytest
from helpers import init_home

from memverbs.server.brain.base import NewFact, PageDraft
from memverbs.server.runtime import Runtime

S = "default"
NOW = 1_800_000_000_000


@pytest.fixture
def brain(tmp_path):
    runtime = Runtime(init_home(tmp_path / "home"))
    yield runtime.brain()
    runtime.close()


def fact(text: str, entity: str = "people/alice") -> NewFact:
    return NewFact(fact=text, fact_norm=text.lower(), kind="preference", entity_slug=entity, visibility="world",
                   provenance="test", valid_until=None)


def ran(db: sqlite3.Connection, call) -> tuple[object, list[str]]:
    """What `call` answers and the statements it ran, each named by its verb and first table."""
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    try:
        out = call()
    finally:
        db.set_trace_callback(None)
    names: list[str] = []
    last = None
    for sql in seen:
        # FTS5's own statements run inside the insert's triggers, and a trigger's steps are traced
        # as its statement again: neither is a statement the store sent.
        if sql.startswith("--") or "'main'" in sql or sql == last:
            continue
        last = sql
        words = sql.replace("(", " ").split()
        verb = " ".join(words[:2]) if words[0] in ("BEGIN", "COMMIT", "ROLLBACK") else words[0]
        table = next((words[i + 1] for i, w in enumerate(words[:-1]) if w in ("FROM", "INTO", "UPDATE")), "")
        names.append(f"{verb} {table}".strip())
    return out, names


def page_there(brain) -> None:
    brain.save_page(S, "people/alice", lambda current: PageDraft(
        slug="people/alice", title="Alice", type="person", body="# Alice\n", frontmatter={"title": "Alice"},
        summary=None, visibility="world", aliases=[]), NOW)


def test_without_a_vector_each_check_runs_only_when_the_one_before_passed(brain):
    out, names = ran(brain.db, lambda: brain.remember_fact(S, fact("Likes tea"), NOW, require_page=True))
    assert out == ("no_page", 0, None)
    assert names == ["BEGIN IMMEDIATE", "SELECT pages", "COMMIT"]  # no exact check: the page decided
    page_there(brain)
    out, names = ran(brain.db, lambda: brain.remember_fact(S, fact("Likes tea"), NOW, require_page=True))
    assert out[0] == "inserted"
    assert names == ["BEGIN IMMEDIATE", "SELECT pages", "SELECT facts", "INSERT facts", "COMMIT"]
    out, names = ran(brain.db, lambda: brain.remember_fact(S, fact("Likes tea"), NOW))
    assert out[0] == "duplicate"
    assert names == ["BEGIN IMMEDIATE", "SELECT facts", "COMMIT"]


def test_with_a_vector_the_bucket_is_read_only_when_no_exact_restatement_decided(brain):
    space = brain.space_id("test", "test-model", 2, create=True)
    vector = struct.pack("<2f", 1.0, 0.0)
    asked: list[int] = []

    def choose(bucket):
        asked.append(len(bucket))
        return None

    def remember(text: str):
        return brain.remember_fact(S, fact(text), NOW, vector=vector, space_id=space, choose=choose)

    out, names = ran(brain.db, lambda: remember("Likes tea"))
    assert out[0] == "inserted" and asked == [0]
    assert names == ["BEGIN IMMEDIATE", "SELECT facts", "SELECT facts", "INSERT facts", "INSERT fact_vectors", "COMMIT"]
    out, names = ran(brain.db, lambda: remember("Likes tea"))
    assert out[0] == "duplicate" and asked == [0]  # the exact restatement decided: no bucket, no chooser
    assert names == ["BEGIN IMMEDIATE", "SELECT facts", "COMMIT"]
