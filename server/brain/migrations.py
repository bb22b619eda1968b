"""Schema migrations: an ordered registry of named steps with a record table.

Each step is SQL that runs in its own transaction together with its record row
in `_migrations` (inserted first, so a second process racing to apply the same
step fails on the record's key and rolls back instead of applying it twice).
A brain that records a step this code does not know was written by a newer
memverbs: it is refused (never "downgraded") with the fix, so nothing is lost.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from memverbs.server.errors import BrainError
from memverbs.server.names import title_key
from memverbs.server.record import Frozen
from memverbs.server.timeparse import now_ms


class Migration(Frozen):
    """A named step: its SQL, then (for data SQL cannot compute) `fill`, run in the same transaction."""

    __slots__ = ("fill", "name", "sql")
    name: str
    sql: str
    fill: Callable[[Any], None] | None  # the connection of the backend the step belongs to

    def __init__(self, name: str, sql: str, fill: Callable[[Any], None] | None = None) -> None:
        super().__init__(name=name, sql=sql, fill=fill)


_CORE_TABLES = """
        CREATE TABLE pages (
            id                INTEGER PRIMARY KEY,
            source_id         TEXT NOT NULL,
            slug              TEXT NOT NULL,
            slug_rev          TEXT NOT NULL,          -- slug reversed: suffix match as an index range
            title             TEXT,
            type              TEXT,
            body              TEXT NOT NULL DEFAULT '',
            frontmatter       TEXT NOT NULL DEFAULT '{}',
            summary           TEXT,                   -- frontmatter summary, if any
            visibility        TEXT NOT NULL DEFAULT 'world' CHECK (visibility IN ('world', 'private')),
            origin            TEXT NOT NULL DEFAULT 'put_page',
            created_at        INTEGER NOT NULL,
            updated_at        INTEGER NOT NULL,
            last_retrieved_at INTEGER,
            deleted_at        INTEGER,
            UNIQUE (source_id, slug)
        );
        CREATE INDEX pages_title ON pages (source_id, lower(title)) WHERE deleted_at IS NULL;
        CREATE INDEX pages_slug_rev ON pages (source_id, slug_rev) WHERE deleted_at IS NULL;
        CREATE INDEX pages_changed ON pages (source_id, updated_at, slug) WHERE deleted_at IS NULL;

        CREATE TABLE aliases (
            id         INTEGER PRIMARY KEY,
            source_id  TEXT NOT NULL,
            slug       TEXT NOT NULL,
            alias      TEXT NOT NULL,
            alias_norm TEXT NOT NULL,
            origin     TEXT NOT NULL DEFAULT 'manual',   -- frontmatter | manual
            UNIQUE (source_id, slug, alias_norm)
        );
        CREATE INDEX aliases_norm ON aliases (source_id, alias_norm);

        CREATE TABLE links (
            id          INTEGER PRIMARY KEY,
            source_id   TEXT NOT NULL,
            from_slug   TEXT NOT NULL,
            to_slug     TEXT NOT NULL,
            link_type   TEXT NOT NULL,
            link_source TEXT,                            -- markdown | frontmatter | manual | mentions
            context     TEXT,
            created_at  INTEGER NOT NULL,
            UNIQUE (source_id, from_slug, to_slug, link_type, link_source)
        );
        CREATE INDEX links_to ON links (source_id, to_slug);

        CREATE TABLE timeline (
            id         INTEGER PRIMARY KEY,
            source_id  TEXT NOT NULL,
            slug       TEXT NOT NULL,
            date       TEXT NOT NULL,                    -- YYYY-MM-DD as written
            summary    TEXT NOT NULL,
            detail     TEXT,
            origin     TEXT NOT NULL DEFAULT 'manual',   -- markdown | manual
            created_at INTEGER NOT NULL
        );
        CREATE INDEX timeline_slug ON timeline (source_id, slug, date DESC);

        CREATE TABLE facts (
            id                INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: ids are handed out
            source_id         TEXT NOT NULL,
            fact              TEXT NOT NULL,
            fact_norm         TEXT NOT NULL,          -- whitespace-collapsed, lowercased: exact dedup
            kind              TEXT NOT NULL,
            entity_slug       TEXT,
            visibility        TEXT NOT NULL CHECK (visibility IN ('world', 'private')),
            notability        TEXT NOT NULL DEFAULT 'medium',
            provenance        TEXT NOT NULL,
            source_session    TEXT,
            context           TEXT,
            confidence        REAL NOT NULL DEFAULT 1.0,
            valid_from        INTEGER NOT NULL,
            valid_until       INTEGER,
            expired_at        INTEGER,
            expiry_reason     TEXT,                   -- the audit trail: why it stopped being active
            superseded_by     INTEGER REFERENCES facts (id),
            consolidated_at   INTEGER,
            consolidated_into INTEGER,
            created_at        INTEGER NOT NULL
        );
        CREATE INDEX facts_entity ON facts (source_id, entity_slug, valid_from DESC, id DESC);
        CREATE INDEX facts_created ON facts (source_id, created_at);
        CREATE INDEX facts_event ON facts (source_id, valid_from);
        CREATE INDEX facts_session ON facts (source_id, source_session, created_at) WHERE source_session IS NOT NULL;
        CREATE INDEX facts_superseded ON facts (source_id, expired_at) WHERE superseded_by IS NOT NULL;

        CREATE TABLE session_cursors (
            source_id    TEXT NOT NULL,
            client_id    TEXT NOT NULL,
            session_id   TEXT NOT NULL,
            last_wake_at INTEGER NOT NULL,
            cursor_slug  TEXT NOT NULL DEFAULT '',
            created_at   INTEGER NOT NULL,
            updated_at   INTEGER NOT NULL,
            PRIMARY KEY (source_id, client_id, session_id)
        );
        CREATE INDEX session_cursors_idle ON session_cursors (updated_at);
