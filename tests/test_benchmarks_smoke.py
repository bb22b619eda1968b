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


def test_fault_benchmarks_lose_nothing_and_hooks_stay_silent(tmp_path):
    from benchmarks import faults

    durability = faults.kill_durability(faults._fresh_home(tmp_path / "kills"), kills=2, writes=60)
    assert durability["lost"] == 0 and durability["integrity_check"] == "ok"
    assert durability["by_victim"] == {"server": 1, "cli_writer": 1} and durability["acknowledged"] > 0
    rows = faults.hooks_under_faults(tmp_path / "hooks", runs=1)
    assert [r["fault"] for r in rows][1:] == ["locked", "locked", "missing", "corrupt"]
    assert all(r["exit_codes"] == [0] and r["stdout_empty"] and r["tracebacks"] == 0 for r in rows)
    assert [next(iter(r["codes"])) for r in rows][3:] == ["no_brain", "brain_corrupt"]


def test_percentile_definition():
    samples = [float(i) for i in range(1, 101)]
    assert verbs.percentiles(samples)["p99_ms"] == 99.0 and verbs.percentiles(samples)["p50_ms"] == 50.0
