"""The Postgres brain's schema steps, recorded exactly as SQLite's are.

Same record table (`_migrations`: name, applied_at), same rules: each step runs
in one transaction with its record row, steps race safely (a transaction-level
advisory lock serialises migrators), and a brain that records a step this code
does not know is refused untouched. Step names follow the SQLite registry where
the tables are the same, so `doctor` and `migrate` speak of one schema history.

The tables mirror SQLite's column for column (epoch-millisecond BIGINTs,
float32 little-endian vectors in BYTEA), so a brain copies between backends
without conversion. What differs is the indexes' machinery: keyword search is
a generated, weighted `tsvector` with a GIN index (title A, body B), and, when
the `vector` extension (pgvector) is installed, page vectors also live in a
`vector` column with one HNSW index per space (created with the space).
"""

from __future__ import annotations

from typing import Any

from memverbs.server.brain.migrations import Migration, fact_terms_rows
from memverbs.server.names import title_key

_CORE_TABLES = """
    -- Slugs compare in byte order (COLLATE "C"), as in SQLite: prefix and suffix ranges and the
    -- delta keyset (updated_at, slug) mean the same on both backends.
    CREATE TABLE pages (
        id                BIGSERIAL PRIMARY KEY,
        source_id         TEXT NOT NULL,
        slug              TEXT COLLATE "C" NOT NULL,
        slug_rev          TEXT COLLATE "C" NOT NULL,
        title             TEXT,
        type              TEXT,
        body              TEXT NOT NULL DEFAULT '',
        frontmatter       TEXT NOT NULL DEFAULT '{}',
        summary           TEXT,
        visibility        TEXT NOT NULL DEFAULT 'world' CHECK (visibility IN ('world', 'private')),
        origin            TEXT NOT NULL DEFAULT 'put_page',
        created_at        BIGINT NOT NULL,
        updated_at        BIGINT NOT NULL,
        last_retrieved_at BIGINT,
        deleted_at        BIGINT,
        UNIQUE (source_id, slug)
    );
    CREATE INDEX pages_title ON pages (source_id, lower(title)) WHERE deleted_at IS NULL;
    CREATE INDEX pages_slug_rev ON pages (source_id, slug_rev) WHERE deleted_at IS NULL;
    CREATE INDEX pages_changed ON pages (source_id, updated_at, slug) WHERE deleted_at IS NULL;

    CREATE TABLE aliases (
        id         BIGSERIAL PRIMARY KEY,
        source_id  TEXT NOT NULL,
        slug       TEXT COLLATE "C" NOT NULL,
        alias      TEXT NOT NULL,
        alias_norm TEXT COLLATE "C" NOT NULL,
        origin     TEXT NOT NULL DEFAULT 'manual',
        UNIQUE (source_id, slug, alias_norm)
    );
    CREATE INDEX aliases_norm ON aliases (source_id, alias_norm);

    CREATE TABLE links (
        id          BIGSERIAL PRIMARY KEY,
        source_id   TEXT NOT NULL,
        from_slug   TEXT COLLATE "C" NOT NULL,
        to_slug     TEXT COLLATE "C" NOT NULL,
        link_type   TEXT NOT NULL,
        link_source TEXT,
        context     TEXT,
        created_at  BIGINT NOT NULL,
        UNIQUE (source_id, from_slug, to_slug, link_type, link_source)
    );
    CREATE INDEX links_to ON links (source_id, to_slug);
    CREATE INDEX links_from ON links (source_id, from_slug);

    CREATE TABLE timeline (
        id         BIGSERIAL PRIMARY KEY,
        source_id  TEXT NOT NULL,
        slug       TEXT COLLATE "C" NOT NULL,
        date       TEXT NOT NULL,
        summary    TEXT NOT NULL,
        detail     TEXT,
        origin     TEXT NOT NULL DEFAULT 'manual',
        created_at BIGINT NOT NULL
    );
    CREATE INDEX timeline_slug ON timeline (source_id, slug, date DESC);

    CREATE TABLE facts (
        id                BIGSERIAL PRIMARY KEY,
        source_id         TEXT NOT NULL,
        fact              TEXT NOT NULL,
        fact_norm         TEXT NOT NULL,
        kind              TEXT NOT NULL,
        entity_slug       TEXT COLLATE "C",
        visibility        TEXT NOT NULL CHECK (visibility IN ('world', 'private')),
        notability        TEXT NOT NULL DEFAULT 'medium',
        provenance        TEXT NOT NULL,
        source_session    TEXT,
        context           TEXT,
        confidence        DOUBLE PRECISION NOT NULL DEFAULT 1.0,
        valid_from        BIGINT NOT NULL,
        valid_until       BIGINT,
        expired_at        BIGINT,
        expiry_reason     TEXT,
        superseded_by     BIGINT REFERENCES facts (id),
        consolidated_at   BIGINT,
        consolidated_into BIGINT,
        created_at        BIGINT NOT NULL
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
        last_wake_at BIGINT NOT NULL,
        cursor_slug  TEXT COLLATE "C" NOT NULL DEFAULT '',
        created_at   BIGINT NOT NULL,
        updated_at   BIGINT NOT NULL,
        PRIMARY KEY (source_id, client_id, session_id)
    );
    CREATE INDEX session_cursors_idle ON session_cursors (updated_at);
"""

