"""Postgres's own part of the schema steps: its column types, and what only Postgres has.

The tables both backends share are in `schema.py`; `migrations.MIGRATIONS` says which step runs
what. Here: the spelling of schema.py's column types; keyword search as a generated, weighted
`tsvector` with a GIN index (title A, body B) where SQLite has FTS5; row-level security for the
brain's people; and, when the `vector` extension (pgvector) is installed, the `vector` column page
vectors also live in (with one HNSW index per space, created with the space).
"""

from __future__ import annotations

COLUMN_TYPES = {
    "rowid": "BIGSERIAL PRIMARY KEY",
    "serial": "BIGSERIAL PRIMARY KEY",  # a sequence never hands an id out twice
    "bigint": "BIGINT",
    "flag": "SMALLINT",
    "double": "DOUBLE PRECISION",
    "keytext": 'TEXT COLLATE "C"',
    "bytes": "BYTEA",
    "without_rowid": "",
}

# A page's outgoing links by their page: a narrower index than the links' unique key, which SQLite reads for them.
LINKS_FROM = """
    CREATE INDEX links_from ON links (source_id, from_slug);
"""

# 'simple': lowercased words, no stemming and no stop words, like FTS5's unicode61 tokenizer.
KEYWORD_INDEX = """
    ALTER TABLE pages ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', coalesce(title, '')), 'A') || setweight(to_tsvector('simple', body), 'B')
    ) STORED;
    CREATE INDEX pages_search ON pages USING gin (search);
    ALTER TABLE facts ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('simple', fact)) STORED;
    CREATE INDEX facts_search ON facts USING gin (search);
"""

# Facts are searched by memverbs's own index terms (migrations.fill_fact_terms): the tsvector is
# built from the stored terms without the text parser (array_to_tsvector), so it holds exactly the
# lexemes FTS5 indexes, and `search_len` (the term count) is what BM25 normalises by. The old
# column goes first, and the new one is generated once the terms are filled in.
FACT_TERMS = """
    ALTER TABLE facts DROP COLUMN search;
    ALTER TABLE facts ADD COLUMN search_terms TEXT NOT NULL DEFAULT '';
"""
FACT_TERMS_INDEX = """
    ALTER TABLE facts ADD COLUMN search tsvector GENERATED ALWAYS AS (array_to_tsvector(string_to_array(search_terms, ' '))) STORED;
    ALTER TABLE facts ADD COLUMN search_len integer GENERATED ALWAYS AS (cardinality(string_to_array(search_terms, ' '))) STORED;
    CREATE INDEX facts_search ON facts USING gin (search);
"""

# The facts' GIN index takes each new fact's terms at once (fastupdate off) instead of into a pending
# list that every ranked query scans whole and only a vacuum merges (with it, a busy brain's
# `recall` read thousands of recent facts one by one, and the planner chose a scan of facts even
# for a word no fact holds). A remember pays a few index inserts; the list already pending is merged now.
FACT_INDEX_DIRECT = """
    ALTER INDEX facts_search SET (fastupdate = off);
    SELECT gin_clean_pending_list('facts_search'::regclass);
"""

