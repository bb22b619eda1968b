"""The brain's tables, written once for both backends: the schema steps' SQL that SQLite and Postgres share.

The two backends hold the same tables column for column (so a brain copies between them without
conversion, `transfer.py`); where a column's type is spelled differently, the text names it in a
small vocabulary that each dialect spells (`sqlite_schema.COLUMN_TYPES`, `postgres_schema.COLUMN_TYPES`):

* `{rowid}` — a row id the database assigns;
* `{serial}` — a row id the database assigns and never reuses (ids that are handed out);
* `{bigint}` — a 64-bit integer: epoch milliseconds, row ids, sizes (SQLite's INTEGER is one);
* `{flag}` — a 0/1 integer;
* `{double}` — a float64;
* `{keytext}` — text compared in byte order (slugs, paths, keys), as SQLite compares all text:
  prefix and suffix ranges and the delta keyset (updated_at, slug) mean the same on both backends;
* `{bytes}` — a blob (vectors: float32 little-endian);
* `{without_rowid}` — a table clustered on its primary key (SQLite; Postgres has no such choice).

A literal brace is doubled. What only one backend has (SQLite's FTS5 tables and triggers, Postgres's
tsvector columns and row-level security) is in its own module; `migrations.MIGRATIONS` says which
step runs what.
"""

from __future__ import annotations

CORE_TABLES = """
        CREATE TABLE pages (
            id                {rowid},
            source_id         TEXT NOT NULL,
            slug              {keytext} NOT NULL,
            slug_rev          {keytext} NOT NULL,          -- slug reversed: suffix match as an index range
            title             TEXT,
            type              TEXT,
            body              TEXT NOT NULL DEFAULT '',
            frontmatter       TEXT NOT NULL DEFAULT '{{}}',
            summary           TEXT,                   -- frontmatter summary, if any
            visibility        TEXT NOT NULL DEFAULT 'world' CHECK (visibility IN ('world', 'private')),
            origin            TEXT NOT NULL DEFAULT 'put_page',
            created_at        {bigint} NOT NULL,
            updated_at        {bigint} NOT NULL,
            last_retrieved_at {bigint},
            deleted_at        {bigint},
            UNIQUE (source_id, slug)
        );
        CREATE INDEX pages_title ON pages (source_id, lower(title)) WHERE deleted_at IS NULL;
        CREATE INDEX pages_slug_rev ON pages (source_id, slug_rev) WHERE deleted_at IS NULL;
        CREATE INDEX pages_changed ON pages (source_id, updated_at, slug) WHERE deleted_at IS NULL;

        CREATE TABLE aliases (
            id         {rowid},
            source_id  TEXT NOT NULL,
            slug       {keytext} NOT NULL,
            alias      TEXT NOT NULL,
            alias_norm {keytext} NOT NULL,
            origin     TEXT NOT NULL DEFAULT 'manual',   -- frontmatter | manual
            UNIQUE (source_id, slug, alias_norm)
        );
        CREATE INDEX aliases_norm ON aliases (source_id, alias_norm);

        CREATE TABLE links (
            id          {rowid},
            source_id   TEXT NOT NULL,
            from_slug   {keytext} NOT NULL,
            to_slug     {keytext} NOT NULL,
            link_type   TEXT NOT NULL,
            link_source TEXT,                            -- markdown | frontmatter | manual | mentions
            context     TEXT,
            created_at  {bigint} NOT NULL,
            UNIQUE (source_id, from_slug, to_slug, link_type, link_source)
        );
        CREATE INDEX links_to ON links (source_id, to_slug);

        CREATE TABLE timeline (
            id         {rowid},
            source_id  TEXT NOT NULL,
            slug       {keytext} NOT NULL,
            date       TEXT NOT NULL,                    -- YYYY-MM-DD as written
            summary    TEXT NOT NULL,
            detail     TEXT,
            origin     TEXT NOT NULL DEFAULT 'manual',   -- markdown | manual
            created_at {bigint} NOT NULL
        );
        CREATE INDEX timeline_slug ON timeline (source_id, slug, date DESC);

        CREATE TABLE facts (
            id                {serial},  -- never reused: ids are handed out
            source_id         TEXT NOT NULL,
            fact              TEXT NOT NULL,
            fact_norm         TEXT NOT NULL,          -- whitespace-collapsed, lowercased: exact dedup
            kind              TEXT NOT NULL,
            entity_slug       {keytext},
            visibility        TEXT NOT NULL CHECK (visibility IN ('world', 'private')),
            notability        TEXT NOT NULL DEFAULT 'medium',
            provenance        TEXT NOT NULL,
            source_session    TEXT,
            context           TEXT,
            confidence        {double} NOT NULL DEFAULT 1.0,
            valid_from        {bigint} NOT NULL,
            valid_until       {bigint},
            expired_at        {bigint},
            expiry_reason     TEXT,                   -- the audit trail: why it stopped being active
            superseded_by     {bigint} REFERENCES facts (id),
            consolidated_at   {bigint},
            consolidated_into {bigint},
            created_at        {bigint} NOT NULL
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
            last_wake_at {bigint} NOT NULL,
            cursor_slug  {keytext} NOT NULL DEFAULT '',
            created_at   {bigint} NOT NULL,
            updated_at   {bigint} NOT NULL,
            PRIMARY KEY (source_id, client_id, session_id)
        );
        CREATE INDEX session_cursors_idle ON session_cursors (updated_at);
"""


