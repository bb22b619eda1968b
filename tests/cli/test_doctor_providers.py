"""`memverbs doctor` on providers: not configured, healthy, bad key, unknown model, unreachable — never a crash."""

import json
import socket

import httpx
import respx
from helpers import page
from provider_fakes import (
    CHAT_BASE,
    EMBED_BASE,
    PROVIDER_SECRET,
    embeddings_env,
    hashing_embeddings,
    llm_env,
    no_keyring,  # noqa: F401 - fixture
    provider_error,
)
from runcli import run_cli

from memverbs.doctor import run_checks


def by_name(home) -> dict:
    return {c.name: c for c in run_checks(home)}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_not_configured_is_fine_and_says_what_is_degraded(home):
    checks = by_name(home)
    assert checks["embeddings"].status == "ok" and "keyword-only" in checks["embeddings"].detail
    assert checks["llm"].status == "ok" and "synthesize answers unavailable" in checks["llm"].detail
    assert checks["embeddings"].fix is None and "vector_index" not in checks


@respx.mock
def test_healthy_providers_and_index_coverage(home, local, monkeypatch):
    page(local, "notes/a", "A", body="alpha")
    embeddings_env(monkeypatch)
    llm_env(monkeypatch)
    respx.post(f"{EMBED_BASE}/embeddings").mock(side_effect=hashing_embeddings)
    respx.get(f"{CHAT_BASE}/v1/models").mock(return_value=httpx.Response(200, json={"data": [{"id": "claude-sonnet-4-5"}]}))
    checks = by_name(home)
    assert checks["embeddings"].status == "ok" and "256 dims (key: env)" in checks["embeddings"].detail
    assert checks["vector_index"].status == "warn" and "1 chunk," in checks["vector_index"].detail
    assert checks["vector_index"].fix == "Run `memverbs reindex`."
    assert checks["llm"].status == "ok" and "model listed" in checks["llm"].detail


@respx.mock
def test_bad_key_and_unknown_model(home, monkeypatch):
    embeddings_env(monkeypatch)
    llm_env(monkeypatch)
    respx.post(f"{EMBED_BASE}/embeddings").mock(return_value=provider_error(401))
    respx.get(f"{CHAT_BASE}/v1/models").mock(return_value=httpx.Response(200, json={"data": [{"id": "claude-other"}]}))
    checks = by_name(home)
    assert checks["embeddings"].status == "fail"
    assert "rejected the API key (HTTP 401)" in checks["embeddings"].detail
    assert "MEMVERBS_EMBEDDINGS_API_KEY" in checks["embeddings"].fix
    assert PROVIDER_SECRET not in checks["embeddings"].detail
    assert checks["llm"].status == "warn" and "not among the 1 models" in checks["llm"].detail


def test_missing_key_for_a_public_api(home, monkeypatch, no_keyring):  # noqa: F811
    embeddings_env(monkeypatch, base_url="", key=None)
    llm_env(monkeypatch, key=None)
    monkeypatch.setenv("MEMVERBS_LLM__BASE_URL", "")
    checks = by_name(home)
    assert checks["embeddings"].status == "fail" and "no API key" in checks["embeddings"].detail
    assert checks["embeddings"].fix.startswith("export MEMVERBS_EMBEDDINGS_API_KEY=")
    assert checks["llm"].status == "fail" and "keyring set memverbs llm_api_key" in checks["llm"].fix


def test_unreachable_providers_are_problems_with_fixes(env):
    port = closed_port()
    env.update(
        {
            "MEMVERBS_EMBEDDINGS__MODEL": "nomic-embed-text",
            "MEMVERBS_EMBEDDINGS__BASE_URL": f"http://127.0.0.1:{port}/v1",
            "MEMVERBS_LLM__PROVIDER": "openai",
            "MEMVERBS_LLM__MODEL": "llama3",
            "MEMVERBS_LLM__BASE_URL": f"http://127.0.0.1:{port}/v1",
        }
    )
    proc = run_cli("doctor", env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    for name in ("embeddings", "llm"):
        [at] = [i for i, line in enumerate(lines) if line.startswith(f"✗ {name}:")]
        assert f"cannot reach the {name} provider at '127.0.0.1:{port}'" in lines[at]
        assert lines[at + 1].strip().startswith("fix:") and f"{name}.base_url" in lines[at + 1]
    proc = run_cli("doctor", "--json", env=env)
    report = json.loads(proc.stdout)
    assert {c["name"] for c in report["checks"] if c["status"] == "fail"} == {"embeddings", "llm"}

    # The verbs stay up, degraded: keyword search, degraded dedup, synthesize's compose failure.
    proc = run_cli("recall", "--query", "x", "--json", env=env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["search_degraded"] == "keyword_only_embedding_failed"
    proc = run_cli("remember", "x", "--provenance", "t", "--json", env=env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["degraded_dedup"] is True
    proc = run_cli("synthesize", "anything?", "--json", env=env)
    body = json.loads(proc.stdout)
    assert body["error"] == "unavailable" and body["detail"] == "QUESTION_EMBED_FAILED; LLM_CALL_FAILED: network"


def test_the_local_provider_is_probed_on_this_cpu_and_a_model_it_lacks_is_a_problem(home, monkeypatch):
    """`embeddings.provider = local`: no host, no key; once a crash (an assertion on the HTTP provider)."""
    import pytest

    pytest.importorskip("wordllama")
    monkeypatch.setenv("MEMVERBS_EMBEDDINGS__PROVIDER", "local")
    monkeypatch.setenv("MEMVERBS_EMBEDDINGS__MODEL", "wordllama/l2_supercat")
    check = by_name(home)["embeddings"]
    assert (check.status, check.fix) == ("ok", None) and "on this CPU: 256 dims (no key needed)" in check.detail
    monkeypatch.setenv("MEMVERBS_EMBEDDINGS__MODEL", "wordllama/no-such-model")
    check = by_name(home)["embeddings"]
    assert check.status == "fail" and "no-such-model" in check.detail and check.fix
    result = run_cli("doctor")
    assert result.returncode == 1 and "Traceback" not in result.stdout + result.stderr and "wordllama/no-such-model" in result.stdout
