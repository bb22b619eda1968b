"""A team's row-level security on Postgres (schema step `0021_team_privacy`): who reads and who writes
every row that holds a person's material.

Step 0018 (postgres_schema.ROW_SECURITY) kept each person's private pages and facts from the others.
This step covers the rest of the doors, for reading and for writing, every policy with its `USING`
and its `WITH CHECK`:

* **A row is written in its writer's name only.** A new page, fact or synced folder is the session's
  person's (`owner = memverbs_person()`); an audit, move or history row names the person who made it
  (`by_person`); the rows that belong to a page (links, timeline, versions) carry the page's owner.
* **Only a row's owner changes its owner or visibility.** Policies cannot compare a row before and
  after, so a trigger does (`memverbs_guard_page`, `memverbs_guard_fact`): a world page or fact that
  another person may rewrite or forget (the team's shared rows, as the verbs allow) never becomes
  theirs or private. What another person may change of a world fact is what memverbs's own paths
  change (its expiry, supersession and entity); what it says stays its writer's. A world page's text
  rewritten by another person always keeps the text it replaced in the page's history, whether the
  rewrite came through memverbs (which writes the version itself) or not.
* **Hard deletes are the owner's.** Nobody deletes another person's page, fact, audit or move row;
  history beyond the newest PAGE_HISTORY_KEEP versions is pruned by whoever rewrites the page.
* **Trails only grow**: `fact_audit` and `fact_moves` rows are never changed or deleted, and show
  only with their fact.
* **A synced folder is its person's**: its row, its files' state, its conflicts (which hold the
  brain's version of a page) and failures are read and written by that person alone.
* **Tokens**: a teammate's login reads and changes its own person's tokens only; the owner's login
  (the HTTP server checking any bearer) all of them.

Whether a note's slug is taken by another person's synced folder is the one question sync must ask
across people. `memverbs_sync_claims` answers it (SECURITY DEFINER), for the calling session's
person (`memverbs_invoker()`): another person's folder is named only by person and host, never by
path, and a file is left out where its page is private to someone else, so the answer shows no slug
the caller could not already see. Inside such a function (and only there: it sets `memverbs.definer`
while it reads, which counts only for the tables' owner) the sync tables and pages show every row
(`memverbs_unrestricted()`).

A table's four policies are never written per table: they follow from the kind of rows its store
concept declares (server/brain/stores.py, in server/brain/rows.py's words; `policies_for`), and a
schema step names the tables it secures (`migrations.Secure`).

The owner's login is a person like the others under these policies (FORCE ROW LEVEL SECURITY). As
the owner of the tables it may still lift them for one transaction (`ALTER TABLE … NO FORCE ROW
LEVEL SECURITY`, restored before commit), which is how an owner's restore writes everyone's rows.
"""

from __future__ import annotations

from memverbs.server.brain import schema
from memverbs.server.brain.base import PAGE_HISTORY_KEEP
from memverbs.server.brain.postgres_schema import ME, OWN, OWN_ROW, WHOLE_BRAIN_POLICY
from memverbs.server.brain.rows import READ, RW, Whose

# The tables' owner, as memverbs_person() finds it.
_OWNER_ROLE = "pg_get_userbyid((SELECT relowner FROM pg_class WHERE oid = 'people'::regclass))"