# Remote brains: bearer tokens for `memverbs serve --http`. Only the SHA-256 of a
# token is kept; `client_id` is the token's delta cursor lane and usage-log client.
ACCESS_TOKENS = """
        CREATE TABLE access_tokens (
            id           {serial},
            name         TEXT NOT NULL,
            token_hash   TEXT NOT NULL UNIQUE,          -- sha256 hex of the token
            token_hint   TEXT NOT NULL,                 -- its first characters, for `auth list`
            scopes       TEXT NOT NULL,                 -- comma-separated: read, write
            surface      TEXT NOT NULL CHECK (surface IN ('verbs', 'starter', 'full')),
            source_id    TEXT NOT NULL,
            client_id    TEXT NOT NULL,                 -- 'token:<name>', never 'local'
            created_at   {bigint} NOT NULL,
            last_used_at {bigint},
            revoked_at   {bigint}
        );
        CREATE UNIQUE INDEX access_tokens_live_name ON access_tokens (name) WHERE revoked_at IS NULL;
"""


# Vectors live in plain tables as float32 blobs (this Python cannot load SQLite
# extensions), each tagged with its space: the provider/model/dims identity; on Postgres with
# pgvector, page vectors also get an `embedding` column (postgres_schema.PGVECTOR_COLUMN).
# Page vectors are content-addressed by the hash of the embedded text, so an
# edit re-embeds only changed chunks; text_vectors ids are never reused, which
# lets an in-memory index catch up by reading ids above the last it saw.
VECTORS = """
        CREATE TABLE vector_spaces (
            id         {rowid},
            provider   TEXT NOT NULL,
            model      TEXT NOT NULL,
            dims       INTEGER NOT NULL,
            created_at {bigint} NOT NULL,
            UNIQUE (provider, model, dims)
        );

        CREATE TABLE chunks (
            id        {rowid},
            source_id TEXT NOT NULL,
            page_id   {bigint} NOT NULL REFERENCES pages (id),
            ord       INTEGER NOT NULL,
            text      TEXT NOT NULL,
            text_hash TEXT NOT NULL,                     -- of title + chunk, the embedded input
            UNIQUE (page_id, ord)
        );
        CREATE INDEX chunks_hash ON chunks (text_hash, source_id);

        CREATE TABLE text_vectors (
            id         {serial},
            space_id   {bigint} NOT NULL REFERENCES vector_spaces (id),
            text_hash  TEXT NOT NULL,
            vector     {bytes} NOT NULL,                    -- dims × float32 little-endian, unit length
            created_at {bigint} NOT NULL,
            UNIQUE (space_id, text_hash)
        );

        CREATE TABLE fact_vectors (
            fact_id    {bigint} NOT NULL REFERENCES facts (id),
            space_id   {bigint} NOT NULL REFERENCES vector_spaces (id),
            vector     {bytes} NOT NULL,
            created_at {bigint} NOT NULL,
            PRIMARY KEY (fact_id, space_id)
        ){without_rowid};
"""