"""

# External-content FTS5 tables kept in step by triggers: the text lives once.
_KEYWORD_INDEX = """
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


# Remote brains: bearer tokens for `memverbs serve --http`. Only the SHA-256 of a
# token is kept; `client_id` is the token's delta cursor lane and usage-log client.
_ACCESS_TOKENS = """
        CREATE TABLE access_tokens (
            id           INTEGER PRIMARY KEY AUTOINCREMENT,
            name         TEXT NOT NULL,
            token_hash   TEXT NOT NULL UNIQUE,          -- sha256 hex of the token
            token_hint   TEXT NOT NULL,                 -- its first characters, for `auth list`
            scopes       TEXT NOT NULL,                 -- comma-separated: read, write
            surface      TEXT NOT NULL CHECK (surface IN ('verbs', 'starter', 'full')),
            source_id    TEXT NOT NULL,
            client_id    TEXT NOT NULL,                 -- 'token:<name>', never 'local'
            created_at   INTEGER NOT NULL,
            last_used_at INTEGER,
            revoked_at   INTEGER
        );
        CREATE UNIQUE INDEX access_tokens_live_name ON access_tokens (name) WHERE revoked_at IS NULL;
"""


# Vectors live in plain tables as float32 BLOBs (this Python cannot load SQLite
# extensions), each tagged with its space: the provider/model/dims identity.
# Page vectors are content-addressed by the hash of the embedded text, so an
# edit re-embeds only changed chunks; text_vectors ids are never reused, which
# lets an in-memory index catch up by reading ids above the last it saw.
_VECTORS = """
        CREATE TABLE vector_spaces (
            id         INTEGER PRIMARY KEY,
            provider   TEXT NOT NULL,
            model      TEXT NOT NULL,
            dims       INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            UNIQUE (provider, model, dims)
        );

        CREATE TABLE chunks (
            id        INTEGER PRIMARY KEY,
            source_id TEXT NOT NULL,
            page_id   INTEGER NOT NULL REFERENCES pages (id),
            ord       INTEGER NOT NULL,
            text      TEXT NOT NULL,
            text_hash TEXT NOT NULL,                     -- of title + chunk, the embedded input
            UNIQUE (page_id, ord)
        );
        CREATE INDEX chunks_hash ON chunks (text_hash, source_id);

        CREATE TABLE text_vectors (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            space_id   INTEGER NOT NULL REFERENCES vector_spaces (id),
            text_hash  TEXT NOT NULL,
            vector     BLOB NOT NULL,                    -- dims × float32 little-endian, unit length
            created_at INTEGER NOT NULL,
            UNIQUE (space_id, text_hash)
        );

        CREATE TABLE fact_vectors (
            fact_id    INTEGER NOT NULL REFERENCES facts (id),
            space_id   INTEGER NOT NULL REFERENCES vector_spaces (id),
            vector     BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (fact_id, space_id)
        ) WITHOUT ROWID;
"""