# 'simple': lowercased words, no stemming and no stop words, like FTS5's unicode61 tokenizer.
_KEYWORD_INDEX = """
    ALTER TABLE pages ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', coalesce(title, '')), 'A') || setweight(to_tsvector('simple', body), 'B')
    ) STORED;
    CREATE INDEX pages_search ON pages USING gin (search);
    ALTER TABLE facts ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('simple', fact)) STORED;
    CREATE INDEX facts_search ON facts USING gin (search);
"""

_ACCESS_TOKENS = """
    CREATE TABLE access_tokens (
        id           BIGSERIAL PRIMARY KEY,
        name         TEXT NOT NULL,
        token_hash   TEXT NOT NULL UNIQUE,
        token_hint   TEXT NOT NULL,
        scopes       TEXT NOT NULL,
        surface      TEXT NOT NULL CHECK (surface IN ('verbs', 'starter', 'full')),
        source_id    TEXT NOT NULL,
        client_id    TEXT NOT NULL,
        created_at   BIGINT NOT NULL,
        last_used_at BIGINT,
        revoked_at   BIGINT
    );
    CREATE UNIQUE INDEX access_tokens_live_name ON access_tokens (name) WHERE revoked_at IS NULL;
"""

_VECTORS = """
    CREATE TABLE vector_spaces (
        id         BIGSERIAL PRIMARY KEY,
        provider   TEXT NOT NULL,
        model      TEXT NOT NULL,
        dims       INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (provider, model, dims)
    );

    CREATE TABLE chunks (
        id        BIGSERIAL PRIMARY KEY,
        source_id TEXT NOT NULL,
        page_id   BIGINT NOT NULL REFERENCES pages (id),
        ord       INTEGER NOT NULL,
        text      TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        UNIQUE (page_id, ord)
    );
    CREATE INDEX chunks_hash ON chunks (text_hash, source_id);

    CREATE TABLE text_vectors (
        id         BIGSERIAL PRIMARY KEY,
        space_id   BIGINT NOT NULL REFERENCES vector_spaces (id),
        text_hash  TEXT NOT NULL,
        vector     BYTEA NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (space_id, text_hash)
    );

    CREATE TABLE fact_vectors (
        fact_id    BIGINT NOT NULL REFERENCES facts (id),
        space_id   BIGINT NOT NULL REFERENCES vector_spaces (id),
        vector     BYTEA NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (fact_id, space_id)
    );
"""

# `memverbs move-facts` refiles facts under another entity; each move is kept (see migrations.py).
_FACT_MOVES = """
    CREATE TABLE fact_moves (
        id         BIGSERIAL PRIMARY KEY,
        fact_id    BIGINT NOT NULL REFERENCES facts (id),
        from_slug  TEXT COLLATE "C",
        to_slug    TEXT COLLATE "C" NOT NULL,
        reason     TEXT,
        moved_at   BIGINT NOT NULL
    );
    CREATE INDEX fact_moves_fact ON fact_moves (fact_id);
"""