# `memverbs move-facts` refiles facts under another entity; each move is kept here, so a
# fact's history shows where it was filed before and why (fact ids never change).
FACT_MOVES = """
        CREATE TABLE fact_moves (
            id         {serial},
            fact_id    {bigint} NOT NULL REFERENCES facts (id),
            from_slug  {keytext},
            to_slug    {keytext} NOT NULL,
            reason     TEXT,
            moved_at   {bigint} NOT NULL
        );
        CREATE INDEX fact_moves_fact ON fact_moves (fact_id);
"""


# The page's markdown exactly as it was written, so `memverbs get-page --raw` can give it back byte
# for byte. Pages written before this step have NULL and are rebuilt from frontmatter and body.
PAGE_MARKDOWN = """
        ALTER TABLE pages ADD COLUMN markdown TEXT;
"""


# Index shapes that leave the planner no worse choice on a brain that was never
# analysed (memverbs never runs ANALYZE; docs/architecture.md, "Query plans"):
# without statistics SQLite ranks indexes by how many leading columns a query
# pins, covering before not, so a covering index with both equalities beats a
# covering index that pins only the source (which scans the source's rows). Postgres has
# statistics (autovacuum analyses), but keeps the same indexes under the same names, so both
# backends have one schema history: alias lookups and links into a page are one index range.
PLAN_INDEXES = """
        DROP INDEX aliases_norm;
        CREATE INDEX aliases_lookup ON aliases (source_id, alias_norm, slug);
        DROP INDEX links_to;
        CREATE INDEX links_in ON links (source_id, to_slug, from_slug, link_source);
"""


# Markdown folders kept in step with the brain (`memverbs import` / `sync`): one row per
# folder and per file, so a restart resumes from what was last synced, and the brain's
# side of every conflict (the file wins) kept until someone looks at it.
MARKDOWN_SYNC_STATE = """
        CREATE TABLE sync_folders (
            id             {rowid},
            source_id      TEXT NOT NULL,
            root           {keytext} NOT NULL,                 -- absolute, resolved path of the folder
            slug_prefix    TEXT NOT NULL DEFAULT '',
            mode           TEXT NOT NULL CHECK (mode IN ('import', 'sync')),
            created_at     {bigint} NOT NULL,
            last_pass_at   {bigint},                       -- end of the last complete pass
            last_change_at {bigint},                       -- last file change applied to the brain
            watcher_pid    {bigint},                       -- a running `sync --watch`, if any
            watcher_beat   {bigint},                       -- its last heartbeat
            UNIQUE (source_id, root)
        );

        CREATE TABLE sync_files (
            folder_id       {bigint} NOT NULL REFERENCES sync_folders (id),
            rel_path        {keytext} NOT NULL,                -- posix path inside the folder
            slug            {keytext} NOT NULL,
            file_hash       TEXT NOT NULL,                -- sha256 of the bytes last synced
            size            {bigint} NOT NULL,
            mtime_ns        {bigint} NOT NULL,
            page_updated_at {bigint},                      -- the page's updated_at after that sync
            synced_at       {bigint} NOT NULL,
            PRIMARY KEY (folder_id, rel_path)
        );
        CREATE INDEX sync_files_slug ON sync_files (folder_id, slug);

        CREATE TABLE sync_conflicts (
            id            {rowid},
            folder_id     {bigint} NOT NULL REFERENCES sync_folders (id),
            rel_path      {keytext} NOT NULL,
            slug          {keytext} NOT NULL,
            brain_content TEXT NOT NULL,                  -- the brain's version the file overrode
            detected_at   {bigint} NOT NULL,
            resolved_at   {bigint}
        );
"""


