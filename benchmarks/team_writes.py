"""Every write a person of the team could attempt on another's rows (benchmarks/team_privacy.py): plain
SQL as their role, and memverbs's own commands, each checked against the victim's rows as a superuser
reads them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.team import PEOPLE, Team, marker


@dataclass
class WriteResult:
    name: str
    attempts: int = 0
    refused: int = 0  # an error, or nothing matched
    allowed: int = 0  # what the team's rules allow, with its trail (said in `note`)
    foreign: int = 0  # another person's rows changed outside the rules
    note: str = ""


def pairs() -> list[tuple[str, str]]:
    """(attacker, victim): every ordered pair of two people."""
    return [(a, v) for a in PEOPLE for v in PEOPLE if a != v]


def _snapshot(team: Team, victim: str) -> str:
    """Everything of the victim's as a superuser reads it (the rows a write could touch)."""
    pid = team.person_id(victim)
    parts = [
        team.sql(None, "SELECT id, slug, owner, visibility, body, markdown, deleted_at FROM pages WHERE owner = %s ORDER BY id", (pid,)),
        team.sql(None, "SELECT id, fact, owner, visibility, expired_at, entity_slug FROM facts WHERE owner = %s ORDER BY id", (pid,)),
        team.sql(None, "SELECT * FROM sync_folders WHERE owner = %s ORDER BY id", (pid,)),
        team.sql(None, "SELECT sf.* FROM sync_files sf JOIN sync_folders f ON f.id = sf.folder_id WHERE f.owner = %s "
                       "ORDER BY 1, 2", (pid,)),
        team.sql(None, "SELECT c.id, c.brain_content, c.resolved_at FROM sync_conflicts c JOIN sync_folders f ON f.id = c.folder_id "
                       "WHERE f.owner = %s ORDER BY 1", (pid,)),
        team.sql(None, "SELECT * FROM sync_failures sf JOIN sync_folders f ON f.id = sf.folder_id WHERE f.owner = %s ORDER BY 1, 2", (pid,)),
        team.sql(None, "SELECT a.* FROM fact_audit a JOIN facts f ON f.id = a.fact_id WHERE f.owner = %s ORDER BY a.id", (pid,)),
        team.sql(None, "SELECT m.* FROM fact_moves m JOIN facts f ON f.id = m.fact_id WHERE f.owner = %s ORDER BY m.id", (pid,)),
        team.sql(None, "SELECT v.id, v.markdown FROM page_versions v JOIN pages p ON p.id = v.page_id WHERE p.owner = %s "
                       "ORDER BY v.id", (pid,)),
        team.sql(None, "SELECT l.* FROM links l JOIN pages p ON p.slug = l.from_slug WHERE p.owner = %s ORDER BY l.id", (pid,)),
        team.sql(None, "SELECT t.* FROM timeline t JOIN pages p ON p.slug = t.slug WHERE p.owner = %s ORDER BY t.id", (pid,)),
        team.sql(None, "SELECT id, name, scopes, person, revoked_at FROM access_tokens WHERE person = %s ORDER BY id", (pid,)),
    ]
    return repr(parts)


