"""A team on one Postgres, tried through every door: what each person can read of another's private
material, and what each can change of another's rows.

    python -m benchmarks.team_privacy            # a throwaway pgserver; writes its RESULTS.md section
    python -m benchmarks.team_privacy --no-write

Three people on one brain — `owner` (the role that owns the tables: a plain CREATEROLE role, not a
superuser), `bob` and `carol`, each added with `memverbs people add NAME --create-role` and each with
a home of their own logged in as their role — on two hosts (owner and bob on host-a, carol on
host-b: `MEMVERBS_HOST`). Each person writes every kind of private material through their own CLI,
each piece carrying a marker of its kind and its writer (`zz<kind><who>q`):

    fact      a private fact                      page     a private page (its text)
    slug      the private page's slug             version  an earlier text of the private page (its history)
    audit     why a private fact was restored     move     why private facts were refiled
    conflict  the brain's side of a sync conflict of a private note
    folder    a synced folder's path              file     a synced note's file name
    failure   a synced file that fails to apply   token    an access token's name
    fence     a [private] row in a world page's text, and in that page's history

Then every read path each person has (`READ_PATHS`: the verbs through their CLI and through a
read:private token of theirs, the CLI's commands, the inspector over loopback HTTP, an export of the
notes, and plain SQL as their role) is searched for the others' markers: a marker found is a leak.
And every write a person could attempt on another's rows (`WRITES`: plain SQL as their role, and
memverbs's own commands) is tried and checked against the victim's rows as a superuser sees them:
one that changed them outside the team's rules is a foreign write. What the team's rules allow — a
teammate rewriting a world page (the text it replaced kept in the page's history) — is reported as
such, not counted.

The plain SQL row for the `fence` material is the documented exception (docs/postgres.md): a world
page's text is one world row, so a SQL session reads its `[private]` rows whole. memverbs cuts them
on every other path.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import threading
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "support")]

BEGIN, END = "<!-- team-privacy:begin -->", "<!-- team-privacy:end -->"
PEOPLE = ("owner", "bob", "carol")
HOSTS = {"owner": "host-a", "bob": "host-a", "carol": "host-b"}
KINDS = ("fact", "page", "slug", "version", "audit", "move", "conflict", "folder", "file", "failure", "token", "fence")
# Words the seeded material is written with: what a reader searches for (never a marker itself, which
# a view that shows the query would echo back).
PROBES = ("salary", "secret", "private", "synced", "brain", "note", "pay", "world", "team", "first", "edit", "refiled",
          "holds", "bad")
# What a path shows by design: plain SQL reads a world page's text, private rows and all (the module's
# docstring); the owner's login administers every access token (`auth list`, its server checking any
# bearer, `auth create --for` and `auth revoke`), so it reads their names.
BY_DESIGN_KINDS = {("sql", "fence")}
OWNER_ADMINISTERS = {"token"}


def by_design(path: str, kind: str, reader: str) -> bool:
    return (path, kind) in BY_DESIGN_KINDS or (
        reader == "owner" and kind in OWNER_ADMINISTERS and path in ("sql", "CLI commands", "inspector (HTTP)"))


def marker(kind: str, who: str) -> str:
    return f"zz{kind}{who}q"


@dataclass
class Person:
    name: str
    role: str
    url: str
    home: Path
    host: str
    folder: Path

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
        return {**env, "MEMVERBS_HOME": str(self.home), "MEMVERBS_HOST": self.host, "NO_COLOR": "1"}


@dataclass
class Team:
    server: object  # tests/support/postgres.py's PgServer
    db: str
    people: dict[str, Person]
    tmp: Path
    superuser_url: str
    facts: dict[str, list[int]] = field(default_factory=dict)  # each person's private fact ids

    def cli(self, who: str, *args: object, stdin: str | None = None) -> tuple[int, str, str]:
        from runcli import run_cli  # noqa: PLC0415

        done = run_cli(*args, env=self.people[who].env(), stdin=stdin)
        return done.returncode, done.stdout, done.stderr

    def ok(self, who: str, *args: object, stdin: str | None = None) -> str:
        code, out, err = self.cli(who, *args, stdin=stdin)
        if code != 0:
            raise RuntimeError(f"{who}: memverbs {' '.join(map(str, args))} failed ({code}): {err or out}")
        return out

    def call(self, who: str, tool: str, **params: object) -> dict:
        return json.loads(self.ok(who, "call", tool, json.dumps(params)))

    def sql(self, who: str | None, query: str, params: tuple = ()) -> list[tuple]:
        """Plain SQL as `who`'s role (None: a superuser, who sees every row)."""
        import psycopg  # noqa: PLC0415

        url = self.superuser_url if who is None else self.people[who].url
        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []


# -- building the team ------------------------------------------------------------------------


def build(server: object, tmp: Path) -> Team:
    """The brain owned by a plain CREATEROLE role; bob and carol added by the owner's CLI, each with a
    home logged in as their own role."""
    tag = uuid.uuid4().hex[:8]
    roles = {who: f"{who}_{tag}" for who in PEOPLE}
    db = f"team_{tag}"
    server.admin(f'CREATE ROLE "{roles["owner"]}" LOGIN CREATEROLE')  # type: ignore[attr-defined]
    server.admin(f'CREATE DATABASE "{db}" OWNER "{roles["owner"]}" TEMPLATE template0')  # type: ignore[attr-defined]
    people = {
        who: Person(who, roles[who], server.url(db, user=roles[who]), tmp / f"home-{who}", HOSTS[who],  # type: ignore[attr-defined]
                    tmp / HOSTS[who] / f"{who}-{marker('folder', who)}")
        for who in PEOPLE
    }
    team = Team(server, db, people, tmp, server.url(db))  # type: ignore[attr-defined]
    for who in PEOPLE:
        person = people[who]
        person.home.mkdir(parents=True)
        person.folder.mkdir(parents=True)
        team.ok(who, "config", "set", "brain.url", person.url)
        if who == "owner":
            team.ok(who, "init")
            for other in ("bob", "carol"):
                team.ok(who, "people", "add", other, "--role", roles[other], "--create-role")
        else:
            team.ok(who, "init")
    return team


def seed(team: Team) -> None:
    """Each person writes every kind of private material, through their own CLI and synced folder."""
    for who in PEOPLE:
        m = lambda kind, w=who: marker(kind, w)  # noqa: E731
        ids = []
        for text in (f"{who}'s salary is {m('fact')}", f"{who}'s old note {m('fact')} two"):
            ids.append(int(team.call(who, "remember", fact=text, kind="preference", entity=f"{who}-pay",
                                     visibility="private", provenance="team")["id"]))
        team.facts[who] = ids
        # the private page, written twice: its first text is a version in its history
        slug = f"notes/{who}-{m('slug')}"
        team.call(who, "put_page", slug=slug, content=f"---\nvisibility: private\n---\n# {who} private\n\n{m('version')}\n")
        team.call(who, "put_page", slug=slug, content=f"---\nvisibility: private\n---\n# {who} private\n\nsecret {m('page')}\n")
        # a world page with a private row, written twice (its history holds the row too)
        world = f"---\ntitle: {who} world notes\n---\n# {who}\n\nOn the team.\n\n<!-- facts -->\n" \
                f"- [private] pay {m('fence')}\n- public row\n<!-- /facts -->\n"
        team.call(who, "put_page", slug=f"notes/{who}-world", content=world)
        team.call(who, "put_page", slug=f"notes/{who}-world", content=world.replace("On the team.", "On the team, still."))
        # the audit trail and moves of a private fact
        team.call(who, "forget", id=str(ids[1]), reason="test")
        team.ok(who, "restore-fact", ids[1], "--reason", f"it holds {m('audit')}")
        team.ok(who, "move-facts", f"{who}-pay", f"{who}-salary", "--reason", f"refiled {m('move')}")
        team.ok(who, "auth", "create", m("token"), "--scopes", "read,write,read:private")
        _seed_folder(team, who)