# `memverbs ui`'s live feed reads the newest changes by each moment a fact or page changes;
# remembering and writing already have their indexes, forgetting and deleting get theirs.
CHANGE_FEED = """
        CREATE INDEX facts_expired ON facts (source_id, expired_at) WHERE expired_at IS NOT NULL;
        CREATE INDEX pages_deleted ON pages (source_id, deleted_at) WHERE deleted_at IS NOT NULL;
"""


# Restoring a forgotten fact and changing one fact's visibility (`memverbs restore-fact`,
# `fact-visibility`, the inspector) rewrite a fact's row; each change is kept here with who,
# when and why, and a restore keeps the expiry it undid (when and its reason), so the trail loses
# nothing.
FACT_AUDIT = """
        CREATE TABLE fact_audit (
            id         {serial},
            fact_id    {bigint} NOT NULL REFERENCES facts (id),
            action     TEXT NOT NULL CHECK (action IN ('restored', 'visibility')),
            old_value  TEXT,                          -- restored: the expiry reason undone; visibility: the old one
            old_at     {bigint},                       -- restored: when the fact had been expired
            new_value  TEXT,                          -- visibility: the new one
            reason     TEXT NOT NULL,
            actor      TEXT NOT NULL,                 -- who: the command or inspector, and the OS user
            at         {bigint} NOT NULL
        );
        CREATE INDEX fact_audit_fact ON fact_audit (fact_id, at);
        CREATE INDEX fact_audit_at ON fact_audit (at);   -- the inspector's live feed reads edits by time
"""