# `memverbs move-facts` refiles facts under another entity; each move is kept here, so a
# fact's history shows where it was filed before and why (fact ids never change).
_FACT_MOVES = """
        CREATE TABLE fact_moves (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            fact_id    INTEGER NOT NULL REFERENCES facts (id),
            from_slug  TEXT,
            to_slug    TEXT NOT NULL,
            reason     TEXT,
            moved_at   INTEGER NOT NULL
        );
        CREATE INDEX fact_moves_fact ON fact_moves (fact_id);
"""


# The page's markdown exactly as it was written, so `memverbs get-page --raw` can give it back byte
# for byte. Pages written before this step have NULL and are rebuilt from frontmatter and body.
_PAGE_MARKDOWN = """
        ALTER TABLE pages ADD COLUMN markdown TEXT;
"""


# Index shapes that leave the planner no worse choice on a brain that was never
# analysed (memverbs never runs ANALYZE; docs/architecture.md, "Query plans"):
# without statistics SQLite ranks indexes by how many leading columns a query
# pins, covering before not, so a covering index with both equalities beats a
# covering index that pins only the source (which scans the source's rows).
_PLAN_INDEXES = """
        DROP INDEX aliases_norm;
        CREATE INDEX aliases_lookup ON aliases (source_id, alias_norm, slug);
        DROP INDEX links_to;
        CREATE INDEX links_in ON links (source_id, to_slug, from_slug, link_source);
"""


# Markdown folders kept in step with the brain (`memverbs import` / `sync`): one row per
# folder and per file, so a restart resumes from what was last synced, and the brain's
# side of every conflict (the file wins) kept until someone looks at it.
_MARKDOWN_SYNC_STATE = """
        CREATE TABLE sync_folders (
            id             INTEGER PRIMARY KEY,
            source_id      TEXT NOT NULL,
            root           TEXT NOT NULL,                 -- absolute, resolved path of the folder
            slug_prefix    TEXT NOT NULL DEFAULT '',
            mode           TEXT NOT NULL CHECK (mode IN ('import', 'sync')),
            created_at     INTEGER NOT NULL,
            last_pass_at   INTEGER,                       -- end of the last complete pass
            last_change_at INTEGER,                       -- last file change applied to the brain
            watcher_pid    INTEGER,                       -- a running `sync --watch`, if any
            watcher_beat   INTEGER,                       -- its last heartbeat
            UNIQUE (source_id, root)
        );

        CREATE TABLE sync_files (
            folder_id       INTEGER NOT NULL REFERENCES sync_folders (id),
            rel_path        TEXT NOT NULL,                -- posix path inside the folder
            slug            TEXT NOT NULL,
            file_hash       TEXT NOT NULL,                -- sha256 of the bytes last synced
            size            INTEGER NOT NULL,
            mtime_ns        INTEGER NOT NULL,
            page_updated_at INTEGER,                      -- the page's updated_at after that sync
            synced_at       INTEGER NOT NULL,
            PRIMARY KEY (folder_id, rel_path)
        );
        CREATE INDEX sync_files_slug ON sync_files (folder_id, slug);

        CREATE TABLE sync_conflicts (
            id            INTEGER PRIMARY KEY,
            folder_id     INTEGER NOT NULL REFERENCES sync_folders (id),
            rel_path      TEXT NOT NULL,
            slug          TEXT NOT NULL,
            brain_content TEXT NOT NULL,                  -- the brain's version the file overrode
            detected_at   INTEGER NOT NULL,
            resolved_at   INTEGER
        );
"""


# `memverbs ui`'s live feed reads the newest changes by each moment a fact or page changes;
# remembering and writing already have their indexes, forgetting and deleting get theirs.
_CHANGE_FEED = """
        CREATE INDEX facts_expired ON facts (source_id, expired_at) WHERE expired_at IS NOT NULL;
        CREATE INDEX pages_deleted ON pages (source_id, deleted_at) WHERE deleted_at IS NOT NULL;
"""