def _seed_folder(team: Team, who: str) -> None:
    """A synced folder (on the person's host) with a private note in conflict, and a file that fails."""
    person = team.people[who]
    note = person.folder / f"{marker('file', who)}.md"
    note.write_text(f"---\nvisibility: private\n---\n# {who} synced\n\nfirst\n", encoding="utf-8")
    (person.folder / f"{marker('failure', who)}.md").write_text("---\ntitle: [unclosed\n---\nbad\n", encoding="utf-8")
    team.cli(who, "sync", person.folder, "--prefix", who)  # exit 1: the failing file is an error, as it should be
    slug = f"{who}/{marker('file', who)}"
    team.call(who, "put_page", slug=slug, content=f"---\nvisibility: private\n---\n# {who} synced\n\nbrain {marker('conflict', who)}\n")
    note.write_text(f"---\nvisibility: private\n---\n# {who} synced\n\nthe file's edit\n", encoding="utf-8")
    team.cli(who, "sync", person.folder, "--prefix", who)


# -- reading ------------------------------------------------------------------------------------


def _others_slugs(team: Team, reader: str) -> list[str]:
    slugs = []
    for who in PEOPLE:
        if who != reader:
            slugs += [f"notes/{who}-{marker('slug', who)}", f"notes/{who}-world", f"{who}/{marker('file', who)}"]
    return slugs


def asked(text: str, slug: str) -> str:
    """What a read by slug answered, less the slug (or its last segment) where it echoes the question
    (a "no page with slug …" answer, a search suggested for the name): the asker knew it. Anything else
    the answer holds still counts."""
    return text.replace(slug, "<asked>").replace(slug.rsplit("/", 1)[-1], "<asked>")


def read_verbs(team: Team, reader: str) -> str:
    """The verbs through the reader's CLI (the trusted local caller, private reads included)."""
    out = []
    for word in PROBES:
        out.append(team.cli(reader, "call", "recall", json.dumps({"query": word, "limit": 50, "include_private": True}))[1])
        out.append(team.cli(reader, "call", "search", json.dumps({"query": word}))[1])
    for who in PEOPLE:
        out.append(team.cli(reader, "call", "entity", json.dumps({"name": f"{who}-salary"}))[1])
        out.append(team.cli(reader, "call", "context_pack", json.dumps({"entities": f"{who}-salary,notes/{who}-world",
                                                                         "include_private": True}))[1])
    for slug in _others_slugs(team, reader):
        out.append(asked(team.cli(reader, "call", "get_page", json.dumps({"slug": slug}))[1], slug))
    out.append(team.cli(reader, "call", "list_pages", json.dumps({"limit": 500}))[1])
    out.append(team.cli(reader, "call", "delta", json.dumps({"since": "30d", "include_private": True}))[1])
    out.append(team.cli(reader, "whoami")[1])
    return "\n".join(out)


def read_token(team: Team, reader: str) -> str:
    """The verbs as an MCP caller with a read:private token of the reader's (resolved as the HTTP server
    resolves a bearer, on the owner's server)."""
    from helpers import Client  # noqa: PLC0415

    from memverbs.server import tokens  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    token = team.ok(reader, "auth", "create", f"probe-{uuid.uuid4().hex[:6]}", "--scopes", "read,write,read:private").strip()
    with _env(team.people["owner"].env()):
        runtime = Runtime(Home(team.people["owner"].home))
        try:
            grant = tokens.Grant.from_row(runtime.brain().live_token(tokens.digest(token)))
            client = Client(runtime.mcp_dispatcher("full", grant.caller()))
            out = []
            for word in PROBES:
                out.append(repr(client("recall", query=word, limit=50)))
                out.append(repr(client("search", query=word)))
            for who in PEOPLE:
                out.append(repr(client("entity", name=f"{who}-salary")))
            for slug in _others_slugs(team, reader):
                out.append(asked(repr(client("get_page", slug=slug)), slug))
            out.append(repr(client("delta", since="30d", include_private=True)))
            out.append(repr(client("list_pages", limit=500)))
            return "\n".join(out)
        finally:
            runtime.close()


