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

# The whole brain, for its owner, one transaction at a time. A backup of every person's rows, its
# restore and `migrate` read and write rows no person's view holds, and the owner's login is held
# by the policies above as everyone is (FORCE). The tables' owner could lift that anyway (NO FORCE,
# which locks every table against the team for as long as the copy takes), so nothing widens here:
# a session of the owner's login with no person named (memverbs_person() = 1) that sets
# `memverbs.whole_brain` for its transaction (postgres_base.whole_brain) reads and writes every
# row. Any other session — a teammate's login, a server acting for a person — is not admitted by
# it, whatever it sets. One more permissive policy per table, so the rules above stay as they are.
WHOLE_BRAIN_POLICY = ("CREATE POLICY whole_brain ON %I FOR ALL USING ((SELECT memverbs_whole_brain())) "
                      "WITH CHECK ((SELECT memverbs_whole_brain()))")  # %I: the table (format())
# The gate is a PL/pgSQL function with its search path pinned: a SQL function would be inlined, with
# memverbs_person()'s subqueries, into every query's rules and planned each time (a tenth of a
# millisecond a statement, measured); this one is one cheap call per query, and asks who the
# session is only when the flag is on.
WHOLE_BRAIN = f"""
    CREATE FUNCTION memverbs_whole_brain() RETURNS boolean LANGUAGE plpgsql STABLE SET search_path FROM CURRENT AS $$
    BEGIN
        RETURN coalesce(current_setting('memverbs.whole_brain', true), '') = 'on' AND memverbs_person() = 1;
    END $$;
    DO $$
    DECLARE t text;
    BEGIN  -- every table of the brain under row-level security (a later step that secures a table adds it there)
        FOR t IN SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'
                 AND relrowsecurity AND relowner = (SELECT relowner FROM pg_class WHERE oid = 'people'::regclass) LOOP
            EXECUTE format('{WHOLE_BRAIN_POLICY}', t);
        END LOOP;
    END $$;
"""

# The name index's rows of an entity with facts and no page are written by a trigger on the facts
# (sqlite_schema.ENTITY_NAMES_FROM_FACTS's twin); its row policies and the teammates' grant are the
# step's `Secure` (the declaration's kind for entity_names).
ENTITY_NAMES_FROM_FACTS = """
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
"""


# Postgres drops the one-row-per-path key of sync_folders in place (schema.FOLDER_IDENTITY).
FOLDER_IDENTITY = """
    ALTER TABLE sync_folders DROP CONSTRAINT IF EXISTS sync_folders_source_id_root_key;
    ALTER TABLE sync_folders ADD COLUMN folder_uid TEXT;
"""

# What a teammate's role reads of what the database keeps for itself (`people add`); the brain's own
# tables are granted as their declared kind says (postgres_migrate.teammate_tables).
BACKEND_READ_ONLY = ("_migrations", "fact_totals")

# Not a numbered step: whether pgvector can be used depends on the server, not on the schema's
# age. Applied (idempotently) whenever the extension is there; without it the column is absent
# and the vector arm scans exactly (see postgres_vector_index.py).
PGVECTOR_COLUMN = "ALTER TABLE text_vectors ADD COLUMN IF NOT EXISTS embedding vector"


# The world view of the pages, for untrusted callers' keyword ranking (brain/page_search.py). ts_rank
# scores a page from its own tsvector alone (no corpus statistics, unlike FTS5's bm25), but `search`
# holds every word of the body, a private facts-fence row's too: ranked on it, a world page would move
# up or down with the words of a row the caller cannot read. memverbs_world_search is the vector the
# page would have if its private rows did not exist — `search` itself for a page without one (a row
# starting `[private]` puts that word in it, so the body is read only for those pages).
# memverbs_world_body is markdown.without_private_rows in PL/pgSQL, line by line the same rule (tests
# hold the two to each other): Python's line boundaries, its whitespace (str.isspace), and the case
# folding its fence pattern uses (K/k/KELVIN SIGN, S/s/LONG S), spelled out rather than left to the
# database's locale. (No question mark in it: the brain's connection reads `?` as a parameter.)
_LINE_END = r"\n\r\u000b\u000c\u001c\u001d\u001e\u0085\u2028\u2029"
_SPACE = r"\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
WORLD_SEARCH = f"""
    CREATE FUNCTION memverbs_world_body(body text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
    DECLARE
        line text;
        fence text := NULL;  -- the fence a line is in: facts, takes, another name, or none
        private_row boolean := false;
        marker text[];
        stripped text;
        kept text[] := ARRAY[]::text[];
    BEGIN
        IF body !~ '\\[[pP][rR][iI][vV][aA][tT][eE]\\]' THEN
            RETURN body;  -- no row can start [private] (spelled out: lower() follows the locale)
        END IF;
        -- Each line with its ending (a last empty match at the end is an empty line: it changes nothing).
        FOR line IN SELECT m[1] || m[2] FROM regexp_matches(body, '([^{_LINE_END}]*)(\\r\\n|[{_LINE_END}]|$)', 'g') AS m LOOP
            marker := regexp_match(line,
                '<!--[{_SPACE}]*(/|)([tT][aA][kK\\u212a][eE][sS\\u017f]|[fF][aA][cC][tT][sS\\u017f])[{_SPACE}]*-->');
            IF marker IS NOT NULL THEN
                fence := CASE WHEN marker[1] = '/' THEN NULL
                              WHEN marker[2] ~ '^[fF][aA][cC][tT][sS]$' THEN 'facts'
                              WHEN marker[2] ~ '^[tT][aA][kK\\u212a][eE][sS]$' THEN 'takes'
                              ELSE 'other' END;
                private_row := false;
            ELSIF fence = 'facts' THEN
                stripped := regexp_replace(line, '^[{_SPACE}]+|[{_SPACE}]+$', '', 'g');
                IF ltrim(stripped, '-*+ ') ~ '^\\[[pP][rR][iI][vV][aA][tT][eE]\\]' THEN
                    private_row := true;
                ELSIF stripped <> '' AND line !~ '^[{_SPACE}]' THEN
                    private_row := false;
                END IF;
            ELSE
                private_row := false;
            END IF;
            IF NOT private_row THEN
                kept := kept || line;
            END IF;
        END LOOP;
        RETURN array_to_string(kept, '');
    END $$;
    CREATE FUNCTION memverbs_world_search(title text, body text, search tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN search @@ to_tsquery('simple', 'private | PRIVATE')  -- a Turkish ctype lowers I to a dotless i
            THEN setweight(to_tsvector('simple', coalesce(title, '')), 'A')
                 || setweight(to_tsvector('simple', memverbs_world_body(body)), 'B')
            ELSE search END
    $$;
"""