FUNCTIONS = f"""
    -- The person of the session that called a SECURITY DEFINER function, where current_user is the
    -- tables' owner: its role as it set it (SET ROLE), else its login; as memverbs_person() reads it.
    CREATE FUNCTION memverbs_invoker() RETURNS BIGINT LANGUAGE sql STABLE AS $$
        SELECT CASE
            WHEN who = {_OWNER_ROLE} THEN
                CASE WHEN coalesce(current_setting('memverbs.person', true), '') = '' THEN 1::bigint
                     ELSE (SELECT id FROM people WHERE role IS NULL AND id::text = current_setting('memverbs.person', true))
                END
            WHEN coalesce(current_setting('memverbs.person', true), '') = '' THEN (SELECT id FROM people WHERE role = who)
        END
        FROM (SELECT CASE WHEN current_setting('role') = 'none' THEN session_user::text ELSE current_setting('role') END AS who) s
    $$;
    -- True only inside memverbs's own SECURITY DEFINER functions (their SET clause), which run as the
    -- tables' owner: no other session can be both.
    CREATE FUNCTION memverbs_last_version(page BIGINT) RETURNS INTEGER LANGUAGE sql STABLE AS $$
        SELECT max(version) FROM page_versions WHERE page_id = page
    $$;
    CREATE FUNCTION memverbs_unrestricted() RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
        SELECT coalesce(current_setting('memverbs.definer', true), '') = 'on' AND current_user = {_OWNER_ROLE}
    $$;
"""
FREE = "(SELECT memverbs_unrestricted())"


def _replace(table: str, *, read: str, add: str, change: str, change_check: str | None, remove: str) -> str:
    """A table's four policies, replacing 0018's where it had them (and forcing security on it)."""
    check = "" if change_check is None else f" WITH CHECK ({change_check})"
    return f"""
    ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
    ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
    DROP POLICY IF EXISTS people_read ON {table};
    DROP POLICY IF EXISTS people_add ON {table};
    DROP POLICY IF EXISTS people_change ON {table};
    DROP POLICY IF EXISTS people_remove ON {table};
    CREATE POLICY people_read ON {table} FOR SELECT USING ({read});
    CREATE POLICY people_add ON {table} FOR INSERT WITH CHECK ({add});
    CREATE POLICY people_change ON {table} FOR UPDATE USING ({change}){check};
    CREATE POLICY people_remove ON {table} FOR DELETE USING ({remove});
"""


MINE = f"owner = {ME}"
BY_ME = f"by_person = {ME}"
NOBODY = "false"


def _page(match: str, extra: str = "") -> str:
    """The row's page, visible to the session (its own policy), matched by `match` (and `extra`)."""
    return f"EXISTS (SELECT 1 FROM pages p WHERE {match}{' AND ' + extra if extra else ''})"


def _fact(table: str) -> str:
    return f"EXISTS (SELECT 1 FROM facts f WHERE f.id = {table}.fact_id)"


def _folder(table: str) -> str:
    """The row's folder is the session's person's (a folder's row shows only to its person)."""
    return f"EXISTS (SELECT 1 FROM sync_folders f WHERE f.id = {table}.folder_id AND f.owner = {ME})"


# A version past the newest PAGE_HISTORY_KEEP of its page: what a rewrite prunes (the newest it
# sees; versions hidden from the session only make the count smaller, never the prune deeper). The
# newest is read by a function: a policy's own subquery on its table would be recursion to Postgres.
_PRUNED = f"version <= memverbs_last_version(page_id) - {PAGE_HISTORY_KEEP}"
_TOKEN_HOLDER = f"person = {ME} OR {ME} = 1"
_NOT_HIDDEN = "NOT memverbs_slug_hidden(folder_id, slug)"
_EVERY = ("read", "add", "change", "change_check", "remove")