# (name, SQL the attacker runs, with {victim} the victim's person id and {world} the id of their world page)
SQL_WRITES: tuple[tuple[str, str], ...] = (
    ("take a world page private as one's own", "UPDATE pages SET visibility = 'private', owner = memverbs_person() WHERE id = {world}"),
    ("give one's page to another", "UPDATE pages SET owner = {victim} WHERE owner = memverbs_person()"),
    ("change a world page's owner", "UPDATE pages SET owner = memverbs_person() WHERE id = {world}"),
    ("delete a world page", "DELETE FROM pages WHERE id = {world}"),
    ("insert a page in another's name", "INSERT INTO pages (source_id, slug, slug_rev, body, visibility, created_at, updated_at, owner) "
                                        "VALUES ('default', 'forged/{victim}', '', 'x', 'world', 0, 0, {victim})"),
    ("insert a fact in another's name", "INSERT INTO facts (source_id, fact, fact_norm, kind, visibility, provenance, valid_from, "
                                        "created_at, owner) VALUES ('default', 'forged', 'forged', 'fact', 'world', 'p', 0, 0, {victim})"),
    ("rewrite what a world fact says", "UPDATE facts SET fact = 'rewritten' WHERE owner = {victim} AND visibility = 'world'"),
    ("take a world fact private", "UPDATE facts SET visibility = 'private', owner = memverbs_person() "
                                  "WHERE owner = {victim} AND visibility = 'world'"),
    ("forget a fact without a reason", "UPDATE facts SET expired_at = 1 WHERE owner = {victim} AND expired_at IS NULL"),
    ("change or delete private facts", "UPDATE facts SET fact = 'x' WHERE owner = {victim}; DELETE FROM facts WHERE owner = {victim}"),
    ("delete another's audit rows", "DELETE FROM fact_audit"),
    ("rewrite audit rows", "UPDATE fact_audit SET reason = 'rewritten'"),
    ("forge an audit row in another's name", "INSERT INTO fact_audit (fact_id, action, reason, actor, at, by_person) "
                                             "SELECT id, 'restored', 'forged', 'x', 0, {victim} FROM facts LIMIT 1"),
    ("delete or rewrite moves", "DELETE FROM fact_moves; UPDATE fact_moves SET reason = 'x'"),
    ("prune a page's newest history", "DELETE FROM page_versions"),
    ("add rows to another's private page", "INSERT INTO links (source_id, from_slug, to_slug, link_type, link_source, created_at, owner) "
                                           "SELECT 'default', slug, 'x', 'l', 'manual', 0, {victim} FROM pages"),
    ("forge private rows on a world page", "INSERT INTO timeline (source_id, slug, date, summary, origin, created_at, private_row, owner) "
                                           "VALUES ('default', (SELECT slug FROM pages WHERE id = {world}), '2026-01-01', 'x', "
                                           "'manual', 0, 1, {victim})"),
    ("delete another's sync conflicts", "DELETE FROM sync_conflicts"),
    ("settle another's conflicts", "UPDATE sync_conflicts SET resolved_at = 1"),
    ("delete another's synced files' state", "DELETE FROM sync_files"),
    ("name another's private page in their folder", "INSERT INTO sync_files (folder_id, rel_path, slug, file_hash, size, mtime_ns, "
                                                    "synced_at) SELECT id, 'planted.md', 'notes/x', 'h', 1, 1, 1 FROM sync_folders "
                                                    "WHERE owner = {victim}"),
    ("repoint another's folder", "UPDATE sync_folders SET root = '/tmp/x' WHERE owner = {victim}"),
    ("delete another's failures", "DELETE FROM sync_failures"),
    ("revoke another's tokens", "UPDATE access_tokens SET revoked_at = 1 WHERE person = {victim}"),
    ("mint a token for another", "INSERT INTO access_tokens (name, token_hash, token_hint, scopes, surface, source_id, client_id, "
                                 "created_at, person) VALUES ('forged-{victim}', 'h{victim}', 'h', 'read,read:private', 'full', "
                                 "'default', 'token:forged', 0, {victim})"),
    ("add oneself to the people", "INSERT INTO people (id, name, role, created_at) VALUES (99, 'mallory', NULL, 0)"),
)


def try_sql_writes(team: Team) -> list[WriteResult]:
    import psycopg  # noqa: PLC0415

    results = []
    for name, template in SQL_WRITES:
        result = WriteResult(name)
        for attacker, victim in pairs():
            pid = team.person_id(victim)
            world = team.sql(None, "SELECT id FROM pages WHERE slug = %s", (f"notes/{victim}-world",))[0][0]
            before = _snapshot(team, victim)
            result.attempts += 1
            try:
                with psycopg.connect(team.people[attacker].url) as conn, conn.transaction():
                    for statement in template.format(victim=pid, world=world).split("; "):
                        conn.execute(statement)
            except psycopg.Error:
                pass
            _tally(result, attacker, victim, changed=_snapshot(team, victim) != before)
        results.append(result)
    return results


def _tally(result: WriteResult, attacker: str, victim: str, *, changed: bool) -> None:
    if not changed:
        result.refused += 1
    elif attacker == "owner" and "token" in result.name:
        result.allowed += 1  # the owner's login administers every access token (`auth create --for`, `auth revoke`)
        result.note = "the owner administers every token"
    else:
        result.foreign += 1
        result.note = f"{attacker} changed {victim}'s rows"