# Restoring a forgotten fact and changing one fact's visibility (`memverbs restore-fact`,
# `fact-visibility`, the inspector) rewrite a fact's row; each change is kept here with who,
# when and why, and a restore keeps the expiry it undid (when and its reason), so the trail loses
# nothing.
_FACT_AUDIT = """
        CREATE TABLE fact_audit (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            fact_id    INTEGER NOT NULL REFERENCES facts (id),
            action     TEXT NOT NULL CHECK (action IN ('restored', 'visibility')),
            old_value  TEXT,                          -- restored: the expiry reason undone; visibility: the old one
            old_at     INTEGER,                       -- restored: when the fact had been expired
            new_value  TEXT,                          -- visibility: the new one
            reason     TEXT NOT NULL,
            actor      TEXT NOT NULL,                 -- who: the command or inspector, and the OS user
            at         INTEGER NOT NULL
        );
        CREATE INDEX fact_audit_fact ON fact_audit (fact_id, at);
        CREATE INDEX fact_audit_at ON fact_audit (at);   -- the inspector's live feed reads edits by time
"""


# Links and timeline rows a page's private facts-fence rows declare are stored marked private
# (`private_row` 1) and shown only to trusted readers. Rows written before this step are not
# marked; a page with a private row ('[private]' in its body, any case) had them mixed with its
# world rows, so its body links and markdown timeline rows are marked private until the page is
# next written (which sorts them exactly): fail closed, the owner loses nothing.
_PRIVATE_ROWS = """
        ALTER TABLE links ADD COLUMN private_row INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE timeline ADD COLUMN private_row INTEGER NOT NULL DEFAULT 0;
        UPDATE links SET private_row = 1 WHERE link_source = 'markdown' AND EXISTS (
            SELECT 1 FROM pages p WHERE p.source_id = links.source_id AND p.slug = links.from_slug
            AND lower(p.body) LIKE '%[private]%');
        UPDATE timeline SET private_row = 1 WHERE origin = 'markdown' AND EXISTS (
            SELECT 1 FROM pages p WHERE p.source_id = timeline.source_id AND p.slug = timeline.slug
            AND lower(p.body) LIKE '%[private]%');
"""

# Projects (server/projects.py): the repository a fact was remembered in, and the registry that
# maps a project's identity (its normalised remote URL, or its path) to its entity slug once and
# for good, so two projects that share a name get two slugs and keep them.
_PROJECTS = """
        ALTER TABLE facts ADD COLUMN project TEXT;   -- the project's slug (projects.slug), NULL outside one
        CREATE INDEX facts_project ON facts (source_id, project, valid_from DESC, id DESC) WHERE project IS NOT NULL;
        CREATE TABLE projects (
            source_id  TEXT NOT NULL,
            key        TEXT NOT NULL,                -- normalised remote URL, or path:<root>
            slug       TEXT NOT NULL,                -- projects/<name>, suffixed when the name was taken
            name       TEXT NOT NULL,
            root       TEXT NOT NULL,                -- where it was last seen on this machine
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (source_id, key),
            UNIQUE (source_id, slug)
        );
"""