def read_cli(team: Team, reader: str) -> str:
    """The CLI's own commands: raw pages, history, the fact trail, sync status, tokens, browse views."""
    out = []
    for slug in _others_slugs(team, reader):
        by_slug = [("get-page", slug, "--raw"), ("page-history", slug, "--json"), ("backlinks", slug, "--json"),
                   ("timeline", slug, "--include-expired", "--json"),
                   *(("page-history", slug, "--show", version) for version in (1, 2, 3))]
        out += [asked("\n".join(team.cli(reader, *argv)[1:]), slug) for argv in by_slug]
    last = team.sql(None, "SELECT coalesce(max(id), 0) FROM facts")[0][0]
    for fact_id in range(1, last + 1):
        out.append(team.cli(reader, "history", fact_id, "--json")[1])
    out.append(team.cli(reader, "sync", "--status")[1])
    out.append(team.cli(reader, "sync", "--status", "--json")[1])
    out.append(team.cli(reader, "auth", "list", "--all", "--json")[1])
    out.append(team.cli(reader, "entities", "--json")[1])
    out.append(team.cli(reader, "recall", "--include-expired", "--limit", "500", "--json")[1])
    out.append(team.cli(reader, "doctor")[1])
    return "\n".join(out)


def read_export(team: Team, reader: str) -> str:
    """An export of the notes with private material (the reader's own), every file read back."""
    dest = Path(tempfile.mkdtemp(dir=team.tmp, prefix=f"export-{reader}-"))
    team.cli(reader, "export", dest, "--include-private")
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(dest.rglob("*")) if p.is_file())


def read_inspector(team: Team, reader: str) -> str:
    """The inspector (`memverbs ui`) on loopback HTTP, as the reader's home runs it: every view."""
    import httpx  # noqa: PLC0415

    from memverbs.ui.app import InspectorApp  # noqa: PLC0415
    from memverbs.ui.server import InspectorServer  # noqa: PLC0415

    with _env(team.people[reader].env()):
        app = InspectorApp()
        app.brain()
        server = InspectorServer(("127.0.0.1", 0), app, uuid.uuid4().hex)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            base = server.url.split("/?", 1)[0]
            with httpx.Client(base_url=base, timeout=30, follow_redirects=False) as http:
                http.get("/", params={"token": server.token})  # redeems the URL's token: the session cookie is kept
                out = []
                for slug in _others_slugs(team, reader):
                    q = urllib.parse.quote(slug, safe="/")
                    for path in (f"/page/{q}", f"/edit/{q}", f"/history/{q}", *(f"/history/{q}?v={v}" for v in (1, 2, 3)),
                                 f"/entity/{q}"):
                        out.append(asked(http.get(path).text, slug))
                paths = ["/timeline", "/entities", "/conflicts", "/api/feed", "/access", "/health"]
                last = team.sql(None, "SELECT coalesce(max(id), 0) FROM facts")[0][0]
                paths += [f"/fact/{i}" for i in range(1, last + 1)]
                conflicts = team.sql(None, "SELECT coalesce(max(id), 0) FROM sync_conflicts")[0][0]
                paths += [f"/conflict/{i}" for i in range(1, conflicts + 1)]
                paths += [f"/search?q={word}" for word in PROBES]
                return "\n".join(out + [http.get(p).text for p in paths])
        finally:
            server.shutdown()
            server.server_close()
            app.close()


