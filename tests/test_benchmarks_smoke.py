"""A smoke-sized run of every benchmark: they keep working, and each measured call did real work.

Never timing: the benchmarks themselves raise when a call did no work (a pack
without its 8 cards, a delta without its 50 pages, a hook that printed nothing).
"""

import pytest

from benchmarks import concurrency, corpus, startup, verbs
from memverbs.server.timeparse import now_ms


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    home = tmp_path_factory.mktemp("bench") / "home"
    home.mkdir()
    corpus.seed(home / "brain.db", corpus.SIZES["smoke"], now_ms())
    return home


def test_verb_benchmarks_do_real_work(smoke, tmp_path):
    import shutil

    shutil.copy2(smoke / "brain.db", tmp_path / "brain.db")
    results = verbs.run_verbs(tmp_path)
    assert {"entity", "context_pack", "delta", "recall_entity", "recall_query", "remember_rate"} <= set(results)
    assert results["entity"]["n"] == 200 and results["context_pack"]["n"] == 100
    assert results["remember_rate"]["facts_per_s"] > 0


def test_startup_benchmarks_do_real_work(smoke):
    server = startup.server_cold_start(smoke, runs=1)
    assert server["first_tool_result"]["median_s"] > 0 and server["peak_rss_mb"] > 0
    assert startup.hook_wall(smoke, "session-start", runs=2)["output_chars"] > 0
    assert startup.hook_wall(smoke, "heartbeat", runs=2)["output_chars"] > 0


def test_concurrency_benchmark_loses_nothing(smoke):
    result = concurrency.writers(smoke, 25, n_mcp=1, n_cli=2)
    assert result["stored"] == result["acknowledged"] == 75 and result["errors"] == 0
    assert concurrency.kill_mid_stream(smoke, count=2000)["lost"] == 0


def test_percentile_definition():
    samples = [float(i) for i in range(1, 101)]
    assert verbs.percentiles(samples)["p99_ms"] == 99.0 and verbs.percentiles(samples)["p50_ms"] == 50.0