def _rules(table: str, whose: Whose) -> dict[str, str | None] | None:
    """Who reads, adds, changes (and what a change may leave) and removes a row of `table`, as its kind
    says (server/brain/rows.py); None for a kind the policies leave alone (the team's, the owner's)."""
    kind = whose.kind
    if kind == "page":
        return {"read": f"{OWN} OR {FREE}", "add": MINE, "change": OWN, "change_check": OWN, "remove": MINE}
    if kind == "fact":
        return {"read": OWN, "add": MINE, "change": OWN, "change_check": OWN, "remove": MINE}
    if kind == "page_row":
        # Shown with its page (a private one to its owner only); written by whoever may write the
        # page, always in the page's owner's name, a private one by that owner.
        match = whose.page_match(table)
        seen = f"{_page(match)} AND ({OWN_ROW})"
        written = f"{_page(match, f'p.owner = {table}.owner')} AND ({OWN_ROW})"
        return {"read": seen, "add": written, "change": seen, "change_check": written, "remove": seen}
    if kind == "versions":
        match = whose.page_match(table)
        return {"read": f"{_page(match)} AND ({OWN})",
                "add": f"{_page(match, f'p.owner = {table}.owner')} AND ({OWN}) AND {BY_ME}",
                "change": NOBODY, "change_check": NOBODY, "remove": f"{_page(match)} AND ({MINE} OR {_PRUNED})"}
    if kind == "with_page":
        return dict.fromkeys(_EVERY, _page(whose.page_match(table)))
    if kind == "with_fact":
        return dict.fromkeys(_EVERY, _fact(table))
    if kind == "trail":
        return {"read": _fact(table), "add": f"{_fact(table)} AND {BY_ME}", "change": NOBODY, "change_check": NOBODY,
                "remove": NOBODY}
    if kind == "folder":
        return {"read": f"{MINE} OR {FREE}", "add": MINE, "change": MINE, "change_check": MINE, "remove": MINE}
    if kind == "folder_file":
        # A synced file names no page its person cannot see: one planted under another person's private
        # page would claim that page's slug (and block the note that is that page) though its folder never held it.
        mine = _folder(table)
        return {"read": f"{mine} OR {FREE}", "add": f"{mine} AND {_NOT_HIDDEN}", "change": mine,
                "change_check": f"{mine} AND {_NOT_HIDDEN}", "remove": mine}
    if kind == "of_folder":
        mine = _folder(table)
        return {"read": f"{mine} OR {FREE}", "add": mine, "change": mine, "change_check": mine, "remove": mine}
    if kind == "credential":
        return dict.fromkeys(_EVERY, _TOKEN_HOLDER)
    if kind == "names":
        facts = (f"EXISTS (SELECT 1 FROM facts f WHERE f.source_id = {table}.source_id "
                 f"AND f.entity_slug = {table}.slug)")
        return {"read": f"{_page(whose.page_match(table))} OR {facts}", "add": "true", "change": "true",
                "change_check": None, "remove": "true"}
    if kind in ("team", "people", "owner"):
        return None
    raise ValueError(f"no row policies for the kind {kind!r} of {table}: say them here")


def policies_for(table: str, whose: Whose) -> str:
    """The row-level security `table`'s kind derives (none for a kind without policies)."""
    rules = _rules(table, whose)
    return "" if rules is None else _replace(table, **rules)  # type: ignore[arg-type]


def whole_brain_policy(table: str) -> str:
    """The owner's way to every row of a secured table, one transaction at a time (step 0023)."""
    return WHOLE_BRAIN_POLICY.replace("%I", table) + ";\n"


def grant_teammates(table: str, whose: Whose) -> str:
    """`table` granted to the teammates' roles already mapped (`people add` grants it from now on)."""
    rights = {RW: "SELECT, INSERT, UPDATE, DELETE", READ: "SELECT"}.get(whose.grant)
    if rights is None:
        return ""
    return f"""
    DO $$
    DECLARE r text;
    BEGIN
        FOR r IN SELECT role FROM people WHERE role IS NOT NULL AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role) LOOP
            EXECUTE format('GRANT {rights} ON {table} TO %I', r);
        END LOOP;
    END $$;
"""


# What another person may change of a world fact: what forget, supersession, restore, move-facts and a
# page's rename change. Everything else a fact says is its writer's.
_FACT_SHARED = ("expired_at", "expiry_reason", "superseded_by", "entity_slug", "consolidated_at", "consolidated_into")
_FACT_OWN = ("id", "source_id", "fact", "fact_norm", "kind", "notability", "provenance", "source_session", "context",
             "confidence", "valid_from", "valid_until", "created_at", "project", "search_terms")


def _tuple(prefix: str, cols: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"{prefix}.{c}" for c in cols) + ")"