# Links and timeline rows a page's private facts-fence rows declare are stored marked private
# (`private_row` 1) and shown only to trusted readers. Rows written before this step are not
# marked; a page with a private row ('[private]' in its body, any case) had them mixed with its
# world rows, so its body links and markdown timeline rows are marked private until the page is
# next written (which sorts them exactly): fail closed, the owner loses nothing.
PRIVATE_ROWS = """
        ALTER TABLE links ADD COLUMN private_row {flag} NOT NULL DEFAULT 0;
        ALTER TABLE timeline ADD COLUMN private_row {flag} NOT NULL DEFAULT 0;
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
PROJECTS = """
        ALTER TABLE facts ADD COLUMN project {keytext};   -- the project's slug (projects.slug), NULL outside one
        CREATE INDEX facts_project ON facts (source_id, project, valid_from DESC, id DESC) WHERE project IS NOT NULL;
        CREATE TABLE projects (
            source_id  TEXT NOT NULL,
            key        {keytext} NOT NULL,                -- normalised remote URL, or path:<root>
            slug       {keytext} NOT NULL,                -- projects/<name>, suffixed when the name was taken
            name       TEXT NOT NULL,
            root       TEXT NOT NULL,                -- where it was last seen on this machine
            created_at {bigint} NOT NULL,
            updated_at {bigint} NOT NULL,
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
OAUTH = """
        CREATE TABLE oauth_clients (
            id           {serial},
            client_id    TEXT NOT NULL UNIQUE,
            name         TEXT NOT NULL,
            metadata     TEXT NOT NULL,                 -- the registered RFC 7591 metadata (JSON), never the secret
            secret_hash  TEXT,                          -- sha256 hex of the client secret; NULL: a public client
            lane         TEXT NOT NULL,                 -- 'oauth:<client_id>', never 'local'
            created_at   {bigint} NOT NULL,
            last_used_at {bigint},
            revoked_at   {bigint}
        );
        CREATE TABLE oauth_tokens (
            id             {serial},
            client_ref     {bigint} NOT NULL REFERENCES oauth_clients (id),
            kind           TEXT NOT NULL CHECK (kind IN ('request', 'code', 'access', 'refresh')),
            token_hash     TEXT NOT NULL UNIQUE,
            family         {bigint},
            scopes         TEXT NOT NULL,                -- comma-separated: read, write
            surface        TEXT NOT NULL CHECK (surface IN ('verbs', 'starter', 'full')),
            source_id      TEXT NOT NULL,
            resource       TEXT NOT NULL,                -- the audience (RFC 8707): this server's public /mcp URL
            redirect_uri   TEXT,                         -- request and code only
            code_challenge TEXT,                         -- request and code only (PKCE S256)
            state          TEXT,                         -- request only: echoed to the client
            attempts       INTEGER NOT NULL DEFAULT 0,   -- request only: wrong owner logins
            expires_at     {bigint} NOT NULL,
            created_at     {bigint} NOT NULL,
            revoked_at     {bigint}                       -- also set when a request, code or refresh token is used
        );
        CREATE INDEX oauth_tokens_family ON oauth_tokens (family);
        CREATE INDEX oauth_tokens_client ON oauth_tokens (client_ref, kind);
        CREATE TABLE oauth_owner_secrets (
            id          {serial},
            kind        TEXT NOT NULL CHECK (kind IN ('approval_code', 'password')),
            secret_hash TEXT NOT NULL,
            expires_at  {bigint},
            created_at  {bigint} NOT NULL,
            used_at     {bigint}
        );
"""


# Titles are looked up by their key (names.title_key: NFKC, casefold, whitespace collapsed),
# which Python computes for both backends alike (SQLite's lower() folds ASCII only). The step's
# fill (migrations.fill_title_keys) computes the key of the pages already there.
TITLE_KEYS = """
        ALTER TABLE pages ADD COLUMN title_key TEXT;
        CREATE INDEX pages_title_key ON pages (source_id, title_key) WHERE deleted_at IS NULL;
        DROP INDEX pages_title;
"""


# Page history: every overwrite of a page's text keeps the text it replaced, with who replaced it
# and when (docs/sync.md, "Page history"). Keyed by the page's row, so a rename carries its history.
# And a synced file that cannot be applied (bad YAML, not UTF-8, too large) as it stands: a failure
# with its reason, so status and doctor name it instead of counting it pending for ever. And which
# host a folder and its watcher are on.
PAGE_HISTORY = """
        CREATE TABLE page_versions (
            id          {serial},
            page_id     {bigint} NOT NULL REFERENCES pages (id),
            version     INTEGER NOT NULL,              -- 1, 2, … per page: what page-restore names
            markdown    TEXT NOT NULL,                 -- the page's text as it was before the overwrite
            title       TEXT,
            visibility  TEXT NOT NULL CHECK (visibility IN ('world', 'private')),
            written_at  {bigint} NOT NULL,              -- when that text was saved (the page's updated_at then)
            replaced_at {bigint} NOT NULL,
            replaced_by TEXT NOT NULL,                 -- the overwriting caller's lane: 'local', 'sync', 'token:…', 'oauth:…'
            UNIQUE (page_id, version)
        );

        CREATE TABLE sync_failures (
            folder_id  {bigint} NOT NULL REFERENCES sync_folders (id),
            rel_path   {keytext} NOT NULL,
            size       {bigint} NOT NULL,                   -- the file as it failed: a save changes these
            mtime_ns   {bigint} NOT NULL,
            outcome    TEXT NOT NULL CHECK (outcome IN ('skipped', 'errors')),
            reason     TEXT NOT NULL,
            first_at   {bigint} NOT NULL,
            last_at    {bigint} NOT NULL,
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
# A project's statements (every kind but events) by themselves: the pack reads what was said and
# decided there however many commits were captured since, without walking those.
PROJECT_STATEMENTS = """
        CREATE INDEX facts_project_statements ON facts (source_id, project, valid_from DESC, id DESC)
            WHERE kind <> 'event' AND project IS NOT NULL;
"""


PEOPLE = """
        CREATE TABLE people (
            id         {bigint} PRIMARY KEY CHECK (id > 1),
            name       TEXT NOT NULL UNIQUE,
            role       TEXT UNIQUE,                        -- the person's Postgres role; NULL on SQLite
            created_at {bigint} NOT NULL
        );
        ALTER TABLE pages ADD COLUMN owner {bigint} NOT NULL DEFAULT 1;
        ALTER TABLE facts ADD COLUMN owner {bigint} NOT NULL DEFAULT 1;
        ALTER TABLE links ADD COLUMN owner {bigint} NOT NULL DEFAULT 1;
        ALTER TABLE timeline ADD COLUMN owner {bigint} NOT NULL DEFAULT 1;
        ALTER TABLE page_versions ADD COLUMN owner {bigint} NOT NULL DEFAULT 1;
        ALTER TABLE access_tokens ADD COLUMN person {bigint} NOT NULL DEFAULT 1;
"""

# A synced folder is known by the id in its `.memverbs/folder.json` and the host syncing it, not by its
# path (server/sync/identity.py): two machines' folders at one path are two rows. Each backend first
# drops the table's one-row-per-path key its own way, then both index the identity alike.
FOLDER_IDENTITY = """
        CREATE UNIQUE INDEX sync_folders_identity ON sync_folders (source_id, folder_uid, host) WHERE folder_uid IS NOT NULL;
        CREATE UNIQUE INDEX sync_folders_by_path ON sync_folders (source_id, root, COALESCE(host, '')) WHERE folder_uid IS NULL;
        CREATE INDEX sync_files_by_slug ON sync_files (slug);
"""

# The name index (server/name_index.py): every name a page goes by — title, aliases, its slug read as
# words, a person's first and last name — as a folded key, so which pages a text names is one lookup
# of the text's candidate keys through the primary key, whatever the brain's size. Derived from
# pages and aliases, written in their write transactions (brain/names_store.py); the step's fill
# (names_store.rebuild_all) indexes the pages already there.
ENTITY_NAMES = """
        CREATE TABLE entity_names (
            source_id  TEXT NOT NULL,
            name_key   {keytext} NOT NULL,
            slug       {keytext} NOT NULL,
            how        TEXT NOT NULL CHECK (how IN ('title', 'alias', 'slug', 'part')),
            PRIMARY KEY (source_id, name_key, slug)
        ){without_rowid};
        CREATE INDEX entity_names_slug ON entity_names (source_id, slug);
"""

# A team on one brain (docs/postgres.md, "A team on one Postgres"). A synced folder is one person's
# (`owner`: the person whose CLI synced it; folders from before are their notes' pages' owner's), and
# one that cannot be read is kept, marked unavailable with why (server/sync/importer.py: nothing in
# it is deleted meanwhile). A conflict says what happened (`cause`): the file won over a page that
# changed too (`file_won`), or the file was not applied because another folder's note holds its
# slug (`slug_taken`). Audit, move and history rows name the person who made them (`by_person`; NULL: made before
# people were kept). A synced file is found by its bytes across folders (a note moved between them).
TEAM_PRIVACY = """
        ALTER TABLE sync_folders ADD COLUMN owner {bigint} NOT NULL DEFAULT 1;
        ALTER TABLE sync_folders ADD COLUMN unavailable_at {bigint};
        ALTER TABLE sync_folders ADD COLUMN unavailable_reason TEXT;
        ALTER TABLE sync_conflicts ADD COLUMN cause TEXT NOT NULL DEFAULT 'file_won';
        ALTER TABLE fact_audit ADD COLUMN by_person {bigint};
        ALTER TABLE fact_moves ADD COLUMN by_person {bigint};
        ALTER TABLE page_versions ADD COLUMN by_person {bigint};
        CREATE INDEX sync_files_by_hash ON sync_files (file_hash);
"""
FOLDER_OWNERS = """
        UPDATE sync_folders AS f SET owner = coalesce((
            SELECT p.owner FROM sync_files sf JOIN pages p ON p.source_id = f.source_id AND p.slug = sf.slug
            WHERE sf.folder_id = f.id GROUP BY p.owner ORDER BY count(*) DESC, p.owner LIMIT 1), 1);
"""
