"""SQLite's own part of the schema steps: its column types, and what only SQLite has.

The tables both backends share are in `schema.py`; `migrations.MIGRATIONS` says which step runs
what. Here: the spelling of schema.py's column types, FTS5 keyword indexes kept in step with their
tables by triggers, and the rebuild SQLite asks for to drop a table's key.
"""

from __future__ import annotations

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

# External-content FTS5 tables kept in step by triggers: the text lives once.
KEYWORD_INDEX = """
        CREATE VIRTUAL TABLE pages_fts USING fts5(
            title, body, content='pages', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER pages_fts_ai AFTER INSERT ON pages BEGIN
            INSERT INTO pages_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
        END;
        CREATE TRIGGER pages_fts_ad AFTER DELETE ON pages BEGIN
            INSERT INTO pages_fts (pages_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
        END;
        CREATE TRIGGER pages_fts_au AFTER UPDATE OF title, body ON pages BEGIN
            INSERT INTO pages_fts (pages_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
            INSERT INTO pages_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
        END;

        CREATE VIRTUAL TABLE facts_fts USING fts5(
            fact, content='facts', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER facts_fts_ai AFTER INSERT ON facts BEGIN
            INSERT INTO facts_fts (rowid, fact) VALUES (new.id, new.fact);
        END;
        CREATE TRIGGER facts_fts_ad AFTER DELETE ON facts BEGIN
            INSERT INTO facts_fts (facts_fts, rowid, fact) VALUES ('delete', old.id, old.fact);
        END;
"""

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
FACT_TERMS_INDEX = """
        CREATE VIRTUAL TABLE facts_fts USING fts5(search_terms, content='facts', content_rowid='id', tokenize='ascii');
        INSERT INTO facts_fts (facts_fts) VALUES ('rebuild');
        CREATE TRIGGER facts_fts_ai AFTER INSERT ON facts BEGIN
            INSERT INTO facts_fts (rowid, search_terms) VALUES (new.id, new.search_terms);
        END;
        CREATE TRIGGER facts_fts_ad AFTER DELETE ON facts BEGIN
            INSERT INTO facts_fts (facts_fts, rowid, search_terms) VALUES ('delete', old.id, old.search_terms);
        END;
        CREATE TRIGGER facts_fts_au AFTER UPDATE OF search_terms ON facts BEGIN
            INSERT INTO facts_fts (facts_fts, rowid, search_terms) VALUES ('delete', old.id, old.search_terms);
            INSERT INTO facts_fts (rowid, search_terms) VALUES (new.id, new.search_terms);
        END;
"""

# Scripts written without spaces (Chinese, Japanese, Thai, …) keep a whole run as one unicode61
# token, so a word inside a run cannot be found through pages_fts. A trigram index beside it finds
# any substring of three characters or more (two-character words are checked by a scan of the
# source's pages); `detail='none'` keeps it to what substring matching needs.
PAGE_TRIGRAMS = """
        CREATE VIRTUAL TABLE pages_trigram USING fts5(
            title, body, content='pages', content_rowid='id', tokenize='trigram', detail='none'
        );
        INSERT INTO pages_trigram (pages_trigram) VALUES ('rebuild');
        CREATE TRIGGER pages_trigram_ai AFTER INSERT ON pages BEGIN
            INSERT INTO pages_trigram (rowid, title, body) VALUES (new.id, new.title, new.body);
        END;
        CREATE TRIGGER pages_trigram_ad AFTER DELETE ON pages BEGIN
            INSERT INTO pages_trigram (pages_trigram, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
        END;
        CREATE TRIGGER pages_trigram_au AFTER UPDATE OF title, body ON pages BEGIN
            INSERT INTO pages_trigram (pages_trigram, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
            INSERT INTO pages_trigram (rowid, title, body) VALUES (new.id, new.title, new.body);
        END;
"""

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