# The page's markdown exactly as written, for `memverbs get-page --raw` (NULL for older pages).
_PAGE_MARKDOWN = """
    ALTER TABLE pages ADD COLUMN markdown TEXT;
"""

# SQLite's step reshapes two indexes for its planner on a never-analysed brain; Postgres has
# statistics (autovacuum analyses), but the step keeps the same indexes under the same names so
# both backends have one schema history: alias lookups and links into a page are one index range.
_PLAN_INDEXES = """
    DROP INDEX aliases_norm;
    CREATE INDEX aliases_lookup ON aliases (source_id, alias_norm, slug);
    DROP INDEX links_to;
    CREATE INDEX links_in ON links (source_id, to_slug, from_slug, link_source);
"""

# Markdown folders kept in step with the brain (`memverbs import` / `sync`; see migrations.py).
# Paths and slugs compare in byte order (COLLATE "C"), as in SQLite.
_MARKDOWN_SYNC_STATE = """
    CREATE TABLE sync_folders (
        id             BIGSERIAL PRIMARY KEY,
        source_id      TEXT NOT NULL,
        root           TEXT COLLATE "C" NOT NULL,
        slug_prefix    TEXT NOT NULL DEFAULT '',
        mode           TEXT NOT NULL CHECK (mode IN ('import', 'sync')),
        created_at     BIGINT NOT NULL,
        last_pass_at   BIGINT,
        last_change_at BIGINT,
        watcher_pid    BIGINT,
        watcher_beat   BIGINT,
        UNIQUE (source_id, root)
    );

    CREATE TABLE sync_files (
        folder_id       BIGINT NOT NULL REFERENCES sync_folders (id),
        rel_path        TEXT COLLATE "C" NOT NULL,
        slug            TEXT COLLATE "C" NOT NULL,
        file_hash       TEXT NOT NULL,
        size            BIGINT NOT NULL,
        mtime_ns        BIGINT NOT NULL,
        page_updated_at BIGINT,
        synced_at       BIGINT NOT NULL,
        PRIMARY KEY (folder_id, rel_path)
    );
    CREATE INDEX sync_files_slug ON sync_files (folder_id, slug);

    CREATE TABLE sync_conflicts (
        id            BIGSERIAL PRIMARY KEY,
        folder_id     BIGINT NOT NULL REFERENCES sync_folders (id),
        rel_path      TEXT COLLATE "C" NOT NULL,
        slug          TEXT COLLATE "C" NOT NULL,
        brain_content TEXT NOT NULL,
        detected_at   BIGINT NOT NULL,
        resolved_at   BIGINT
    );
"""

# `memverbs ui`'s live feed reads the newest changes by the moment a fact or page changed.
_CHANGE_FEED = """
    CREATE INDEX facts_expired ON facts (source_id, expired_at) WHERE expired_at IS NOT NULL;
    CREATE INDEX pages_deleted ON pages (source_id, deleted_at) WHERE deleted_at IS NOT NULL;
"""

# A fact's restores and visibility changes, with who, when and why (see migrations.py).
_FACT_AUDIT = """
    CREATE TABLE fact_audit (
        id         BIGSERIAL PRIMARY KEY,
        fact_id    BIGINT NOT NULL REFERENCES facts (id),
        action     TEXT NOT NULL CHECK (action IN ('restored', 'visibility')),
        old_value  TEXT,
        old_at     BIGINT,
        new_value  TEXT,
        reason     TEXT NOT NULL,
        actor      TEXT NOT NULL,
        at         BIGINT NOT NULL
    );
    CREATE INDEX fact_audit_fact ON fact_audit (fact_id, at);
    CREATE INDEX fact_audit_at ON fact_audit (at);
"""

