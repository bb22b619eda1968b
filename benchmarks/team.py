"""The team benchmarks/team_privacy.py tries every door of: three people on one Postgres, two hosts,
each person's private material written through their own CLI and synced folder (`build`, `seed`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "support")]

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

    def person_id(self, who: str) -> int:
        """The person's id in the brain (the owner is person 1, not a row)."""
        return 1 if who == "owner" else int(self.sql(None, "SELECT id FROM people WHERE name = %s", (who,))[0][0])

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


@contextlib.contextmanager
def env_of(env: dict[str, str]) -> Iterator[None]:
    """This process's environment as `env` for the block: what a person's process would see (their home,
    their host), for the parts that read it once (a runtime, the inspector's app)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