# BM25's corpus totals (facts.search_terms: the number of facts, their terms in all), kept by a
# trigger in each write's own transaction so a ranked query reads a few rows instead of every fact
# (postgres_dialect.facts_ranked). One row per visibility class as row-level security draws it:
# class 0 the world facts, class P person P's private facts, so a session adds up exactly the
# facts it may see (world and its own person's; all of them where row security does not apply),
# the figures today's scores count; a teammate's role reads only those rows. The trigger writes as
# the tables' owner (SECURITY DEFINER), which this table's policy does not hold (not FORCEd). The
# facts already there are counted with the facts' own policy lifted for the step (the owner runs it).
FACT_TOTALS = """
    CREATE TABLE fact_totals (
        class BIGINT PRIMARY KEY,
        facts BIGINT NOT NULL,
        terms BIGINT NOT NULL
    );
    ALTER TABLE facts NO FORCE ROW LEVEL SECURITY;
    INSERT INTO fact_totals (class, facts, terms)
        SELECT CASE WHEN visibility = 'world' THEN 0 ELSE owner END, count(*), coalesce(sum(search_len), 0)
        FROM facts GROUP BY 1;
    ALTER TABLE facts FORCE ROW LEVEL SECURITY;
    CREATE FUNCTION memverbs_fact_totals() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    BEGIN
        IF TG_OP = 'TRUNCATE' THEN
            DELETE FROM fact_totals;
            RETURN NULL;
        END IF;
        IF TG_OP <> 'INSERT' THEN
            UPDATE fact_totals SET facts = facts - 1, terms = terms - OLD.search_len
            WHERE class = CASE WHEN OLD.visibility = 'world' THEN 0 ELSE OLD.owner END;
        END IF;
        IF TG_OP <> 'DELETE' THEN
            INSERT INTO fact_totals AS t (class, facts, terms)
            VALUES (CASE WHEN NEW.visibility = 'world' THEN 0 ELSE NEW.owner END, 1, NEW.search_len)
            ON CONFLICT (class) DO UPDATE SET facts = t.facts + 1, terms = t.terms + EXCLUDED.terms;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER fact_totals AFTER INSERT OR DELETE OR UPDATE OF visibility, owner, search_terms ON facts
        FOR EACH ROW EXECUTE FUNCTION memverbs_fact_totals();
    CREATE TRIGGER fact_totals_emptied AFTER TRUNCATE ON facts FOR EACH STATEMENT EXECUTE FUNCTION memverbs_fact_totals();
    ALTER TABLE fact_totals ENABLE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON fact_totals FOR SELECT USING (class = 0 OR class = (SELECT memverbs_person()));
    DO $$
    DECLARE r text;
    BEGIN  -- the teammates added before this step read it too (`people add` grants it from now on)
        FOR r IN SELECT role FROM people WHERE role IS NOT NULL AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role) LOOP
            EXECUTE format('GRANT SELECT ON fact_totals TO %I', r);
        END LOOP;
    END $$;
"""

# The database's enforcement of
# who reads a private row, over schema.PEOPLE (docs/postgres.md, "People and privacy"). Person 1,
# the owner, is the role that owns these tables; every other person is a row, mapped to their own role.
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
PERSON_FUNCTION = """
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
"""
ME = "(SELECT memverbs_person())"
OWN = f"visibility = 'world' OR owner = {ME}"  # a page's or a fact's own rule
OWN_ROW = f"private_row = 0 OR owner = {ME}"  # a page's link or timeline row, declared private or not


def _policies(table: str, *, read: str, add: str = "true", change: str = "true", change_check: str | None = None,
              remove: str = "true") -> str:
    """A table under row-level security: who reads, adds, changes and removes its rows."""
    check = f" WITH CHECK ({change_check})" if change_check else ""
    return f"""
    ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
    ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
    CREATE POLICY people_read ON {table} FOR SELECT USING ({read});
    CREATE POLICY people_add ON {table} FOR INSERT WITH CHECK ({add});
    CREATE POLICY people_change ON {table} FOR UPDATE USING ({change}){check};
    CREATE POLICY people_remove ON {table} FOR DELETE USING ({remove});
"""


def _with_page(page_match: str, rule: str | None = None) -> str:
    """A row that shows only with its page (and, given a rule, only as that rule allows)."""
    exists = f"EXISTS (SELECT 1 FROM pages p WHERE {page_match})"
    return exists if rule is None else f"({rule}) AND {exists}"


# A teammate's login may mint and revoke its own person's tokens only; the owner, anyone's.
_TOKEN_HOLDER = f"person = {ME} OR {ME} = 1"

ROW_SECURITY = PERSON_FUNCTION + "".join((
    _policies("pages", read=OWN, add=OWN, change=OWN, change_check=OWN, remove=OWN),
    _policies("facts", read=OWN, add=OWN, change=OWN, change_check=OWN, remove=OWN),
    _policies("links", read=_with_page("p.source_id = links.source_id AND p.slug = links.from_slug", OWN_ROW),
              add=OWN_ROW),
    _policies("timeline", read=_with_page("p.source_id = timeline.source_id AND p.slug = timeline.slug", OWN_ROW),
              add=OWN_ROW),
    _policies("page_versions", read=_with_page("p.id = page_versions.page_id", OWN)),
    _policies("aliases", read=_with_page("p.source_id = aliases.source_id AND p.slug = aliases.slug")),
    _policies("chunks", read=_with_page("p.id = chunks.page_id")),
    _policies("fact_vectors", read="EXISTS (SELECT 1 FROM facts f WHERE f.id = fact_vectors.fact_id)"),
    _policies("access_tokens", read="true", add=_TOKEN_HOLDER, change=_TOKEN_HOLDER, remove=_TOKEN_HOLDER),
))

