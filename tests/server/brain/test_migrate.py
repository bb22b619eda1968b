"""`memverbs migrate --to`: a brain grown through the verbs copies to Postgres and back, verified, resumably,
with the source untouched."""

from __future__ import annotations

import hashlib
import json

import pytest
from helpers import Client, page
from provider_fakes import hashing_runtime

from memverbs.cli.main import main
from memverbs.server.brain.factory import open_brain
from memverbs.server.brain.location import BrainLocation
from memverbs.server.brain.stores import copied as declared
from memverbs.server.brain.transfer import transfer
from memverbs.server.home import Home
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import now_ms


@pytest.fixture
def brain_backend() -> str:
    return "sqlite"  # the source; the targets are Postgres databases and SQLite files made here


@pytest.fixture
def grown(home):
    """A brain with every kind of row: pages (aliases, links, timeline), facts with a supersession,
    private ones, vectors, a token and a delta cursor."""
    rt = hashing_runtime(home)
    local = Client(rt.local_dispatcher())
    page(local, "people/alice", "Alice Example", body="Alice runs payments. See [[projects/atlas]].\n\n## Timeline\n- 2026-01-02: joined",
         aliases=["Ali"])
    page(local, "projects/atlas", "Atlas", body="The payments rewrite, first draft.")
    page(local, "projects/atlas", "Atlas", body="The payments rewrite, with café notes.")  # the draft goes to the history
    page(local, "notes/secret", "Secret", body="private plans", visibility="private")
    local.ok("remember", fact="Alice prefers tea", provenance="chat", entity="people/alice", kind="preference")
    assert local.ok("remember", fact="Alice likes tea", provenance="chat", entity="people/alice", kind="preference")["status"] == "superseded"
    local.ok("remember", fact="Alice is allergic to nuts", provenance="chat", entity="people/alice", visibility="private")
    local.ok("delta", session_id="s-1")
    brain = rt.brain()
    from memverbs.server import tokens

    brain.create_token(name="team", token_hash=tokens.digest("x"), token_hint="mvb_x", scopes="read", surface="verbs",
                       source_id="default", client_id="token:team", now=now_ms())
    rt.close()
    return home


def file_hash(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_copy_to_postgres_and_back_is_lossless_and_leaves_the_source_alone(grown, pg_servers, tmp_path, monkeypatch, capsys):
    server = pg_servers.get("pgvector") or pg_servers.get("plain")
    if server is None:
        pytest.skip("no Postgres server on this machine")
    src = grown.root / "brain.db"
    before = file_hash(src)
    url = server.new_database(empty=True)
    try:
        assert main(["migrate", "--to", url, "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["ok"] and all(t["ok"] for t in report["verify"])
        rows = {t["table"]: t["source_rows"] for t in report["verify"]}
        assert (rows["facts"], rows["page_versions"]) == (3, 1)
        assert file_hash(src) == before  # the source is only read

        # The copy answers like the source, through the verbs.
        def answers(env_url):
            if env_url:
                monkeypatch.setenv("MEMVERBS_BRAIN__URL", env_url)
            else:
                monkeypatch.delenv("MEMVERBS_BRAIN__URL", raising=False)
            rt = hashing_runtime(Home(grown.root))
            local = Client(rt.local_dispatcher())
            card = local.ok("entity", name="Ali", include_private=True)
            card.pop("latency_ms")
            out = (
                card,
                local.ok("recall", entity="people/alice", include_private=True)["facts"],
                [r["slug"] for r in local.ok("recall", query="payments rewrite")["results"]],
                [dict(rt.brain().page_version("default", "projects/atlas", r["version"])) for r in
                 rt.brain().page_versions("default", "projects/atlas")],
            )
            later = local.ok("remember", fact="Alice moved to Lisbon", provenance="chat", entity="people/alice")
            rt.close()
            return out, int(later["id"])

        on_sqlite, _ = answers(None)
        on_postgres, new_id = answers(url)
        assert on_postgres == on_sqlite
        assert new_id == 4  # ids continue after the copied ones

        # ... and back to a new SQLite file.
        back = tmp_path / "back.db"
        assert main(["migrate", "--to", f"sqlite:///{back}", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["ok"]
    finally:
        server.drop_database(url)


def test_an_interrupted_copy_resumes_and_verifies(grown, tmp_path):
    source = open_brain(BrainLocation("sqlite", path=grown.root / "brain.db"), read_only=True)
    target_at = BrainLocation("sqlite", path=tmp_path / "target.db")
    target = open_brain(target_at, create=True)

    class Cut(Exception):
        pass

    def cut_after_facts(stage, done, total):
        if stage == "copying session_cursors":
            raise Cut

    with pytest.raises(Cut):
        transfer(source, target, progress=cut_after_facts)
    with pytest.raises(Exception, match="not empty"):
        transfer(source, target)  # a second plain copy would duplicate: refused
    report = transfer(source, target, resume=True)
    assert report.ok, report.as_dict()
    assert set(report.copied) == {t.name for t in declared()}
    assert report.copied["pages"] == 0 and report.copied["access_tokens"] == 1  # nothing copied twice
    source.close()
    target.close()


def test_a_mismatch_fails_the_verify(grown, tmp_path):
    source = open_brain(BrainLocation("sqlite", path=grown.root / "brain.db"), read_only=True)
    target = open_brain(BrainLocation("sqlite", path=tmp_path / "t.db"), create=True)
    assert transfer(source, target).ok
    with target.write() as db:
        db.execute("UPDATE facts SET fact = 'tampered' WHERE id = 1")
    from memverbs.server.brain.transfer import _Side, table_hash

    facts = next(t for t in declared() if t.name == "facts")
    assert table_hash(_Side(source), facts) != table_hash(_Side(target), facts)
    source.close()
    target.close()


def test_migrate_refuses_the_same_brain_and_a_missing_one(home, capsys, monkeypatch):
    assert main(["migrate", "--to", str(home.root / "brain.db")]) == 1
    assert "same brain" in capsys.readouterr().err
    monkeypatch.setenv("MEMVERBS_BRAIN__PATH", "nothing-here.db")
    assert main(["migrate", "--to", "sqlite:///elsewhere.db"]) == 1
    assert "nothing to copy" in capsys.readouterr().err
    assert Runtime(home).settings is not None