GUARDS = f"""
    CREATE FUNCTION memverbs_guard_fact() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        me BIGINT := memverbs_person();
    BEGIN
        IF (NEW.owner, NEW.visibility) IS DISTINCT FROM (OLD.owner, OLD.visibility)
                AND (OLD.owner IS DISTINCT FROM me OR NEW.owner IS DISTINCT FROM me) THEN
            RAISE EXCEPTION 'fact #% is person %''s: only its owner changes its owner or visibility', OLD.id, OLD.owner
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF OLD.owner IS DISTINCT FROM me AND {_tuple('NEW', _FACT_OWN)} IS DISTINCT FROM {_tuple('OLD', _FACT_OWN)} THEN
            RAISE EXCEPTION 'fact #% is person %''s: only its owner changes what it says', OLD.id, OLD.owner
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF OLD.owner IS DISTINCT FROM me AND NEW.expired_at IS NOT NULL AND OLD.expired_at IS NULL
                AND coalesce(NEW.expiry_reason, '') = '' THEN
            RAISE EXCEPTION 'fact #% is person %''s: forgetting it says why', OLD.id, OLD.owner
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$;
    CREATE TRIGGER guard BEFORE UPDATE ON facts FOR EACH ROW EXECUTE FUNCTION memverbs_guard_fact();

    CREATE FUNCTION memverbs_guard_page() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        me BIGINT := memverbs_person();
        replaced TEXT := coalesce(OLD.markdown, OLD.body);
    BEGIN
        IF (NEW.owner, NEW.visibility) IS DISTINCT FROM (OLD.owner, OLD.visibility)
                AND (OLD.owner IS DISTINCT FROM me OR NEW.owner IS DISTINCT FROM me) THEN
            RAISE EXCEPTION 'page % is person %''s: only its owner changes its owner or visibility', OLD.slug, OLD.owner
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        -- Another person's rewrite of the text keeps the text it replaced in the page's history
        -- (memverbs writes that version itself, just before; a rewrite from elsewhere gets one here).
        IF OLD.owner IS DISTINCT FROM me AND replaced <> ''
                AND (NEW.body, NEW.markdown) IS DISTINCT FROM (OLD.body, OLD.markdown)
                AND NOT EXISTS (SELECT 1 FROM page_versions v WHERE v.page_id = OLD.id AND v.markdown = replaced) THEN
            INSERT INTO page_versions (page_id, version, markdown, title, visibility, written_at, replaced_at, replaced_by,
                                       owner, by_person)
            VALUES (OLD.id, coalesce((SELECT max(version) FROM page_versions WHERE page_id = OLD.id), 0) + 1, replaced,
                    OLD.title, OLD.visibility, OLD.updated_at, (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
                    'sql:' || session_user, OLD.owner, me);
        END IF;
        RETURN NEW;
    END $$;
    CREATE TRIGGER guard BEFORE UPDATE ON pages FOR EACH ROW EXECUTE FUNCTION memverbs_guard_page();
"""

# A SECURITY DEFINER function reads every row only between these two (memverbs_unrestricted(): the
# tables' owner with memverbs.definer on), set for the transaction and unset before it returns; an
# error ends the statement, and with it the setting's (sub)transaction.
_UNRESTRICTED_ON = "PERFORM set_config('memverbs.definer', 'on', true);"
_UNRESTRICTED_OFF = "PERFORM set_config('memverbs.definer', '', true);"

