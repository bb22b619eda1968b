"""`memverbs reindex`: embeds what is missing, shows progress on stderr, resumes, and fails with a fix."""

import json

import respx
from helpers import page
from provider_fakes import EMBED_BASE, PROVIDER_SECRET, embeddings_env, hashing_embeddings, provider_error
from runcli import run_cli

from memverbs.cli.main import main


def seed(local) -> None:
    page(local, "notes/deploy-freeze", "Deploy freeze", body="We never ship releases on Fridays.")
    page(local, "companies/acme", "Acme Payments", body="Acme runs the payments platform.")
    local.ok("remember", fact="Alice prefers tea", provenance="chat", entity="people/alice")
    local.ok("forget", id=local.ok("remember", fact="Old news", provenance="chat")["id"])


@respx.mock
def test_reindex_embeds_what_is_missing_then_nothing(local, monkeypatch, capsys):
    seed(local)
    embeddings_env(monkeypatch)
    route = respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=hashing_embeddings)

    assert main(["reindex", "--json"]) == 0
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert report["chunks_embedded"] == 2 and report["facts_embedded"] == 1  # the forgotten fact is not embedded
    assert report["dims"] == 256 and report["model"] == "test-embed" and report["provider"] == "openai"
    assert "embedding chunks" in out.err and "100%" in out.err
    calls = route.call_count

    assert main(["reindex"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("embedded 0 chunks and 0 facts with openai/test-embed")
    assert route.call_count == calls

    # The vectors are what hybrid recall and dedup now use.
    hit = local.ok("recall", query="deploy freeze")["results"][0]
    assert hit["slug"] == "notes/deploy-freeze"


@respx.mock
def test_prune_drops_unused_and_other_model_vectors(local, monkeypatch, capsys):
    seed(local)
    embeddings_env(monkeypatch, model="old-model")
    respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=hashing_embeddings)
    assert main(["reindex"]) == 0
    page(local, "notes/deploy-freeze", "Deploy freeze", body="Edited: releases wait until Monday.")  # old vector now unused
    embeddings_env(monkeypatch, model="new-model")
    capsys.readouterr()
    assert main(["reindex", "--prune", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["chunks_embedded"] == 2 and report["facts_embedded"] == 1
    assert report["pruned"] == {"orphan_vectors": 1, "other_model_vectors": 2}


@respx.mock
def test_a_rejected_key_stops_with_the_fix_and_no_traceback(local, monkeypatch, capsys):
    seed(local)
    embeddings_env(monkeypatch)
    respx.post(f"{EMBED_BASE}/embeddings").mock(return_value=provider_error(401))
    assert main(["reindex"]) == 1
    err = capsys.readouterr().err
    assert "rejected the API key (HTTP 401)" in err and "MEMVERBS_EMBEDDINGS_API_KEY" in err
    assert "run `memverbs reindex` again" in err and PROVIDER_SECRET not in err and "Traceback" not in err


@respx.mock
def test_rate_limits_are_retried(local, monkeypatch, capsys):
    seed(local)
    embeddings_env(monkeypatch)
    monkeypatch.setattr("time.sleep", lambda s: None)  # the retry's backoff, not memverbs logic
    route = respx.post(f"{EMBED_BASE}/embeddings")
    route.side_effect = [provider_error(429), provider_error(429), hashing_embeddings, hashing_embeddings]
    assert main(["reindex", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["chunks_embedded"] == 2


def test_without_a_provider_it_says_how_to_configure_one(env):
    proc = run_cli("reindex", env=env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "nothing to embed with" in proc.stderr and "embeddings.model" in proc.stderr
    assert "Traceback" not in proc.stderr
