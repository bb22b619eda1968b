"""`memverbs install opencode` against the real opencode CLI: the JSONC entry and the plugin module.

opencode installs @opencode-ai/plugin from the npm registry into a config dir the first
time it loads a plugin from it, unless node_modules exists and package-lock.json lists
the package (its own check, read from the 1.18 binary). `seed_plugin_deps` satisfies that
check so these tests never touch the registry; our plugin imports nothing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harnesses import memverbs, require_cli, run, throwaway_home

from memverbs.hooks.events import Harness
from memverbs.hooks.launcher import bootstrap_argv
from memverbs.installers import opencode as opencode_installer
from memverbs.installers.base import Options
from memverbs.installers.jsonc import JsonDoc
from memverbs.installers.steps import Context
from memverbs.server.home import Home

USER_JSONC = """// user comment
{
  "$schema": "https://opencode.ai/config.json",
  /* block */
  "mcp": {
    "other": {"type": "local", "command": ["/bin/cat"], "enabled": false}, // trailing
  },
}
"""
SEED_FACT = "Alice prefers tea over coffee"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def seed_plugin_deps(config_dir: Path) -> None:
    (config_dir / "node_modules").mkdir(parents=True, exist_ok=True)
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}
    (config_dir / "package-lock.json").write_text(json.dumps(lock))


# -- no CLI ----------------------------------------------------------------------------------


def _opts(tmp_path, **kw) -> Options:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    return Options(Harness.OPENCODE, home=Home(tmp_path / "brain"), env=env, project_dir=tmp_path, **kw)


def test_config_file_choice(tmp_path):
    opts = _opts(tmp_path)
    base = tmp_path / "home" / ".config" / "opencode"
    assert opencode_installer.config_file(opts) == base / "opencode.json"  # nothing yet: the plain .json
    base.mkdir(parents=True)
    (base / "opencode.json").write_text('{"model": "x"}')
    assert opencode_installer.config_file(opts) == base / "opencode.json"
    (base / "opencode.jsonc").write_text("// mine\n{}")
    assert opencode_installer.config_file(opts) == base / "opencode.jsonc"  # merged last: ours cannot be shadowed
    (base / "opencode.json").write_text('{"mcp": {"memverbs": {"type": "local", "command": ["memverbs", "serve"]}}}')
    assert opencode_installer.config_file(opts) == base / "opencode.json"  # where our entry already is
    project = _opts(tmp_path, scope="project")
    assert opencode_installer.config_file(project) == tmp_path / "opencode.json"


def test_plugin_is_rendered_with_our_command_and_env(tmp_path):
    text = opencode_installer.render_plugin(_opts(tmp_path))
    assert f'/* memverbs:env */ {{"MEMVERBS_HOME": "{tmp_path / "brain"}"}} /* end */' in text
    # The lean launcher every harness's hooks run: this interpreter, no `site`, the bootstrap, `hook`.
    hook = json.loads(text.split("/* memverbs:command */", 1)[1].split("/* end */", 1)[0])
    assert hook == bootstrap_argv() and hook[:3] == [sys.executable, "-I", "-S"] and hook[-1] == "hook"
    assert opencode_installer.PLUGIN_MARKER in text
    node = shutil.which("node")
    if node:  # syntax only: the module is loaded for real by the end-to-end test
        path = tmp_path / "memverbs.mjs"
        path.write_text(text)
        subprocess.run([node, "--check", str(path)], check=True, capture_output=True)


def test_a_plugin_from_the_other_scope_is_not_doubled(tmp_path):
    opts = _opts(tmp_path)
    for step in opencode_installer.plan(opts)[0]:
        step.apply(Context(backups=tmp_path / "backups"))
    steps, notes = opencode_installer.plan(_opts(tmp_path, scope="project"))
    assert [type(s).__name__ for s in steps] == ["JsonEntry"]
    assert any("already loaded from" in n for n in notes)


# -- the real CLI ----------------------------------------------------------------------------


@pytest.fixture
def opencode(tmp_path):
    cli = require_cli("opencode")
    env = throwaway_home(tmp_path)
    config_dir = Path(env["XDG_CONFIG_HOME"]) / "opencode"
    config_dir.mkdir(parents=True)
    (config_dir / "opencode.jsonc").write_text(USER_JSONC)
    seed_plugin_deps(config_dir)
    return cli, env, config_dir, tmp_path / "project"


def mcp_list(cli, env, cwd) -> str:
    # opencode mcp list spawns each server and exits 0 even when one fails: read its lines
    return ANSI.sub("", run([cli, "mcp", "list"], env, cwd=cwd, timeout=90).stdout)


def test_install_connects_and_uninstall_restores_bytes(opencode):
    cli, env, config_dir, project = opencode
    run([memverbs(), "install", "opencode"], env, cwd=project)
    assert re.search(r"✓ memverbs\s+connected", mcp_list(cli, env, project))

    doc = JsonDoc((config_dir / "opencode.jsonc").read_text())
    ours = doc.get(["mcp", "memverbs"])
    assert ours["type"] == "local" and ours["command"][1:] == ["serve", "--surface", "verbs"]
    assert ours["enabled"] is True and ours["timeout"] >= 10_000
    assert doc.get(["mcp", "other"]) == {"type": "local", "command": ["/bin/cat"], "enabled": False}
    text = (config_dir / "opencode.jsonc").read_text()
    assert "// user comment" in text and "/* block */" in text and "// trailing" in text
    plugin = (config_dir / "plugin" / "memverbs.js").read_text()
    assert opencode_installer.PLUGIN_MARKER in plugin

    run([memverbs(), "uninstall", "opencode"], env, cwd=project)
    assert (config_dir / "opencode.jsonc").read_text() == USER_JSONC
    assert not (config_dir / "plugin" / "memverbs.js").exists()
    assert not (config_dir / "plugin").exists()  # the folder the install created goes with it, being empty
    assert "memverbs" not in mcp_list(cli, env, project)


def test_install_twice_keeps_one_entry(opencode):
    _cli, env, config_dir, project = opencode
    run([memverbs(), "install", "opencode"], env, cwd=project)
    first = (config_dir / "opencode.jsonc").read_text()
    run([memverbs(), "install", "opencode"], env, cwd=project)
    assert (config_dir / "opencode.jsonc").read_text() == first
    assert first.count('"memverbs"') == 1 and list(JsonDoc(first).get(["mcp"])) == ["other", "memverbs"]


def test_a_malformed_config_is_refused_untouched(opencode):
    _cli, env, config_dir, project = opencode
    broken = USER_JSONC.replace('"enabled": false}', '"enabled": false')
    (config_dir / "opencode.jsonc").write_text(broken)
    proc = run([memverbs(), "install", "opencode"], env, cwd=project, check=False)
    assert proc.returncode != 0 and "does not parse" in proc.stderr + proc.stdout
    assert (config_dir / "opencode.jsonc").read_text() == broken
    assert not (config_dir / "plugin").exists()


def test_dry_run_prints_the_diff_and_writes_nothing(opencode):
    _cli, env, config_dir, project = opencode
    out = run([memverbs(), "install", "opencode", "--dry-run"], env, cwd=project).stdout
    assert '+    "memverbs": {' in out and "plugin/memverbs.js (after)" in out
    assert (config_dir / "opencode.jsonc").read_text() == USER_JSONC
    assert not (config_dir / "plugin").exists()
    assert not (Path(env["MEMVERBS_HOME"]) / "integrations" / "opencode").exists()


# -- the plugin's logic, driven by node with a fake memverbs (no opencode) ----------------------

FAKE_MEMVERBS = ('#!/bin/sh\n# hook <moment> --harness <h> --session-id <id>\npayload=$(cat)\necho "PACK $2 $6 home=$MEMVERBS_HOME"\n'
                 '[ "$2" = capture ] && echo "$payload" >> "$0.captures"\nexit 0\n')
DRIVER = """
const mod = await import(process.argv[2]);
const hooks = await mod.MemverbsPlugin({});
const transform = hooks["experimental.chat.system.transform"];
const out = {};
const sys = async (id, first = "You are opencode") => { const o = { system: [first] }; await transform({ sessionID: id }, o); return o.system.slice(1); };
await hooks.event({ event: { type: "session.created", properties: { sessionID: "s1", info: { id: "s1" } } } });
out.first = await sys("s1");
out.again = await sys("s1");
out.title = await sys("s1", "You are a title generator. You output ONLY a thread title.");
out.summary = await sys("s1", "You are a context summarization agent. You are given a conversation");
const c = { context: [] }; await hooks["experimental.session.compacting"]({ sessionID: "s1" }, c); out.compacting = c.context;
await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "s1" } } });
out.compacted = await sys("s1");
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } });
out.idle = await sys("s1");
await hooks["chat.message"]({ sessionID: "s1", messageID: "m2" }, {});
out.turn = await sys("s1");
await hooks["chat.message"](null, null);
out.lazy = await sys("s2");
await hooks.event({}); await hooks.event({ event: null }); await hooks.event({ event: { type: "session.created" } });
await transform(undefined, undefined); await transform({ sessionID: "s3" }, {});
await hooks["experimental.session.compacting"](null, null);
console.log(JSON.stringify(out));
"""


def drive_plugin(tmp_path, command: str) -> dict:
    """The plugin run in node with `command` as the console script its hooks start ([command, "hook"])."""
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed")
    module = tmp_path / "memverbs.mjs"
    module.write_text(opencode_installer.render_plugin(_opts(tmp_path), hook=[command, "hook"]))
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    proc = subprocess.run([node, str(driver), module.as_uri()], capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_plugin_logic_pack_compaction_and_heartbeat(tmp_path):
    fake = tmp_path / "fake-memverbs"
    fake.write_text(FAKE_MEMVERBS)
    fake.chmod(0o755)
    out = drive_plugin(tmp_path, str(fake))
    home = f"home={tmp_path / 'brain'}"  # the baked-in environment reaches the hook
    assert out["first"] == [f"PACK session-start s1 {home}"] and out["again"] == out["first"]  # cached, on every request
    assert out["title"] == [] and out["summary"] == []  # side requests
    assert out["compacting"] == [f"PACK session-start s1 {home}"]
    assert out["compacted"] == [f"PACK post-compact s1 {home}"]
    assert out["idle"] == [f"PACK post-compact s1 {home}"]  # idle no longer runs a heartbeat: the turn's start does
    assert out["turn"] == [f"PACK post-compact s1 {home}", f"PACK heartbeat s1 {home}"]
    assert out["lazy"] == [f"PACK session-start s2 {home}"]  # a session it never saw start
    # Capture before the compaction and at each turn's end (session.idle), by session id: the worker reads opencode's store.
    captures = [json.loads(line) for line in Path(f"{fake}.captures").read_text().splitlines()]
    assert captures == [{"session_id": "s1", "hook_event_name": "experimental.session.compacting"},
                        {"session_id": "s1", "hook_event_name": "session.idle"}]


def test_plugin_logic_swallows_a_missing_memverbs(tmp_path):
    out = drive_plugin(tmp_path, str(tmp_path / "no-such-memverbs"))
    assert all(value == [] for value in out.values()), out


@pytest.mark.slow
def test_compaction_keeps_the_pack_and_refreshes_it(opencode):
    """A reply reporting a nearly full context makes opencode compact: the summariser is given the
    pack (experimental.session.compacting), the post-compact hook runs, the next request has the pack."""
    from fake_model import FakeModel, Text
    from harness_e2e import World

    cli, env, config_dir, project = opencode
    world = World(env, Path(env["HOME"]), project)
    world.remember(SEED_FACT)
    run([memverbs(), "install", "opencode"], env, cwd=project)
    with FakeModel() as api:
        api.script(Text("ok", input_tokens=9_500, when=lambda path, body: bool(body.get("tools"))))
        provider = {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": {"baseURL": f"{api.url}/v1", "apiKey": "x"},
                    "models": {"fake-model": {"name": "Fake", "limit": {"context": 10_000, "output": 1_000}}}}
        (config_dir / "opencode.json").write_text(json.dumps({"model": "fake/fake-model", "small_model": "fake/fake-model",
                                                              "provider": {"fake": provider}}))
        world.harness([cli, "run", "--format", "json", "hi"], {}, timeout=150)
        requests = api.model_requests()
    summarise = [i for i, r in enumerate(requests) if "context summarization agent" in r.text]
    assert summarise, "opencode did not compact"
    i = summarise[0]
    assert sum(SEED_FACT in text for _, text in requests[i].messages()) == 1  # given once, in the compaction prompt
    after = [r for r in requests[i + 1:] if r.body.get("tools")]
    assert after and any(role == "system" and SEED_FACT in text for role, text in after[0].messages())
    assert ("post-compact", "ok") in {(r["moment"], r["code"]) for r in world.hook_log() if r["harness"] == "opencode"}


@pytest.mark.slow
def test_the_pack_in_the_system_prompt_and_a_fact_written_between_turns_in_the_next(opencode, tmp_path):
    """End to end: `opencode run` against a fake model; the pack our hook prints is a system message.
    Turn 2 (`opencode run --continue`) starts with `chat.message`: the plugin's heartbeat runs there,
    and the turn's first request carries the fact written after turn 1.

    The brain lives outside HOME/.memverbs and opencode runs without MEMVERBS_HOME, so the
    pack can only come from the plugin's baked-in environment.
    """
    from fake_model import FakeModel
    from harness_e2e import World

    cli, env, config_dir, project = opencode
    brain = tmp_path / "brain"
    env = {**env, "MEMVERBS_HOME": str(brain)}
    run([memverbs(), "init"], env, cwd=project)
    world = World(env, Path(env["HOME"]), project)
    world.remember(SEED_FACT)
    run([memverbs(), "install", "opencode"], env, cwd=project)
    probe = json.dumps({"session_id": "expected-pack"})
    expected = run([memverbs(), "hook", "session-start", "--harness", "opencode"], env, cwd=project, input=probe).stdout.strip()
    assert SEED_FACT in expected

    bare = World({k: v for k, v in env.items() if k != "MEMVERBS_HOME"}, Path(env["HOME"]), project)
    fresh = "Alice switched to decaf"
    with FakeModel() as api:
        provider = {"npm": "@ai-sdk/openai-compatible", "name": "Fake", "options": {"baseURL": f"{api.url}/v1", "apiKey": "x"},
                    "models": {"fake-model": {"name": "Fake", "limit": {"context": 100000, "output": 4096}}}}
        (config_dir / "opencode.json").write_text(json.dumps({"model": "fake/fake-model", "small_model": "fake/fake-model",
                                                              "provider": {"fake": provider}}))
        bare.harness([cli, "run", "--format", "json", "hi"], {}, timeout=150)
        first = api.model_requests()
        world.remember(fresh)
        mark = api.mark()
        bare.harness([cli, "run", "--continue", "--format", "json", "what changed?"], {}, timeout=150)
        nxt = [r for r in api.since(mark) if r.body.get("tools")]
    main = [r for r in first if r.body.get("tools")]
    assert main, "opencode sent no agent request"
    systems = [text for role, text in main[0].messages() if role == "system"]
    assert expected in systems, systems
    title = [r for r in first if not r.body.get("tools")]
    assert all(SEED_FACT not in r.text for r in title)  # the title request is left alone

    assert nxt, "opencode sent no agent request in turn 2"
    assert any(role == "system" and fresh in text for role, text in nxt[0].messages()), nxt[0].messages()
    beats = [(r["moment"], r["code"]) for r in world.hook_log() if r["harness"] == "opencode" and r["moment"] == "heartbeat"]
    assert beats, world.hook_log()  # chat.message ran the heartbeat