# OAuth 2.1 for `serve --http` (claude.ai, ChatGPT and other connectors). A registered client,
# and every credential issued to it: pending consent requests, authorization codes, access and
# refresh tokens, each kept as the SHA-256 of the value (as access_tokens are). `family` is the
# authorization every token descends from (the code's row id), so a replayed code or a rotated
# refresh token presented again can end the whole family. `lane` is the client's delta cursor
# lane and usage-log client. Owner secrets are what the consent page accepts as the owner's
# login: one-time approval codes (sha256) and the owner password (scrypt, salted).
_OAUTH = """
        CREATE TABLE oauth_clients (
            id           INTEGER PRIMARY KEY AUTOINCREMENT,
            client_id    TEXT NOT NULL UNIQUE,
            name         TEXT NOT NULL,
            metadata     TEXT NOT NULL,                 -- the registered RFC 7591 metadata (JSON), never the secret
            secret_hash  TEXT,                          -- sha256 hex of the client secret; NULL: a public client
            lane         TEXT NOT NULL,                 -- 'oauth:<client_id>', never 'local'
            created_at   INTEGER NOT NULL,
            last_used_at INTEGER,
            revoked_at   INTEGER
        );
        CREATE TABLE oauth_tokens (
            id             INTEGER PRIMARY KEY AUTOINCREMENT,
            client_ref     INTEGER NOT NULL REFERENCES oauth_clients (id),
            kind           TEXT NOT NULL CHECK (kind IN ('request', 'code', 'access', 'refresh')),
            token_hash     TEXT NOT NULL UNIQUE,
            family         INTEGER,
            scopes         TEXT NOT NULL,                -- comma-separated: read, write
            surface        TEXT NOT NULL CHECK (surface IN ('verbs', 'starter', 'full')),
            source_id      TEXT NOT NULL,
            resource       TEXT NOT NULL,                -- the audience (RFC 8707): this server's public /mcp URL
            redirect_uri   TEXT,                         -- request and code only
            code_challenge TEXT,                         -- request and code only (PKCE S256)
            state          TEXT,                         -- request only: echoed to the client
            attempts       INTEGER NOT NULL DEFAULT 0,   -- request only: wrong owner logins
            expires_at     INTEGER NOT NULL,
            created_at     INTEGER NOT NULL,
            revoked_at     INTEGER                       -- also set when a request, code or refresh token is used
        );
        CREATE INDEX oauth_tokens_family ON oauth_tokens (family);
        CREATE INDEX oauth_tokens_client ON oauth_tokens (client_ref, kind);
        CREATE TABLE oauth_owner_secrets (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            kind        TEXT NOT NULL CHECK (kind IN ('approval_code', 'password')),
            secret_hash TEXT NOT NULL,
            expires_at  INTEGER,
            created_at  INTEGER NOT NULL,
            used_at     INTEGER
        );
"""


# Titles are looked up by their key (names.title_key: NFKC, casefold, whitespace collapsed),
# which Python computes for both backends alike; SQLite's lower() folds ASCII only. The step's
# fill computes the key of the pages already there, as Postgres's does.
_TITLE_KEYS = """
        ALTER TABLE pages ADD COLUMN title_key TEXT;
        CREATE INDEX pages_title_key ON pages (source_id, title_key) WHERE deleted_at IS NULL;
        DROP INDEX pages_title;
"""


def _fill_title_keys(db: sqlite3.Connection) -> None:
    rows = db.execute("SELECT id, title FROM pages WHERE title IS NOT NULL").fetchall()
    db.executemany("UPDATE pages SET title_key = ? WHERE id = ?", [(title_key(r[1]), r[0]) for r in rows])


# Facts are searched by memverbs's own index terms (server/terms.py: folded, stemmed, CJK and
# Thai runs cut into character pairs), stored beside the fact and indexed split on spaces (FTS5's
# `ascii` tokeniser splits on ASCII separators only, and the terms hold none but the spaces), so
# both backends index exactly the same terms. The dedup key drops final punctuation now
# (names.restatement_key), so existing keys are rewritten with it. Terms and keys are computed in
# Python, so the step fills them in before the index is built over them.
_FACT_TERMS = """
        ALTER TABLE facts ADD COLUMN search_terms TEXT NOT NULL DEFAULT '';
        DROP TRIGGER facts_fts_ai;
        DROP TRIGGER facts_fts_ad;
        DROP TABLE facts_fts;
"""
_FACT_TERMS_INDEX = (
    "CREATE VIRTUAL TABLE facts_fts USING fts5(search_terms, content='facts', content_rowid='id', tokenize='ascii')",
    "INSERT INTO facts_fts (facts_fts) VALUES ('rebuild')",
    "CREATE TRIGGER facts_fts_ai AFTER INSERT ON facts BEGIN "
    "INSERT INTO facts_fts (rowid, search_terms) VALUES (new.id, new.search_terms); END",
    "CREATE TRIGGER facts_fts_ad AFTER DELETE ON facts BEGIN "
    "INSERT INTO facts_fts (facts_fts, rowid, search_terms) VALUES ('delete', old.id, old.search_terms); END",
    "CREATE TRIGGER facts_fts_au AFTER UPDATE OF search_terms ON facts BEGIN "
    "INSERT INTO facts_fts (facts_fts, rowid, search_terms) VALUES ('delete', old.id, old.search_terms); "
    "INSERT INTO facts_fts (rowid, search_terms) VALUES (new.id, new.search_terms); END",
)


