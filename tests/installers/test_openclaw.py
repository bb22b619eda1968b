"""`memverbs install openclaw` against the real OpenClaw CLI: our openclaw.json entries and the plugin.

OpenClaw CLI calls take 4-10 s each, so one install cycle here runs it (installed twice, the
server connected in `mcp probe`, the plugin in the install ledger, uninstall gives the file
back byte for byte); the `openclaw agent --local` run that proves the plugin loads and
prepends the pack our hook prints is tests/e2e/test_openclaw_e2e.py's first turn. Everything
else reads the config memverbs wrote, with no openclaw on PATH where the CLI adds nothing
the cycle does not already check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harnesses import memverbs, run, throwaway_home
from openclaw_support import require_openclaw, without_openclaw

from memverbs.hooks.events import Harness
from memverbs.hooks.launcher import bootstrap_argv
from memverbs.installers import openclaw as openclaw_installer
from memverbs.installers.base import Options
from memverbs.installers.json_steps import JsonArrayValue
from memverbs.installers.jsonc import JsonDoc
from memverbs.installers.steps import Context
from memverbs.server.home import Home

USER_CONFIG = """// my openclaw config
{
  "mcp": {
    "servers": {
      "other": { "command": "/bin/cat", "args": [] }, // foreign
    },
  },
  "plugins": {
    "entries": { "other": { "enabled": true } },
  },
}
"""


# -- no CLI ----------------------------------------------------------------------------------


def _opts(tmp_path, env: dict) -> Options:
    return Options(Harness.OPENCLAW, home=Home(tmp_path / "brain"), env={"HOME": str(tmp_path), **env})


def test_config_path_follows_openclaw_env(tmp_path):
    assert openclaw_installer.config_path(_opts(tmp_path, {})) == tmp_path / ".openclaw" / "openclaw.json"
    assert openclaw_installer.config_path(_opts(tmp_path, {"OPENCLAW_PROFILE": "work"})) == tmp_path / ".openclaw-work" / "openclaw.json"
    assert openclaw_installer.config_path(_opts(tmp_path, {"OPENCLAW_HOME": "/srv/oc"})) == Path("/srv/oc/.openclaw/openclaw.json")
    assert openclaw_installer.config_path(_opts(tmp_path, {"OPENCLAW_STATE_DIR": "/s", "OPENCLAW_HOME": "/x"})) == Path("/s/openclaw.json")
    assert openclaw_installer.config_path(_opts(tmp_path, {"OPENCLAW_CONFIG_PATH": "/c.json", "OPENCLAW_STATE_DIR": "/s"})) == Path("/c.json")
    assert openclaw_installer.config_path(_opts(tmp_path, {"OPENCLAW_CONFIG_PATH": "undefined"})) == tmp_path / ".openclaw" / "openclaw.json"


@pytest.mark.parametrize("before", [None, '{"a": 1}\n', '{\n  "plugins": {"load": {"paths": ["/x"]}}\n}\n', '{"plugins": {"load": {"paths": []}}}'])
def test_json_array_value_round_trip_is_byte_exact(tmp_path, before):
    path = tmp_path / "openclaw.json"
    if before is not None:
        path.write_text(before)
    ctx = Context(backups=tmp_path / "backups")
    step = JsonArrayValue(path, ["plugins", "load", "paths"], "/ours")
    record = step.apply(ctx)
    step.apply(ctx)  # twice: still one
    assert JsonDoc(path.read_text()).get(["plugins", "load", "paths"]).count("/ours") == 1
    JsonArrayValue.revert(record, ctx)
    assert (path.read_text() if path.exists() else None) == before


def test_json_array_value_replaces_a_stale_copy(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text('{"plugins": {"load": {"paths": ["/keep", "/old/memverbs/plugin/openclaw"]}}}')
    JsonArrayValue(path, ["plugins", "load", "paths"], "/new", openclaw_installer.is_stale_plugin_path).apply(Context(backups=tmp_path / "b"))
    assert JsonDoc(path.read_text()).get(["plugins", "load", "paths"]) == ["/keep", "/new"]


def test_plugin_entry_ownership():
    assert openclaw_installer.is_our_entry({"enabled": False})  # what `openclaw plugins uninstall` leaves
    assert openclaw_installer.is_our_entry({"enabled": True, "config": {"command": "/venv/bin/memverbs"}})
    assert not openclaw_installer.is_our_entry({"enabled": True, "config": {"command": "/opt/other"}})


def test_the_plugin_package_is_linkable():
    root = Path(openclaw_installer.plugin_dir())
    package = json.loads((root / "package.json").read_text())
    manifest = json.loads((root / "openclaw.plugin.json").read_text())
    assert package["openclaw"]["extensions"] == ["./index.js"] and (root / "index.js").is_file()
    assert manifest["id"] == "memverbs" and manifest["configSchema"]["properties"].keys() == {"command", "hook", "env"}
    assert 'from "openclaw/plugin-sdk/plugin-entry"' in (root / "index.js").read_text()


# -- the real CLI ----------------------------------------------------------------------------


@pytest.fixture
def openclaw(tmp_path):
    env = throwaway_home(tmp_path)
    env = {k: v for k, v in env.items() if not k.startswith("OPENCLAW_")}
    cli = require_openclaw(env)
    config = Path(env["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir()
    config.write_text(USER_CONFIG)
    return cli, env, config, tmp_path / "project"


def test_install_twice_probes_and_uninstall_restores_bytes(openclaw):
    """One install cycle through the real CLI, every step checked (each OpenClaw call costs seconds)."""
    cli, env, config, project = openclaw
    out = run([memverbs(), "install", "openclaw"], env, cwd=project).stdout
    assert "recorded in OpenClaw's install ledger" in out and "not recorded" not in out, out
    first = config.read_text()
    run([memverbs(), "install", "openclaw"], env, cwd=project)
    # Twice keeps one of each. Same data; not always the same bytes: jsonc re-renders our member
    # in an inline parent ("entries": { … }) with the key line's indent on replace.
    assert JsonDoc(config.read_text()).data == JsonDoc(first).data
    assert list(JsonDoc(first).get(["mcp", "servers"])) == ["other", "memverbs"]
    probe = json.loads(run([cli, "mcp", "probe", "memverbs", "--json"], env, cwd=project, timeout=90).stdout)
    assert probe["servers"]["memverbs"]["tools"] == 7 and "memverbs__context_pack" in probe["tools"], probe
    assert probe["diagnostics"] == []

    doc = JsonDoc(config.read_text())
    assert doc.get(["mcp", "servers", "other"]) == {"command": "/bin/cat", "args": []}
    entry = doc.get(["plugins", "entries", "memverbs"])
    assert entry["enabled"] is True and entry["hooks"] == {"allowConversationAccess": True}
    assert entry["config"]["command"].endswith("memverbs") and entry["config"]["hook"] == bootstrap_argv()  # the lean launcher
    assert doc.get(["plugins", "load", "paths"]) == [openclaw_installer.plugin_dir()]
    assert "// my openclaw config" in config.read_text() and "// foreign" in config.read_text()
    mode = config.stat().st_mode & 0o777
    # In OpenClaw's install ledger: inspect shows where the plugin came from, and no warning.
    inspect = run([cli, "plugins", "inspect", "memverbs"], env, cwd=project, timeout=90).stdout
    assert "Source: path" in inspect and f"Install path: {openclaw_installer.plugin_dir()}" in inspect, inspect
    assert "WARN" not in inspect and "can't verify" not in inspect, inspect
    assert "// foreign" in config.read_text() and config.stat().st_mode & 0o777 == mode  # the CLI's rewrite was undone

    run([memverbs(), "uninstall", "openclaw"], env, cwd=project)
    assert config.read_text() == USER_CONFIG
    ledger = run([cli, "plugins", "registry", "--json"], env, cwd=project, timeout=90).stdout
    assert openclaw_installer.plugin_dir() not in ledger  # out of the ledger too


def test_openclaws_uninstall_residue_and_allowlist(openclaw):
    _cli, env, config, project = openclaw
    env = without_openclaw(env, project.parent)  # memverbs's own edits; the ledger call is the install cycle's
    before = USER_CONFIG.replace('"entries": { "other": { "enabled": true } },',
                                 '"entries": { "other": { "enabled": true }, "memverbs": { "enabled": false } },\n    "allow": ["other"],')
    config.write_text(before)
    out = run([memverbs(), "install", "openclaw"], env, cwd=project).stdout
    doc = JsonDoc(config.read_text())
    assert doc.get(["plugins", "allow"]) == ["other", "memverbs"]  # an allowlist the user keeps must name us
    assert doc.get(["plugins", "entries", "memverbs", "enabled"]) is True
    assert "not recorded in OpenClaw's install ledger (no openclaw CLI on PATH)" in out, out
    run([memverbs(), "uninstall", "openclaw"], env, cwd=project)
    after = JsonDoc(config.read_text())
    assert after.get(["plugins", "allow"]) == ["other"] and after.get(["plugins", "entries", "memverbs"]) is None


def test_a_malformed_or_json5_only_config_is_refused_untouched(openclaw):
    _cli, env, config, project = openclaw
    json5 = "{\n  mcp: { servers: {} },\n}\n"  # unquoted keys: JSON5 OpenClaw reads, memverbs will not edit
    config.write_text(json5)
    proc = run([memverbs(), "install", "openclaw"], env, cwd=project, check=False)
    assert proc.returncode != 0 and "does not parse" in proc.stderr + proc.stdout
    assert config.read_text() == json5


def test_dry_run_prints_the_diff_and_writes_nothing(openclaw):
    _cli, env, config, project = openclaw
    out = run([memverbs(), "install", "openclaw", "--dry-run"], env, cwd=project).stdout
    assert '+      "memverbs": {' in out and openclaw_installer.plugin_dir() in out
    assert config.read_text() == USER_CONFIG
    assert not (Path(env["MEMVERBS_HOME"]) / "integrations" / "openclaw").exists()


# -- the plugin's logic, driven by node with a stub SDK and a fake memverbs (no OpenClaw) ---------

FAKE_MEMVERBS = ('#!/bin/sh\n# hook <moment> --harness <h> --session-id <id>\npayload=$(cat)\n'
                 'echo "PACK $2 $4 $6 home=$MEMVERBS_HOME"\n[ -n "$CALLS" ] && echo "$2 $6" >> "$CALLS"\n'
                 '[ "$2" = capture ] && [ -n "$PAYLOADS" ] && echo "$payload" >> "$PAYLOADS"\n'
                 '[ "$2" = heartbeat ] && [ -n "$PROMPTS" ] && echo "$payload" >> "$PROMPTS"\nexit 0\n')
DRIVER = """
const handlers = {};
const cfg = JSON.parse(process.argv[3]);
const entry = (await import(process.argv[2])).default;
entry.register({ pluginConfig: cfg, on: (name, fn) => { handlers[name] = fn; } });
const out = { hooks: Object.keys(handlers).sort() };
const ctx = { sessionId: "s1", sessionKey: "agent:main:k1", trigger: "user" };
handlers.session_start({ sessionId: "s1", sessionKey: "agent:main:k1" }, { sessionId: "s1", sessionKey: "agent:main:k1" });
handlers.session_start({ sessionId: "s1", sessionKey: "agent:main:k1" }, { sessionId: "s1", sessionKey: "agent:main:k1" });
out.turn1 = await handlers.before_prompt_build({ prompt: "hi", messages: [] }, ctx) ?? null;
out.turn2 = await handlers.before_prompt_build({ prompt: "hi ... again", currentUserMessage: "again", messages: [] }, ctx) ?? null;
out.heartbeatTurn = await handlers.before_prompt_build({ prompt: "hb", messages: [] }, { ...ctx, trigger: "heartbeat" }) ?? null;
out.heartbeat = await handlers.heartbeat_prompt_contribution({ sessionKey: "agent:main:k1", agentId: "main" }, {}) ?? null;
handlers.after_compaction({ messageCount: 2, compactedCount: 2 }, ctx);
out.afterCompaction = await handlers.before_prompt_build({ prompt: "x", messages: [] }, ctx) ?? null;
out.local = await handlers.before_prompt_build({ prompt: "x", messages: [] }, { sessionId: "s2", trigger: "user" }) ?? null;
out.compacting = await handlers.before_compaction({ messageCount: 3, sessionFile: "/state/s1.jsonl" }, ctx) ?? null;
out.ended = await handlers.session_end({ sessionId: "s1", reason: "new" }, { sessionId: "s1" }) ?? null;
out.afterEnd = await handlers.before_prompt_build({ prompt: "x", messages: [] }, ctx) ?? null;
out.garbage = [await handlers.before_prompt_build(null, null) ?? null, await handlers.heartbeat_prompt_contribution(null, null) ?? null];
handlers.session_start(null, null); handlers.after_compaction(undefined, undefined);
out.garbage.push(await handlers.before_compaction(null, null) ?? null, await handlers.session_end(undefined, undefined) ?? null);
console.log(JSON.stringify(out));
"""


def drive_plugin(tmp_path, config: dict) -> dict:
    import shutil
    import subprocess

    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed")
    root = tmp_path / "plugin"
    shutil.copytree(openclaw_installer.plugin_dir(), root)
    sdk = root / "node_modules" / "openclaw"
    (sdk / "plugin-sdk").mkdir(parents=True)
    (sdk / "package.json").write_text(json.dumps({"name": "openclaw", "type": "module",
                                                  "exports": {"./plugin-sdk/plugin-entry": "./plugin-sdk/plugin-entry.js"}}))
    (sdk / "plugin-sdk" / "plugin-entry.js").write_text("export const definePluginEntry = (options) => options;\n")
    (tmp_path / "driver.mjs").write_text(DRIVER)
    proc = subprocess.run([node, str(tmp_path / "driver.mjs"), (root / "index.js").as_uri(), json.dumps(config)],
                          capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_plugin_logic_every_turn_compaction_and_heartbeat(tmp_path):
    fake = tmp_path / "fake-memverbs"
    fake.write_text(FAKE_MEMVERBS)
    fake.chmod(0o755)
    # `hook` (the installer's lean launcher) is what runs; `command` only when a config has no `hook`.
    config = {"command": str(tmp_path / "unused"), "hook": [str(fake), "hook"]}
    env = {"MEMVERBS_HOME": "/brain", "CALLS": str(tmp_path / "calls"), "PAYLOADS": str(tmp_path / "payloads"),
           "PROMPTS": str(tmp_path / "prompts")}
    out = drive_plugin(tmp_path, {**config, "env": env})
    assert out["hooks"] == ["after_compaction", "before_compaction", "before_prompt_build", "heartbeat_prompt_contribution",
                            "session_end", "session_start"]
    pack = {"prependContext": "PACK session-start openclaw s1 home=/brain"}
    beat = {"appendContext": "PACK heartbeat openclaw s1 home=/brain"}
    # The pack on every turn (not kept in history), and the turn's heartbeat with its prompt (the reflex), after the pack.
    assert out["turn1"] == {**pack, **beat}
    assert out["turn2"] == {**pack, **beat}
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[:3] == ["session-start s1", "heartbeat s1", "heartbeat s1"], calls  # the second session_start did no work
    assert out["heartbeatTurn"] is None  # a heartbeat turn gets the delta below, not the pack again
    assert out["heartbeat"] == beat  # the key led to the id
    assert out["afterCompaction"] == {"prependContext": "PACK post-compact openclaw s1 home=/brain", **beat}
    assert out["local"] == {"prependContext": "PACK session-start openclaw s2 home=/brain",
                            "appendContext": "PACK heartbeat openclaw s2 home=/brain"}  # no session_start (--local)
    assert out["afterEnd"] == {**pack, **beat}  # a new pack after the session ended
    prompts = [json.loads(line).get("prompt") for line in (tmp_path / "prompts").read_text().splitlines()]
    # The user's request: `currentUserMessage` where OpenClaw gives it, else `prompt`; none on a heartbeat run.
    assert prompts[:3] == ["hi", "again", None], prompts
    assert calls.count("session-start s1") == 2, calls  # once at the start, once after session_end
    assert out["garbage"] == [None, None, None, None]
    # Capture: before a compaction with the event's sessionFile, at the session's end without one (OpenClaw's
    # SQLite store then holds the session: the worker finds it by id); the handlers wait for the hook, return nothing.
    assert out["compacting"] is None and out["ended"] is None
    payloads = [json.loads(line) for line in (tmp_path / "payloads").read_text().splitlines()]
    assert payloads == [{"transcript_path": "/state/s1.jsonl", "session_id": "s1", "hook_event_name": "PreCompact"},
                        {"session_id": "s1", "hook_event_name": "SessionEnd"}]


@pytest.mark.parametrize("key", ["command", "hook"])  # an older install's config; the lean launcher's missing python
def test_plugin_logic_swallows_a_missing_memverbs(tmp_path, key):
    missing = str(tmp_path / "no-such-memverbs")
    out = drive_plugin(tmp_path, {"command": missing} if key == "command" else {"hook": [missing, "-I", "-S", "-c", "pass", "hook"]})
    assert out["turn1"] is None and out["heartbeat"] is None and out["afterCompaction"] is None