SQL_TABLES = ("pages", "facts", "links", "timeline", "aliases", "chunks", "page_versions", "fact_vectors", "fact_moves",
              "fact_audit", "session_cursors", "projects", "sync_folders", "sync_files", "sync_conflicts", "sync_failures",
              "access_tokens", "people", "fact_totals", "text_vectors", "vector_spaces")


def read_sql(team: Team, reader: str) -> str:
    """Every row plain SQL as the reader's role reads, from every table it is granted, and what the
    sync claims function answers it."""
    out = []
    for table in SQL_TABLES:
        out.append(repr(team.sql(reader, f"SELECT * FROM {table}")))
    out.append(repr(team.sql(reader, "SELECT * FROM memverbs_sync_claims('default', NULL, NULL)")))
    out.append(repr(team.sql(reader, "SELECT * FROM memverbs_sync_prefixes('default')")))
    return "\n".join(out)


READ_PATHS: dict[str, Callable[[Team, str], str]] = {
    "verbs (CLI)": read_verbs,
    "verbs (read:private token)": read_token,
    "CLI commands": read_cli,
    "inspector (HTTP)": read_inspector,
    "export of notes": read_export,
    "sql": read_sql,
}


@dataclass
class Leaks:
    """{read path: {kind: how many (reader, other person) pairs reached the other's marker of that kind}},
    what of it is by design, and where each leak was seen (a few characters around it)."""

    counts: dict[str, dict[str, int]]
    designed: dict[str, dict[str, int]]
    seen: list[str]

    @property
    def total(self) -> int:
        return sum(n for counts in self.counts.values() for n in counts.values())


def leaks(team: Team) -> Leaks:
    found = Leaks({p: dict.fromkeys(KINDS, 0) for p in READ_PATHS}, {p: dict.fromkeys(KINDS, 0) for p in READ_PATHS}, [])
    for reader in PEOPLE:
        for path, read in READ_PATHS.items():
            text = read(team, reader)
            for who in PEOPLE:
                if who == reader:
                    continue
                for kind in KINDS:
                    at = text.find(marker(kind, who))
                    if at < 0:
                        continue
                    if by_design(path, kind, reader):
                        found.designed[path][kind] += 1
                    else:
                        found.counts[path][kind] += 1
                        found.seen.append(f"{reader} via {path}: …{text[max(0, at - 120):at + 40]!r}…")
    return found


# -- writing --------------------------------------------------------------------------------------


@dataclass
class WriteResult:
    name: str
    attempts: int = 0
    refused: int = 0  # an error, or nothing matched
    allowed: int = 0  # what the team's rules allow, with its trail (said in `note`)
    foreign: int = 0  # another person's rows changed outside the rules
    note: str = ""


def _snapshot(team: Team, victim: str) -> str:
    """Everything of the victim's as a superuser reads it (the rows a write could touch)."""
    pid = 1 if victim == "owner" else team.sql(None, "SELECT id FROM people WHERE name = %s", (victim,))[0][0]
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
        for attacker in PEOPLE:
            for victim in PEOPLE:
                if victim == attacker:
                    continue
                pid = 1 if victim == "owner" else team.sql(None, "SELECT id FROM people WHERE name = %s", (victim,))[0][0]
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
    for attacker in PEOPLE:
        for victim in PEOPLE:
            if victim == attacker:
                continue
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
        ("settle another's conflict", lambda a, v: ("sync", "--resolve", f"#{_conflict(team, v)}", "--keep", "brain")),
        ("new [private] rows in another's world page",
         lambda a, v: ("call", "put_page", json.dumps({"slug": f"notes/{v}-world", "content": "# x\n\n<!-- facts -->\n- [private] mine\n<!-- /facts -->\n"}))),
        ("auth revoke another's token", lambda a, v: ("auth", "revoke", marker("token", v))),
    )
    for name, args in checks:
        result = WriteResult(name)
        for attacker in PEOPLE:
            for victim in PEOPLE:
                if victim == attacker:
                    continue
                argv = args(attacker, victim)  # first: finding a target may write the victim's rows
                before = _snapshot(team, victim)
                result.attempts += 1
                team.cli(attacker, *argv)
                _tally(result, attacker, victim, changed=_snapshot(team, victim) != before)
        results.append(result)
    return results


