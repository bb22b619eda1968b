"""SQLite's own part of the schema steps: its column types, and what only SQLite has.

The tables both backends share are in `schema.py`; `migrations.MIGRATIONS` says which step runs
what. Here: the spelling of schema.py's column types, FTS5 keyword indexes kept in step with their
tables by triggers, and the rebuild SQLite asks for to drop a table's key.
"""

from __future__ import annotations

import sqlite3

COLUMN_TYPES = {
    "rowid": "INTEGER PRIMARY KEY",  # the rowid itself: a deleted row's id may come back
    "serial": "INTEGER PRIMARY KEY AUTOINCREMENT",
    "bigint": "INTEGER",
    "flag": "INTEGER",
    "double": "REAL",
    "keytext": "TEXT",  # SQLite compares text byte by byte (BINARY) already
    "bytes": "BLOB",
    "without_rowid": " WITHOUT ROWID",
}

def kept_in_step(index: str, table: str, columns: tuple[str, ...], tokenize: str, *, options: str = "",
                 rebuild: bool = False, on_update: bool = True) -> str:
    """An external-content FTS5 index over `table`'s `columns` (the text lives once, in the table),
    kept in step by triggers; `rebuild` fills it from the rows already there, `on_update` follows
    edits of those columns (an index over text that never changes needs no update trigger)."""
    cols = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    insert = f"INSERT INTO {index} (rowid, {cols}) VALUES (new.id, {new});"
    delete = f"INSERT INTO {index} ({index}, rowid, {cols}) VALUES ('delete', old.id, {old});"
    script = [
        f"CREATE VIRTUAL TABLE {index} USING fts5({cols}, content='{table}', content_rowid='id', "
        f"tokenize='{tokenize}'{options});",
        f"INSERT INTO {index} ({index}) VALUES ('rebuild');" if rebuild else "",
        f"CREATE TRIGGER {index}_ai AFTER INSERT ON {table} BEGIN {insert} END;",
        f"CREATE TRIGGER {index}_ad AFTER DELETE ON {table} BEGIN {delete} END;",
        f"CREATE TRIGGER {index}_au AFTER UPDATE OF {cols} ON {table} BEGIN {delete} {insert} END;" if on_update else "",
    ]
    return "\n".join(line for line in script if line) + "\n"


# External-content FTS5 tables kept in step by triggers: the text lives once.
KEYWORD_INDEX = (kept_in_step("pages_fts", "pages", ("title", "body"), "unicode61 remove_diacritics 2")
                 + kept_in_step("facts_fts", "facts", ("fact",), "unicode61 remove_diacritics 2", on_update=False))

# Facts are searched by memverbs's own index terms (migrations.fill_fact_terms), indexed split on
# spaces: FTS5's `ascii` tokeniser splits on ASCII separators only, and the terms hold none but
# the spaces, so both backends index exactly the same terms. The old index goes first, and the new
# one is built once the terms are filled in.
FACT_TERMS = """
        ALTER TABLE facts ADD COLUMN search_terms TEXT NOT NULL DEFAULT '';
        DROP TRIGGER facts_fts_ai;
        DROP TRIGGER facts_fts_ad;
        DROP TABLE facts_fts;
"""
FACT_TERMS_INDEX = kept_in_step("facts_fts", "facts", ("search_terms",), "ascii", rebuild=True)

# Scripts written without spaces (Chinese, Japanese, Thai, …) keep a whole run as one unicode61
# token, so a word inside a run cannot be found through pages_fts. A trigram index beside it finds
# any substring of three characters or more (two-character words are checked by a scan of the
# source's pages); `detail='none'` keeps it to what substring matching needs.
PAGE_TRIGRAMS = kept_in_step("pages_trigram", "pages", ("title", "body"), "trigram", options=", detail='none'", rebuild=True)

# SQLite drops a table's key by rebuilding the table (the 12-step way; steps run before foreign
# keys are on, so the rebuilt parent keeps its children's rows): sync_folders without its
# one-row-per-path key, and with the folder's id. Then schema.FOLDER_IDENTITY indexes it.
FOLDER_IDENTITY = """
        CREATE TABLE sync_folders_new (
            id             INTEGER PRIMARY KEY,
            source_id      TEXT NOT NULL,
            root           TEXT NOT NULL,                 -- where the folder is now, on its host
            slug_prefix    TEXT NOT NULL DEFAULT '',
            mode           TEXT NOT NULL CHECK (mode IN ('import', 'sync')),
            created_at     INTEGER NOT NULL,
            last_pass_at   INTEGER,
            last_change_at INTEGER,
            watcher_pid    INTEGER,
            watcher_beat   INTEGER,
            host           TEXT,
            watcher_host   TEXT,
            folder_uid     TEXT                           -- the id in the folder's .memverbs/folder.json
        );
        INSERT INTO sync_folders_new (id, source_id, root, slug_prefix, mode, created_at, last_pass_at, last_change_at,
                                      watcher_pid, watcher_beat, host, watcher_host)
            SELECT id, source_id, root, slug_prefix, mode, created_at, last_pass_at, last_change_at,
                   watcher_pid, watcher_beat, host, watcher_host FROM sync_folders;
        DROP TABLE sync_folders;
        ALTER TABLE sync_folders_new RENAME TO sync_folders;
"""