def fact_terms_rows(rows: list) -> list[tuple[str, str, int]]:
    """(search_terms, fact_norm, id) for (id, fact) rows: what the fact-terms step writes, on either backend."""
    from memverbs.server.names import restatement_key  # noqa: PLC0415
    from memverbs.server.terms import index_text  # noqa: PLC0415

    return [(index_text(r[1]), restatement_key(r[1]), r[0]) for r in rows]


def _fill_fact_terms(db: sqlite3.Connection) -> None:
    rows = fact_terms_rows(db.execute("SELECT id, fact FROM facts").fetchall())
    db.executemany("UPDATE facts SET search_terms = ?, fact_norm = ? WHERE id = ?", rows)
    for statement in _FACT_TERMS_INDEX:
        db.execute(statement)


# Scripts written without spaces (Chinese, Japanese, Thai, …) keep a whole run as one unicode61
# token, so a word inside a run cannot be found through pages_fts. A trigram index beside it finds
# any substring of three characters or more (two-character words are checked by a scan of the
# source's pages); `detail='none'` keeps it to what substring matching needs.
_PAGE_TRIGRAMS = """
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


# Page history: every overwrite of a page's text keeps the text it replaced, with who replaced it
# and when (docs/sync.md, "Page history"). Keyed by the page's row, so a rename carries its history.
# And a synced file that cannot be applied (bad YAML, not UTF-8, too large) as it stands: a failure
# with its reason, so status and doctor name it instead of counting it pending for ever. And which
# host a folder and its watcher are on.
_PAGE_HISTORY = """
        CREATE TABLE page_versions (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            page_id     INTEGER NOT NULL REFERENCES pages (id),
            version     INTEGER NOT NULL,              -- 1, 2, … per page: what page-restore names
            markdown    TEXT NOT NULL,                 -- the page's text as it was before the overwrite
            title       TEXT,
            visibility  TEXT NOT NULL CHECK (visibility IN ('world', 'private')),
            written_at  INTEGER NOT NULL,              -- when that text was saved (the page's updated_at then)
            replaced_at INTEGER NOT NULL,
            replaced_by TEXT NOT NULL,                 -- the overwriting caller's lane: 'local', 'sync', 'token:…', 'oauth:…'
            UNIQUE (page_id, version)
        );

        CREATE TABLE sync_failures (
            folder_id  INTEGER NOT NULL REFERENCES sync_folders (id),
            rel_path   TEXT NOT NULL,
            size       INTEGER NOT NULL,                   -- the file as it failed: a save changes these
            mtime_ns   INTEGER NOT NULL,
            outcome    TEXT NOT NULL CHECK (outcome IN ('skipped', 'errors')),
            reason     TEXT NOT NULL,
            first_at   INTEGER NOT NULL,
            last_at    INTEGER NOT NULL,
            PRIMARY KEY (folder_id, rel_path)
        );

        -- The host a folder was synced from (`sync --watch` alone watches this host's), and the host of
        -- its watcher: one watcher per folder, a dead one's claim taken over (server/sync/state.py).
        ALTER TABLE sync_folders ADD COLUMN host TEXT;
        ALTER TABLE sync_folders ADD COLUMN watcher_host TEXT;
"""

# The brain's people (see docs/postgres.md, "People and privacy"). Person 1 is the brain's owner and
# is not a row: on SQLite the file's user, on Postgres the role that owns the brain's tables, so a
# brain copied by `migrate` keeps its owner without a row to reconcile. The people a brain is shared
# with are rows (ids 2, 3, …), each optionally mapped to a database role. Every fact, page, page
# version and links/timeline row records the person who wrote it (`owner`; rows from before are the
# owner's); a private one is readable by its owner only. Tokens act for one person (`person`).
_PEOPLE = """
        CREATE TABLE people (
            id         INTEGER PRIMARY KEY CHECK (id > 1),
            name       TEXT NOT NULL UNIQUE,
            role       TEXT UNIQUE,                        -- the person's Postgres role; NULL on SQLite
            created_at INTEGER NOT NULL
        );
        ALTER TABLE pages ADD COLUMN owner INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE facts ADD COLUMN owner INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE links ADD COLUMN owner INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE timeline ADD COLUMN owner INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE page_versions ADD COLUMN owner INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE access_tokens ADD COLUMN person INTEGER NOT NULL DEFAULT 1;
"""

# A synced folder is known by the id in its `.memverbs/folder.json` and the host syncing it, not by its
# path (server/sync/identity.py): two machines' folders at one path are two rows, so the table is
# rebuilt without its one-row-per-path key (the 12-step way; steps run before foreign keys are on).
_FOLDER_IDENTITY = """
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
        CREATE UNIQUE INDEX sync_folders_identity ON sync_folders (source_id, folder_uid, host) WHERE folder_uid IS NOT NULL;
        CREATE UNIQUE INDEX sync_folders_by_path ON sync_folders (source_id, root, COALESCE(host, '')) WHERE folder_uid IS NULL;
        CREATE INDEX sync_files_by_slug ON sync_files (slug);
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001_core_tables", _CORE_TABLES),
    Migration("0002_keyword_index", _KEYWORD_INDEX),
    Migration("0003_access_tokens", _ACCESS_TOKENS),
    Migration("0004_chunks_and_vectors", _VECTORS),
    Migration("0005_fact_moves", _FACT_MOVES),
    Migration("0006_page_markdown", _PAGE_MARKDOWN),
    Migration("0007_plan_indexes", _PLAN_INDEXES),
    Migration("0008_markdown_sync_state", _MARKDOWN_SYNC_STATE),
    Migration("0009_change_feed_indexes", _CHANGE_FEED),
    Migration("0010_fact_audit", _FACT_AUDIT),
    Migration("0011_private_rows", _PRIVATE_ROWS),
    Migration("0012_projects", _PROJECTS),
    Migration("0013_oauth", _OAUTH),
    Migration("0014_title_keys", _TITLE_KEYS, _fill_title_keys),
    Migration("0015_fact_terms", _FACT_TERMS, _fill_fact_terms),
    Migration("0016_page_trigrams", _PAGE_TRIGRAMS),
    Migration("0017_page_history", _PAGE_HISTORY),
    Migration("0018_people", _PEOPLE),
    Migration("0019_folder_identity", _FOLDER_IDENTITY),
)


def _ensure_record_table(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")


def applied(db: sqlite3.Connection) -> list[str]:
    exists = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'").fetchone()
    if not exists:
        return []
    return [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")]


def pending(db: sqlite3.Connection) -> list[Migration]:
    done = set(applied(db))
    return [m for m in MIGRATIONS if m.name not in done]


def unknown(db: sqlite3.Connection) -> list[str]:
    """Steps recorded in the brain that this code does not know: a newer memverbs wrote them."""
    known = {m.name for m in MIGRATIONS}
    return [name for name in applied(db) if name not in known]


def check_not_future(db: sqlite3.Connection, path: object) -> None:
    newer = unknown(db)
    if newer:
        raise BrainError(
            f"brain {path} has schema steps this memverbs does not know ({', '.join(newer)}): "
            "it was written by a newer memverbs",
            "Upgrade memverbs (pip install -U memverbs) to use this brain; nothing in it was changed.",
        )


def migrate(db: sqlite3.Connection, path: object = "brain") -> list[str]:
    """Apply pending steps, each in one transaction; returns the names applied here."""
    check_not_future(db, path)
    _ensure_record_table(db)
    done: list[str] = []
    for step in pending(db):
        # executescript would commit an open transaction first, so the script
        # carries its own BEGIN (and COMMIT, unless a fill still has to run in the
        # transaction); the record row goes first (see above).
        script = (
            "BEGIN IMMEDIATE;\n"
            f"INSERT INTO _migrations (name, applied_at) VALUES ('{step.name}', {now_ms()});\n"
            f"{step.sql}\n{'' if step.fill else 'COMMIT;'}"
        )
        try:
            db.executescript(script)
            if step.fill is not None:
                step.fill(db)
                db.execute("COMMIT")
        except sqlite3.IntegrityError:
            _rollback(db)  # another process applied this step first
            continue
        except BaseException:
            _rollback(db)
            raise
        done.append(step.name)
    return done


def _rollback(db: sqlite3.Connection) -> None:
    if db.in_transaction:
        db.execute("ROLLBACK")