# The name index's rows show only with their page (as the aliases they are made of do) or, for an
# entity with facts and no page, with a fact the session may see; the teammates added before this
# step get the table too (`people add` grants it from now on: TEAMMATE_TABLES). Its trigger is
# sqlite_schema.ENTITY_NAMES_FROM_FACTS's twin.
ENTITY_NAMES_SECURITY = _policies(
    "entity_names", read=_with_page("p.source_id = entity_names.source_id AND p.slug = entity_names.slug")
    + " OR EXISTS (SELECT 1 FROM facts f WHERE f.source_id = entity_names.source_id AND f.entity_slug = entity_names.slug)"
) + """
    CREATE FUNCTION memverbs_fact_entity_name() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.entity_slug IS NOT NULL THEN
            INSERT INTO entity_names (source_id, name_key, slug, how)
            VALUES (NEW.source_id, translate(regexp_replace(NEW.entity_slug, '^.*/', ''), '-_', '  '), NEW.entity_slug, 'slug')
            ON CONFLICT DO NOTHING;
        END IF;
        IF TG_OP = 'UPDATE' AND OLD.entity_slug IS NOT NULL THEN  -- facts moved away: a name nothing answers to goes
            DELETE FROM entity_names WHERE source_id = OLD.source_id AND slug = OLD.entity_slug
                AND NOT EXISTS (SELECT 1 FROM pages WHERE source_id = OLD.source_id AND slug = OLD.entity_slug AND deleted_at IS NULL)
                AND NOT EXISTS (SELECT 1 FROM facts WHERE source_id = OLD.source_id AND entity_slug = OLD.entity_slug);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER facts_entity_name AFTER INSERT ON facts FOR EACH ROW EXECUTE FUNCTION memverbs_fact_entity_name();
    CREATE TRIGGER facts_entity_name_moved AFTER UPDATE OF entity_slug ON facts
        FOR EACH ROW WHEN (NEW.entity_slug IS DISTINCT FROM OLD.entity_slug) EXECUTE FUNCTION memverbs_fact_entity_name();
    DO $$
    DECLARE r text;
    BEGIN
        FOR r IN SELECT role FROM people WHERE role IS NOT NULL AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role) LOOP
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON entity_names TO %I', r);
        END LOOP;
    END $$;
"""

# Postgres drops the one-row-per-path key of sync_folders in place (schema.FOLDER_IDENTITY).
FOLDER_IDENTITY = """
    ALTER TABLE sync_folders DROP CONSTRAINT IF EXISTS sync_folders_source_id_root_key;
    ALTER TABLE sync_folders ADD COLUMN folder_uid TEXT;
"""

# What a teammate's role is granted (`memverbs people add NAME --role ROLE`): the brain's rows, under
# row-level security; the people table to read; nothing of OAuth (the owner's server) or of the
# schema (only the owner migrates). Run again by every `people add`, so a table a later step adds
# is granted by the next one.
TEAMMATE_TABLES = (
    "pages", "facts", "links", "timeline", "aliases", "chunks", "page_versions", "fact_vectors", "fact_moves",
    "fact_audit", "session_cursors", "projects", "vector_spaces", "text_vectors", "sync_folders", "sync_files",
    "sync_conflicts", "sync_failures", "access_tokens", "entity_names",
)
READ_ONLY_TABLES = ("people", "_migrations", "fact_totals")

# Not a numbered step: whether pgvector can be used depends on the server, not on the schema's
# age. Applied (idempotently) whenever the extension is there; without it the column is absent
# and the vector arm scans exactly (see postgres_vector_index.py).
PGVECTOR_COLUMN = "ALTER TABLE text_vectors ADD COLUMN IF NOT EXISTS embedding vector"
