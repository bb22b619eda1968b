"""Smoke runs of the retrieval benchmarks: they keep working and measure real work. Never timing."""

import json

import pytest

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


def test_conversation_benchmark_skips_cleanly_without_its_data(tmp_path, capsys):
    from benchmarks import retrieval_conversations

    assert retrieval_conversations.main(["--data", str(tmp_path / "absent"), "--no-write"]) == 0
    assert "skipped" in capsys.readouterr().out


@pytest.mark.e2e  # a benchmark run over MCP stdio
def test_conversation_benchmark_remembers_turns_and_recalls_them_over_stdio(tmp_path, capsys):
    """A two-session conversation in LoCoMo's shape, made here: the real data is never needed by a test."""
    from benchmarks import retrieval_conversations

    conv = {
        "speaker_a": "Ann", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex"},
                      {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! I started rock climbing"}],
        "session_2_date_time": "10:00 am on 2 June, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Rex chewed my shoes", "blip_caption": "a dog"},
                      {"speaker": "Ben", "dia_id": "D2:2", "text": "Climbing gym was packed today"}],
        "qa": [{"question": "What is the name of Ann's puppy?", "answer": "Rex", "evidence": ["D1:1"], "category": 4},
               {"question": "What sport did Ben start?", "answer": "rock climbing", "evidence": ["D1:2"], "category": 4},
               {"question": "Is this answerable?", "evidence": [], "category": 5}],
    }
    data = tmp_path / "locomo"
    data.mkdir()
    (data / "1.json").write_text(json.dumps(conv), encoding="utf-8")
    args = ["--data", str(data), "--modes", "keyword", "--latency-facts", "8", "--json", "--no-write"]
    assert retrieval_conversations.main(args) == 0
    result = json.loads(capsys.readouterr().out)["results"]["keyword-only"]
    assert result["questions"] == 2 and result["facts"] == 4
    assert result["turn_r5"] == 1.0 and result["session_r5"] == 1.0
    assert result["scale"]["facts"] >= 8 and result["latency"]["n"] == 2


def test_recall_latency_benchmark_grows_a_brain_and_times_recall_both_ways(tmp_path, monkeypatch):
    """benchmarks/recall_latency.py on a made-up two-turn conversation: it builds, and both ways answer every probe."""
    from benchmarks import recall_latency

    conv = {"session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex"},
                          {"speaker": "Ben", "dia_id": "D1:2", "text": "I started rock climbing"}],
            "qa": [{"question": "What is the name of Ann's puppy?", "evidence": ["D1:1"], "category": 4}]}
    data = tmp_path / "locomo"
    data.mkdir()
    (data / "1.json").write_text(json.dumps(conv), encoding="utf-8")
    monkeypatch.setattr(recall_latency, "WARMUP", 1)
    home = tmp_path / "home"
    monkeypatch.setenv("MEMVERBS_HOME", str(home))
    assert recall_latency.build(home, 4, data) == 4
    inside = recall_latency.op_layer(home, False, data)
    assert inside["wall"]["n"] == 1 and inside["cpu"]["n"] == 1
    env = recall_latency._env(home)
    assert recall_latency.over_stdio(home, env, data)["wall"]["n"] == 1