def _world_fact(team: Team, who: str) -> int:
    pid = 1 if who == "owner" else team.sql(None, "SELECT id FROM people WHERE name = %s", (who,))[0][0]
    rows = team.sql(None, "SELECT id FROM facts WHERE owner = %s AND visibility = 'world' ORDER BY id LIMIT 1", (pid,))
    if rows:
        return int(rows[0][0])
    return int(team.call(who, "remember", fact=f"{who} shares a world fact", provenance="team")["id"])


def _conflict(team: Team, who: str) -> int:
    pid = 1 if who == "owner" else team.sql(None, "SELECT id FROM people WHERE name = %s", (who,))[0][0]
    rows = team.sql(None, "SELECT c.id FROM sync_conflicts c JOIN sync_folders f ON f.id = c.folder_id WHERE f.owner = %s "
                          "AND c.resolved_at IS NULL ORDER BY c.id LIMIT 1", (pid,))
    return int(rows[0][0]) if rows else 0


def writes(team: Team) -> list[WriteResult]:
    return [*try_sql_writes(team), try_world_rewrite(team), *try_cli_writes(team)]


# -- the run ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def _env(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def table(found: Leaks, results: list[WriteResult]) -> str:
    pairs = len(PEOPLE) * (len(PEOPLE) - 1)
    head = "| read path | " + " | ".join(KINDS) + " |\n|---|" + "---|" * len(KINDS) + "\n"
    rows = "".join(
        f"| {path} | " + " | ".join(
            str(n) + (f" (+{found.designed[path][kind]} by design)" if found.designed[path][kind] else "")
            for kind, n in counts.items()
        ) + " |\n"
        for path, counts in found.counts.items()
    )
    writes_head = ("| write attempted on another person's rows | attempts | refused | allowed (a team rule) | foreign |\n"
                   "|---|---|---|---|---|\n")
    writes_rows = "".join(f"| {r.name}{' — ' + r.note if r.note else ''} | {r.attempts} | {r.refused} | {r.allowed} | {r.foreign} |\n"
                          for r in results)
    foreign = sum(r.foreign for r in results)
    return (f"Each cell: of the {pairs} (reader, other person) pairs, how many found the other's marker of that kind.\n\n"
            + head + rows + f"\n**Leaks: {found.total}.**\n\n" + writes_head + writes_rows
            + f"\n**Foreign writes: {foreign}** of {sum(r.attempts for r in results)} attempts.\n")


def run(server: object, tmp: Path) -> tuple[Leaks, list[WriteResult]]:
    team = build(server, tmp)
    seed(team)
    return leaks(team), writes(team)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print the tables; do not touch RESULTS.md")
    args = parser.parse_args()
    from postgres import _configure, start_pgserver  # noqa: PLC0415

    server = start_pgserver()
    if server is None:
        print("no pgserver wheel on this machine", file=sys.stderr)
        return 1
    try:
        _configure(server)
        with tempfile.TemporaryDirectory() as tmp:
            found, results = run(server, Path(tmp))
    finally:
        server.stop()  # type: ignore[operator]
    text = table(found, results)
    print(text)
    if not args.no_write:
        from benchmarks.results_file import replace_section  # noqa: PLC0415

        replace_section(BEGIN, END, "## A team on one Postgres: every door\n\n" + text)
    for line in found.seen:
        print(line, file=sys.stderr)
    return 1 if found.total or any(r.foreign for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())