# The world view of the pages and facts, for untrusted callers' keyword ranking (brain/page_search.py,
# facts_store.facts_ranked; the facts' is read by sqlite_fact_rank.py too). FTS5's
# bm25 reads the whole index's statistics (how many pages hold a word, how long pages are) and every
# word of a matched page, so ranking over pages_fts would let a private row's words, or a private
# page's, move a world page up or down: an oracle. This index holds what such a caller can read and
# nothing else: the title and the world text (markdown.without_private_rows) of each live world page.
# Kept in step by triggers that call the world text's Python function, which every connection
# memverbs opens registers (`register`); a connection without it cannot write a page at all rather
# than write one this index misses. It keeps its own copy of the text (not external content): a
# row is removed by its id, so the rule for a private row may change without the index going wrong.
WORLD_BODY_FUNCTION = "memverbs_world_body"


def register(db: sqlite3.Connection) -> None:
    """The SQL functions the schema's triggers call, on this connection."""
    db.create_function(WORLD_BODY_FUNCTION, 1, _world_body, deterministic=True)


def _world_body(body: str | None) -> str | None:
    # Imported when a page is written or searched, not when a brain is opened: a hook opens one and
    # reads, and must not pay for the page reader's modules.
    from memverbs.server.pages.markdown import without_private_rows  # noqa: PLC0415

    return None if body is None else without_private_rows(body)


_LIVE_WORLD = "new.visibility = 'world' AND new.deleted_at IS NULL"
# The world facts' index holds no text of its own (external content: the facts' terms): a row leaves
# it with the terms it was indexed with, which the trigger has (old.search_terms).
_ADD_FACT = "INSERT INTO facts_world_fts (rowid, search_terms) SELECT new.id, new.search_terms;"
_DROP_FACT = "INSERT INTO facts_world_fts (facts_world_fts, rowid, search_terms) SELECT 'delete', old.id, old.search_terms;"
_ADD_WORLD = (f"INSERT INTO pages_world_fts (rowid, title, body) SELECT new.id, new.title, {WORLD_BODY_FUNCTION}(new.body) "
              f"WHERE {_LIVE_WORLD};")
WORLD_INDEX = f"""
        CREATE VIRTUAL TABLE pages_world_fts USING fts5(title, body, tokenize='unicode61 remove_diacritics 2');
        CREATE TRIGGER pages_world_fts_ai AFTER INSERT ON pages BEGIN {_ADD_WORLD} END;
        CREATE TRIGGER pages_world_fts_ad AFTER DELETE ON pages BEGIN DELETE FROM pages_world_fts WHERE rowid = old.id; END;
        CREATE TRIGGER pages_world_fts_au AFTER UPDATE OF title, body, visibility, deleted_at ON pages BEGIN
            DELETE FROM pages_world_fts WHERE rowid = old.id; {_ADD_WORLD} END;
        INSERT INTO pages_world_fts (rowid, title, body)
            SELECT id, title, {WORLD_BODY_FUNCTION}(body) FROM pages WHERE visibility = 'world' AND deleted_at IS NULL;
        CREATE VIRTUAL TABLE facts_world_fts USING fts5(search_terms, content='facts', content_rowid='id', tokenize='ascii');
        CREATE VIEW facts_world AS SELECT id, search_terms FROM facts WHERE visibility = 'world';
        CREATE TRIGGER facts_world_fts_ai AFTER INSERT ON facts WHEN new.visibility = 'world' BEGIN {_ADD_FACT} END;
        CREATE TRIGGER facts_world_fts_ad AFTER DELETE ON facts WHEN old.visibility = 'world' BEGIN {_DROP_FACT} END;
        CREATE TRIGGER facts_world_fts_au AFTER UPDATE OF visibility, search_terms ON facts BEGIN
            {_DROP_FACT.replace(";", " WHERE old.visibility = 'world';")} {_ADD_FACT.replace(";", " WHERE new.visibility = 'world';")} END;
        INSERT INTO facts_world_fts (rowid, search_terms) SELECT id, search_terms FROM facts WHERE visibility = 'world';
"""


# The name index names an entity that has facts but no page by its slug read as words (its last
# segment, `-` and `_` as spaces: name_index.slug_key's rule for a slug), from the fact that first
# files something under it. A trigger, so every way a fact is written (remember, capture, a copy, a
# restore) keeps it; a page's own names replace the row when the page is written (names_store).
ENTITY_NAMES_FROM_FACTS = """
        CREATE TRIGGER facts_entity_name AFTER INSERT ON facts WHEN new.entity_slug IS NOT NULL BEGIN
            INSERT OR IGNORE INTO entity_names (source_id, name_key, slug, how)
            VALUES (new.source_id,
                    replace(replace(substr(new.entity_slug, length(rtrim(new.entity_slug, replace(new.entity_slug, '/', ''))) + 1),
                                    '-', ' '), '_', ' '),
                    new.entity_slug, 'slug');
        END;
        CREATE TRIGGER facts_entity_name_moved AFTER UPDATE OF entity_slug ON facts
        WHEN new.entity_slug IS NOT old.entity_slug BEGIN
            INSERT OR IGNORE INTO entity_names (source_id, name_key, slug, how)
            SELECT new.source_id,
                   replace(replace(substr(new.entity_slug, length(rtrim(new.entity_slug, replace(new.entity_slug, '/', ''))) + 1),
                                   '-', ' '), '_', ' '),
                   new.entity_slug, 'slug'
            WHERE new.entity_slug IS NOT NULL;
            DELETE FROM entity_names WHERE source_id = old.source_id AND slug = old.entity_slug
                AND NOT EXISTS (SELECT 1 FROM pages WHERE source_id = old.source_id AND slug = old.entity_slug AND deleted_at IS NULL)
                AND NOT EXISTS (SELECT 1 FROM facts WHERE source_id = old.source_id AND entity_slug = old.entity_slug);
        END;
"""