# As SQLite's 0011_private_rows: links and timeline rows of private facts-fence rows, marked.
_PRIVATE_ROWS = """
        ALTER TABLE links ADD COLUMN private_row SMALLINT NOT NULL DEFAULT 0;
        ALTER TABLE timeline ADD COLUMN private_row SMALLINT NOT NULL DEFAULT 0;
        UPDATE links SET private_row = 1 WHERE link_source = 'markdown' AND EXISTS (
            SELECT 1 FROM pages p WHERE p.source_id = links.source_id AND p.slug = links.from_slug
            AND lower(p.body) LIKE '%[private]%');
        UPDATE timeline SET private_row = 1 WHERE origin = 'markdown' AND EXISTS (
            SELECT 1 FROM pages p WHERE p.source_id = timeline.source_id AND p.slug = timeline.slug
            AND lower(p.body) LIKE '%[private]%');
"""

# The project a fact was remembered in, and the project registry (see migrations.py).
_PROJECTS = """
    ALTER TABLE facts ADD COLUMN project TEXT COLLATE "C";
    CREATE INDEX facts_project ON facts (source_id, project, valid_from DESC, id DESC) WHERE project IS NOT NULL;
    CREATE TABLE projects (
        source_id  TEXT NOT NULL,
        key        TEXT COLLATE "C" NOT NULL,
        slug       TEXT COLLATE "C" NOT NULL,
        name       TEXT NOT NULL,
        root       TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (source_id, key),
        UNIQUE (source_id, slug)
    );
"""

# OAuth 2.1 (see migrations.py).
_OAUTH = """
    CREATE TABLE oauth_clients (
        id           BIGSERIAL PRIMARY KEY,
        client_id    TEXT NOT NULL UNIQUE,
        name         TEXT NOT NULL,
        metadata     TEXT NOT NULL,
        secret_hash  TEXT,
        lane         TEXT NOT NULL,
        created_at   BIGINT NOT NULL,
        last_used_at BIGINT,
        revoked_at   BIGINT
    );
    CREATE TABLE oauth_tokens (
        id             BIGSERIAL PRIMARY KEY,
        client_ref     BIGINT NOT NULL REFERENCES oauth_clients (id),
        kind           TEXT NOT NULL CHECK (kind IN ('request', 'code', 'access', 'refresh')),
        token_hash     TEXT NOT NULL UNIQUE,
        family         BIGINT,
        scopes         TEXT NOT NULL,
        surface        TEXT NOT NULL CHECK (surface IN ('verbs', 'starter', 'full')),
        source_id      TEXT NOT NULL,
        resource       TEXT NOT NULL,
        redirect_uri   TEXT,
        code_challenge TEXT,
        state          TEXT,
        attempts       INTEGER NOT NULL DEFAULT 0,
        expires_at     BIGINT NOT NULL,
        created_at     BIGINT NOT NULL,
        revoked_at     BIGINT
    );
    CREATE INDEX oauth_tokens_family ON oauth_tokens (family);
    CREATE INDEX oauth_tokens_client ON oauth_tokens (client_ref, kind);
    CREATE TABLE oauth_owner_secrets (
        id          BIGSERIAL PRIMARY KEY,
        kind        TEXT NOT NULL CHECK (kind IN ('approval_code', 'password')),
        secret_hash TEXT NOT NULL,
        expires_at  BIGINT,
        created_at  BIGINT NOT NULL,
        used_at     BIGINT
    );
"""

# Titles looked up by their key, computed by memverbs (see migrations.py); postgres.migrate
# fills the key of the pages already there in the step's own transaction (Python, not SQL).
_TITLE_KEYS = """
    ALTER TABLE pages ADD COLUMN title_key TEXT;
    CREATE INDEX pages_title_key ON pages (source_id, title_key) WHERE deleted_at IS NULL;
    DROP INDEX pages_title;
"""


def _fill_title_keys(conn: Any, batch: int = 1000) -> None:
    """The title key (names.title_key) of every page written before the column existed."""
    rows = conn.execute("SELECT id, title FROM pages WHERE title IS NOT NULL ORDER BY id").fetchall()
    with conn.cursor() as cur:
        for at in range(0, len(rows), batch):
            cur.executemany(
                "UPDATE pages SET title_key = %s WHERE id = %s", [(title_key(r[1]), r[0]) for r in rows[at : at + batch]]
            )


