"""`memverbs protocol`: the spec equals what the server lists; stats over the usage log."""

import json
from datetime import UTC, datetime, timedelta

from rawmcp import RawMcp
from runcli import run_cli

from memverbs.server.protocol.registry import VERB_NAMES


def run(env, *args):
    proc = run_cli(*args, env=env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_spec_json_equals_the_served_tool_list(memverbs_cmd, env):
    spec = json.loads(run(env, "protocol", "--json"))
    assert spec["protocol"] == "MEMORY_VERBS" and spec["protocol_version"] == 1
    assert spec["versioning_policy"].startswith("additive-forever:")
    assert list(spec["verbs"]) == list(VERB_NAMES)
    assert spec["error_schema"]["properties"]["error"]["enum"][0] == "invalid_params"
    peer = RawMcp([*memverbs_cmd, "serve", "--surface", "verbs"], env)
    try:
        peer.handshake()
        served = {t["name"]: t for t in peer.send("tools/list", {})["result"]["tools"]}
    finally:
        peer.close()
    for name, verb in spec["verbs"].items():
        assert verb["description"] == served[name]["description"]
        assert verb["input_schema"] == served[name]["inputSchema"]
        assert verb["annotations"] == served[name]["annotations"]
        assert verb["response_schema"]["type"] == "object"


def test_spec_summary_has_a_line_per_verb(env):
    out = run(env, "protocol")
    assert out.startswith("MEMORY_VERBS v1 — ")
    assert "  remember(fact, provenance, ttl?, entity?, kind?, visibility?)" in out
    assert "  entity(name)" in out
    assert "memverbs protocol --json" in out


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def test_stats_over_the_usage_log(env, home):
    now = datetime.now(UTC)
    installed = now - timedelta(days=3, minutes=5)
    (home.root / "config.toml").write_text(f'protocol_installed_at = "{iso(installed)}"\n')
    events = [
        {"ts": iso(now - timedelta(days=40)), "verb": "recall", "ok": True, "latency_ms": 9},
        {"ts": iso(now - timedelta(days=3)), "verb": "entity", "ok": True, "latency_ms": 2, "entity_found": True},
        {"ts": iso(now - timedelta(days=2)), "verb": "entity", "ok": True, "latency_ms": 4, "entity_found": False},
        {"ts": iso(now - timedelta(days=1)), "verb": "recall", "ok": True, "latency_ms": 3, "budget_dropped": 2},
        {"ts": iso(now - timedelta(hours=1)), "verb": "remember", "ok": False, "latency_ms": 1},
    ]
    home.usage_log.parent.mkdir(parents=True)
    lines = [json.dumps(e) for e in events] + ["not json", json.dumps({"verb": 3, "ts": "x"})]
    home.usage_log.write_text("\n".join(lines) + "\n")

    report = json.loads(run(env, "protocol", "stats", "--json"))
    assert report["days"] == 30 and report["total_calls"] == 4
    assert report["by_verb"]["entity"] == {"calls": 2, "errors": 0, "avg_latency_ms": 3, "budget_dropped_total": 0, "found": 1, "miss": 1}
    assert report["by_verb"]["recall"]["budget_dropped_total"] == 2
    assert report["by_verb"]["remember"]["errors"] == 1
    assert report["first_verb_call"] == events[0]["ts"]  # over all time, not the window
    assert report["tthw_install_to_first_verb"] is None  # first call predates this install
    assert report["privacy"] == "local JSONL only — never uploaded"
    assert json.loads(run(env, "protocol", "stats", "--days", "abc", "--json"))["days"] == 30
    assert json.loads(run(env, "protocol", "stats", "--days", "400", "--json"))["total_calls"] == 5

    text = run(env, "protocol", "stats")
    assert "entity      2     calls  avg 3ms  (0 errors, 0 budget-dropped, hit 1/2)" in text
    assert "sidecar: " in text


def test_time_to_hello_world_from_init_to_first_call(memverbs_cmd, env, home):
    peer = RawMcp([*memverbs_cmd, "serve", "--surface", "verbs"], env)
    try:
        peer.handshake()
        peer.call("recall", {})
    finally:
        peer.close()
    first_call = json.loads(home.usage_log.read_text().splitlines()[0])["ts"]
    installed = datetime.strptime(first_call, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC) - timedelta(minutes=2, seconds=5)
    (home.root / "config.toml").write_text(f'protocol_installed_at = "{iso(installed)}"\n')
    report = json.loads(run(env, "protocol", "stats", "--json"))
    assert report["total_calls"] == 1 and report["tthw_install_to_first_verb"] == "2m5s"
    doctor = run(env, "doctor")
    assert "memory verbs usage: 1 call in 30 days (recall 1)" in doctor


def test_duration_format():
    from memverbs.server.usage import duration_text

    assert [duration_text(s) for s in (5, 60, 125, 3600, 3660, 49 * 3600)] == ["5s", "1m", "2m5s", "1h", "1h1m", "2d"]