# The synced files of the brain's folders that hold `slug` (NULL: any) or have the bytes `hash` (NULL:
# any), for the calling session's person: its own folders' in full, another person's named by person
# and host only, and none whose page is private to someone other than the caller.
SYNC_CLAIMS = f"""
    CREATE FUNCTION memverbs_sync_claims(want_source TEXT, want_slug TEXT, want_hash TEXT)
    RETURNS TABLE (folder_id BIGINT, rel_path TEXT, slug TEXT, file_hash TEXT, synced_at BIGINT, root TEXT, host TEXT,
                   person BIGINT, mine BOOLEAN)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    DECLARE
        me BIGINT := memverbs_invoker();
    BEGIN
        {_UNRESTRICTED_ON}
        RETURN QUERY
            SELECT sf.folder_id, CASE WHEN f.owner = me THEN sf.rel_path::text END, sf.slug::text, sf.file_hash, sf.synced_at,
                   CASE WHEN f.owner = me THEN f.root::text END, f.host, f.owner, f.owner = me
            FROM sync_files sf JOIN sync_folders f ON f.id = sf.folder_id
            WHERE f.source_id = want_source AND sf.slug = coalesce(want_slug, sf.slug)
              AND sf.file_hash = coalesce(want_hash, sf.file_hash) AND sf.slug <> ''
              AND (f.owner = me OR NOT EXISTS (SELECT 1 FROM pages p WHERE p.source_id = f.source_id AND p.slug = sf.slug
                                                  AND p.visibility = 'private' AND p.owner IS DISTINCT FROM me));
        {_UNRESTRICTED_OFF}
    END $$;
    -- Whether a page of `want_source` at `want_slug` exists that the calling session may not see: what a
    -- put_page over that slug is refused for (it cannot replace a row it cannot see), asked with the write
    -- lock so a new page's insert need not be read back.
    CREATE FUNCTION memverbs_page_hidden(want_source TEXT, want_slug TEXT) RETURNS BOOLEAN
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    DECLARE
        me BIGINT := memverbs_invoker();
        hidden BOOLEAN;
    BEGIN
        {_UNRESTRICTED_ON}
        SELECT EXISTS (SELECT 1 FROM pages p WHERE p.source_id = want_source AND p.slug = want_slug
                       AND p.visibility = 'private' AND p.owner IS DISTINCT FROM me) INTO hidden;
        {_UNRESTRICTED_OFF}
        RETURN hidden;
    END $$;
    -- The same, for a slug a synced file of the folder `want_folder` (the caller's own) names.
    CREATE FUNCTION memverbs_slug_hidden(want_folder BIGINT, want_slug TEXT) RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
        SELECT coalesce((SELECT memverbs_page_hidden(f.source_id, want_slug) FROM sync_folders f WHERE f.id = want_folder), false)
    $$;
    -- The slug prefixes the brain's synced folders claim, whoever's (a prefix names no note).
    CREATE FUNCTION memverbs_sync_prefixes(want_source TEXT)
    RETURNS TABLE (folder_id BIGINT, slug_prefix TEXT, host TEXT, person BIGINT, mine BOOLEAN)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
    DECLARE
        me BIGINT := memverbs_invoker();
    BEGIN
        {_UNRESTRICTED_ON}
        RETURN QUERY
            SELECT f.id, f.slug_prefix, f.host, f.owner, f.owner = me FROM sync_folders f
            WHERE f.source_id = want_source AND f.mode = 'sync';
        {_UNRESTRICTED_OFF}
    END $$;
"""

# Folders synced before this step belong to whoever owns most of their notes' pages (schema.py): the
# step lifts the pages' policy for its own read, as the tables' owner may.
FOLDER_OWNERS = (
    "ALTER TABLE pages NO FORCE ROW LEVEL SECURITY;" + schema.FOLDER_OWNERS + "ALTER TABLE pages FORCE ROW LEVEL SECURITY;"
)

# A row written without naming its person (a copy from an older memverbs, a script) is the session's
# person's, which is what the policies accept; memverbs itself always names it.
DEFAULTS = """
    ALTER TABLE sync_folders ALTER COLUMN owner SET DEFAULT memverbs_person();
    ALTER TABLE fact_audit ALTER COLUMN by_person SET DEFAULT memverbs_person();
    ALTER TABLE fact_moves ALTER COLUMN by_person SET DEFAULT memverbs_person();
    ALTER TABLE page_versions ALTER COLUMN by_person SET DEFAULT memverbs_person();
"""