# Facts are searched by memverbs's own index terms (the SQLite step documents them): the tsvector
# is built from the stored terms without the text parser (array_to_tsvector), so it holds exactly
# the lexemes FTS5 indexes, and `search_len` (the term count) is what BM25 normalises by.
_FACT_TERMS = """
    ALTER TABLE facts DROP COLUMN search;
    ALTER TABLE facts ADD COLUMN search_terms TEXT NOT NULL DEFAULT '';
"""
_FACT_TERMS_INDEX = """
    ALTER TABLE facts ADD COLUMN search tsvector GENERATED ALWAYS AS (array_to_tsvector(string_to_array(search_terms, ' '))) STORED;
    ALTER TABLE facts ADD COLUMN search_len integer GENERATED ALWAYS AS (cardinality(string_to_array(search_terms, ' '))) STORED;
    CREATE INDEX facts_search ON facts USING gin (search);
"""


def _fill_fact_terms(conn: Any) -> None:
    rows = fact_terms_rows(conn.execute("SELECT id, fact FROM facts").fetchall())
    with conn.cursor() as cur:
        cur.executemany("UPDATE facts SET search_terms = %s, fact_norm = %s WHERE id = %s", rows)
    conn.execute(_FACT_TERMS_INDEX)


# Page history, sync failures, folder and watcher hosts (see migrations.py).
_PAGE_HISTORY = """
    CREATE TABLE page_versions (
        id          BIGSERIAL PRIMARY KEY,
        page_id     BIGINT NOT NULL REFERENCES pages (id),
        version     INTEGER NOT NULL,
        markdown    TEXT NOT NULL,
        title       TEXT,
        visibility  TEXT NOT NULL CHECK (visibility IN ('world', 'private')),
        written_at  BIGINT NOT NULL,
        replaced_at BIGINT NOT NULL,
        replaced_by TEXT NOT NULL,
        UNIQUE (page_id, version)
    );

    CREATE TABLE sync_failures (
        folder_id  BIGINT NOT NULL REFERENCES sync_folders (id),
        rel_path   TEXT COLLATE "C" NOT NULL,
        size       BIGINT NOT NULL,
        mtime_ns   BIGINT NOT NULL,
        outcome    TEXT NOT NULL CHECK (outcome IN ('skipped', 'errors')),
        reason     TEXT NOT NULL,
        first_at   BIGINT NOT NULL,
        last_at    BIGINT NOT NULL,
        PRIMARY KEY (folder_id, rel_path)
    );

    ALTER TABLE sync_folders ADD COLUMN host TEXT;
    ALTER TABLE sync_folders ADD COLUMN watcher_host TEXT;
"""