def try_world_rewrite(team: Team) -> WriteResult:
    """A teammate rewriting another's world page (the team's rule: allowed), through plain SQL: the text
    it replaced must be in the page's history, whoever did it."""
    import psycopg  # noqa: PLC0415

    result = WriteResult("rewrite a world page's text", note="allowed by the team's rules; the replaced text is kept in its history")
    for attacker, victim in pairs():
        page_id, text = team.sql(None, "SELECT id, coalesce(markdown, body) FROM pages WHERE slug = %s",
                                 (f"notes/{victim}-world",))[0]
        result.attempts += 1
        try:
            with psycopg.connect(team.people[attacker].url) as conn, conn.transaction():
                conn.execute("UPDATE pages SET body = 'vandalised', markdown = 'vandalised' WHERE id = %s", (page_id,))
        except psycopg.Error:
            result.refused += 1
            continue
        kept = team.sql(None, "SELECT 1 FROM page_versions WHERE page_id = %s AND markdown = %s", (page_id, text))
        if kept:
            result.allowed += 1
        else:
            result.foreign += 1
        with psycopg.connect(team.superuser_url) as conn, conn.transaction():  # the victim's text back, for the next
            conn.execute("UPDATE pages SET body = %s, markdown = %s WHERE id = %s", (text, text, page_id))
    return result


def try_cli_writes(team: Team) -> list[WriteResult]:
    """memverbs's own commands aimed at another person's rows."""
    results = []
    checks: tuple[tuple[str, Callable[[str, str], tuple[object, ...]]], ...] = (
        ("put-page private over another's world page",
         lambda a, v: ("call", "put_page", json.dumps({"slug": f"notes/{v}-world", "content": "---\nvisibility: private\n---\n# mine\n"}))),
        ("fact-visibility on another's world fact", lambda a, v: ("fact-visibility", _world_fact(team, v), "private")),
        ("forget another's private fact", lambda a, v: ("call", "forget", json.dumps({"id": str(team.facts[v][0]), "reason": "x"}))),
        ("restore-fact on another's private fact", lambda a, v: ("restore-fact", team.facts[v][1], "--reason", "x")),
        ("put-page over another's private page",
         lambda a, v: ("call", "put_page", json.dumps({"slug": f"notes/{v}-{marker('slug', v)}", "content": "# mine\n"}))),
        ("settle another's conflict", lambda a, v: ("sync", "--resolve", f"#{conflict_of(team, v)}", "--keep", "brain")),
        ("new [private] rows in another's world page",
         lambda a, v: ("call", "put_page", json.dumps({"slug": f"notes/{v}-world", "content": "# x\n\n<!-- facts -->\n- [private] mine\n<!-- /facts -->\n"}))),
        ("auth revoke another's token", lambda a, v: ("auth", "revoke", marker("token", v))),
    )
    for name, args in checks:
        result = WriteResult(name)
        for attacker, victim in pairs():
            argv = args(attacker, victim)  # first: finding a target may write the victim's rows
            before = _snapshot(team, victim)
            result.attempts += 1
            team.cli(attacker, *argv)
            _tally(result, attacker, victim, changed=_snapshot(team, victim) != before)
        results.append(result)
    return results


def _world_fact(team: Team, who: str) -> int:
    pid = team.person_id(who)
    rows = team.sql(None, "SELECT id FROM facts WHERE owner = %s AND visibility = 'world' ORDER BY id LIMIT 1", (pid,))
    if rows:
        return int(rows[0][0])
    return int(team.call(who, "remember", fact=f"{who} shares a world fact", provenance="team")["id"])


def conflict_of(team: Team, who: str) -> int:
    pid = team.person_id(who)
    rows = team.sql(None, "SELECT c.id FROM sync_conflicts c JOIN sync_folders f ON f.id = c.folder_id WHERE f.owner = %s "
                          "AND c.resolved_at IS NULL ORDER BY c.id LIMIT 1", (pid,))
    return int(rows[0][0]) if rows else 0


def writes(team: Team) -> list[WriteResult]:
    return [*try_sql_writes(team), try_world_rewrite(team), *try_cli_writes(team)]
