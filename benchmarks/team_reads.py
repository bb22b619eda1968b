"""Every read path a person of the team has, searched for the other people's private material
(benchmarks/team_privacy.py): the verbs through their CLI and a read:private token of theirs, the CLI's
commands, the inspector over loopback HTTP, an export of the notes, and plain SQL as their role.
"""

from __future__ import annotations

import json
import tempfile
import threading
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.team import KINDS, PEOPLE, PROBES, Team, by_design, env_of, marker


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
    with env_of(team.people["owner"].env()):
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

    with env_of(team.people[reader].env()):
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