# The brain's people, as SQLite's 0018_people (see migrations.py), and the database's enforcement of
# who reads a private row (docs/postgres.md, "People and privacy"). Person 1, the owner, is the role
# that owns these tables; every other person is a row, mapped to their own role.
#
# memverbs_person() is the person the session acts as: the owner for the tables' owner (or, for a
# person without a role of their own, the one the owner's session names in `memverbs.person`, which
# a server sets per request), else the person mapped to current_user — a teammate's login, or the
# role a server took with SET ROLE for the person a call acts for. Row-level security (FORCE: the
# tables' owner too) lets every session see world rows and its own person's private rows only, and
# write private rows only as their owner; whether a call may read even those (a token without
# read:private may not) is the verbs' rule, as on SQLite. The rows that
# belong to a page (links, timeline, aliases, chunks, versions) show only with their page, and fact
# vectors only with their fact. Superusers and BYPASSRLS roles are not held by any of it.
_PEOPLE = """
    CREATE TABLE people (
        id         BIGINT PRIMARY KEY CHECK (id > 1),
        name       TEXT NOT NULL UNIQUE,
        role       TEXT UNIQUE,
        created_at BIGINT NOT NULL
    );
    ALTER TABLE pages ADD COLUMN owner BIGINT NOT NULL DEFAULT 1;
    ALTER TABLE facts ADD COLUMN owner BIGINT NOT NULL DEFAULT 1;
    ALTER TABLE links ADD COLUMN owner BIGINT NOT NULL DEFAULT 1;
    ALTER TABLE timeline ADD COLUMN owner BIGINT NOT NULL DEFAULT 1;
    ALTER TABLE page_versions ADD COLUMN owner BIGINT NOT NULL DEFAULT 1;
    ALTER TABLE access_tokens ADD COLUMN person BIGINT NOT NULL DEFAULT 1;

    CREATE FUNCTION memverbs_person() RETURNS BIGINT LANGUAGE sql STABLE AS $$
        SELECT CASE
            WHEN pg_get_userbyid((SELECT relowner FROM pg_class WHERE oid = 'people'::regclass)) = current_user THEN
                CASE WHEN coalesce(current_setting('memverbs.person', true), '') = '' THEN 1::bigint
                     ELSE (SELECT id FROM people WHERE role IS NULL AND id::text = current_setting('memverbs.person', true))
                END
            -- Only the owner's session names a person; any other session is its own role's person.
            WHEN coalesce(current_setting('memverbs.person', true), '') = '' THEN (SELECT id FROM people WHERE role = current_user)
        END
    $$;

    ALTER TABLE pages ENABLE ROW LEVEL SECURITY;
    ALTER TABLE pages FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON pages FOR SELECT USING (visibility = 'world' OR owner = (SELECT memverbs_person()));
    CREATE POLICY people_add ON pages FOR INSERT WITH CHECK (visibility = 'world' OR owner = (SELECT memverbs_person()));
    CREATE POLICY people_change ON pages FOR UPDATE USING (visibility = 'world' OR owner = (SELECT memverbs_person()))
        WITH CHECK (visibility = 'world' OR owner = (SELECT memverbs_person()));
    CREATE POLICY people_remove ON pages FOR DELETE USING (visibility = 'world' OR owner = (SELECT memverbs_person()));

    ALTER TABLE facts ENABLE ROW LEVEL SECURITY;
    ALTER TABLE facts FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON facts FOR SELECT USING (visibility = 'world' OR owner = (SELECT memverbs_person()));
    CREATE POLICY people_add ON facts FOR INSERT WITH CHECK (visibility = 'world' OR owner = (SELECT memverbs_person()));
    CREATE POLICY people_change ON facts FOR UPDATE USING (visibility = 'world' OR owner = (SELECT memverbs_person()))
        WITH CHECK (visibility = 'world' OR owner = (SELECT memverbs_person()));
    CREATE POLICY people_remove ON facts FOR DELETE USING (visibility = 'world' OR owner = (SELECT memverbs_person()));

    ALTER TABLE links ENABLE ROW LEVEL SECURITY;
    ALTER TABLE links FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON links FOR SELECT USING (
        (private_row = 0 OR owner = (SELECT memverbs_person()))
        AND EXISTS (SELECT 1 FROM pages p WHERE p.source_id = links.source_id AND p.slug = links.from_slug));
    CREATE POLICY people_add ON links FOR INSERT WITH CHECK (private_row = 0 OR owner = (SELECT memverbs_person()));
    CREATE POLICY people_change ON links FOR UPDATE USING (true);
    CREATE POLICY people_remove ON links FOR DELETE USING (true);

    ALTER TABLE timeline ENABLE ROW LEVEL SECURITY;
    ALTER TABLE timeline FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON timeline FOR SELECT USING (
        (private_row = 0 OR owner = (SELECT memverbs_person()))
        AND EXISTS (SELECT 1 FROM pages p WHERE p.source_id = timeline.source_id AND p.slug = timeline.slug));
    CREATE POLICY people_add ON timeline FOR INSERT WITH CHECK (private_row = 0 OR owner = (SELECT memverbs_person()));
    CREATE POLICY people_change ON timeline FOR UPDATE USING (true);
    CREATE POLICY people_remove ON timeline FOR DELETE USING (true);

    ALTER TABLE page_versions ENABLE ROW LEVEL SECURITY;
    ALTER TABLE page_versions FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON page_versions FOR SELECT USING (
        (visibility = 'world' OR owner = (SELECT memverbs_person()))
        AND EXISTS (SELECT 1 FROM pages p WHERE p.id = page_versions.page_id));
    CREATE POLICY people_add ON page_versions FOR INSERT WITH CHECK (true);
    CREATE POLICY people_change ON page_versions FOR UPDATE USING (true);
    CREATE POLICY people_remove ON page_versions FOR DELETE USING (true);

    ALTER TABLE aliases ENABLE ROW LEVEL SECURITY;
    ALTER TABLE aliases FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON aliases FOR SELECT USING (
        EXISTS (SELECT 1 FROM pages p WHERE p.source_id = aliases.source_id AND p.slug = aliases.slug));
    CREATE POLICY people_add ON aliases FOR INSERT WITH CHECK (true);
    CREATE POLICY people_change ON aliases FOR UPDATE USING (true);
    CREATE POLICY people_remove ON aliases FOR DELETE USING (true);

    ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;
    ALTER TABLE chunks FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON chunks FOR SELECT USING (EXISTS (SELECT 1 FROM pages p WHERE p.id = chunks.page_id));
    CREATE POLICY people_add ON chunks FOR INSERT WITH CHECK (true);
    CREATE POLICY people_change ON chunks FOR UPDATE USING (true);
    CREATE POLICY people_remove ON chunks FOR DELETE USING (true);

    ALTER TABLE fact_vectors ENABLE ROW LEVEL SECURITY;
    ALTER TABLE fact_vectors FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON fact_vectors FOR SELECT USING (EXISTS (SELECT 1 FROM facts f WHERE f.id = fact_vectors.fact_id));
    CREATE POLICY people_add ON fact_vectors FOR INSERT WITH CHECK (true);
    CREATE POLICY people_change ON fact_vectors FOR UPDATE USING (true);
    CREATE POLICY people_remove ON fact_vectors FOR DELETE USING (true);

    -- A teammate's login may mint and revoke its own person's tokens only; the owner, anyone's.
    ALTER TABLE access_tokens ENABLE ROW LEVEL SECURITY;
    ALTER TABLE access_tokens FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON access_tokens FOR SELECT USING (true);
    CREATE POLICY people_add ON access_tokens FOR INSERT
        WITH CHECK (person = (SELECT memverbs_person()) OR (SELECT memverbs_person()) = 1);
    CREATE POLICY people_change ON access_tokens FOR UPDATE
        USING (person = (SELECT memverbs_person()) OR (SELECT memverbs_person()) = 1);
    CREATE POLICY people_remove ON access_tokens FOR DELETE
        USING (person = (SELECT memverbs_person()) OR (SELECT memverbs_person()) = 1);
"""

