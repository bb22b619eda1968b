"""Smoke runs of the retrieval benchmarks: they keep working and measure real work. Never timing."""

import json

from benchmarks import hybrid_latency, retrieval_quality


def test_hybrid_finds_paraphrases_keyword_search_cannot(capsys):
    assert retrieval_quality.main(["--no-write", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    keyword, hybrid = results["keyword-only"], results["hybrid (test embedder)"]
    assert all(q["degraded"] == "keyword_only_no_embedding_provider" for q in keyword["queries"])
    assert all(q["degraded"] is None for q in hybrid["queries"])
    assert hybrid["paraphrase"]["R@5"] > keyword["paraphrase"]["R@5"]
    assert hybrid["keyword"]["R@5"] == 1.0  # nothing keyword search found is lost


def test_latency_benchmark_finds_every_probe(tmp_path, monkeypatch):
    monkeypatch.setattr(hybrid_latency, "CACHE", tmp_path)
    monkeypatch.setitem(hybrid_latency.SIZES, "smoke", 300)
    assert hybrid_latency.measure("smoke", 32, "build")["build_ms"] > 0
    row = hybrid_latency.measure("smoke", 32, "serve")  # raises if any probe missed its page
    assert row["chunks"] == 300 and row["p50_ms"] > 0