# A synced folder is known by the id in its `.memverbs/folder.json` and the host syncing it, not by its
# path (server/sync/identity.py): two machines' folders at one path are two rows.
_FOLDER_IDENTITY = """
    ALTER TABLE sync_folders DROP CONSTRAINT IF EXISTS sync_folders_source_id_root_key;
    ALTER TABLE sync_folders ADD COLUMN folder_uid TEXT;
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
    # SQLite's trigram index has no twin here: a word of a script written without spaces is found
    # by a scan of the source's pages (strpos), the same answers without an extension (pg_trgm).
    Migration("0016_page_trigrams", "SELECT 1"),
    Migration("0017_page_history", _PAGE_HISTORY),
    Migration("0018_people", _PEOPLE),
    Migration("0019_folder_identity", _FOLDER_IDENTITY),
)

# What a teammate's role is granted (`memverbs people add NAME --role ROLE`): the brain's rows, under
# row-level security; the people table to read; nothing of OAuth (the owner's server) or of the
# schema (only the owner migrates). Run again by every `people add`, so a table a later step adds
# is granted by the next one.
TEAMMATE_TABLES = (
    "pages", "facts", "links", "timeline", "aliases", "chunks", "page_versions", "fact_vectors", "fact_moves",
    "fact_audit", "session_cursors", "projects", "vector_spaces", "text_vectors", "sync_folders", "sync_files",
    "sync_conflicts", "sync_failures", "access_tokens",
)
READ_ONLY_TABLES = ("people", "_migrations")

# Not a numbered step: whether pgvector can be used depends on the server, not on the schema's
# age. Applied (idempotently) whenever the extension is there; without it the column is absent
# and the vector arm scans exactly (see postgres_vector_index.py).
PGVECTOR_COLUMN = "ALTER TABLE text_vectors ADD COLUMN IF NOT EXISTS embedding vector"
