"""`memverbs install grok` against the real Grok Build CLI, and the marked-block step it uses.

Grok ignores SessionStart/UserPromptSubmit hook output, so the context arrives by the
pull path: a block in ~/.grok/AGENTS.md. The end-to-end test plays the agent following
that block (search_tool, then use_tool on memverbs__context_pack) against a fake model.
"""

from __future__ import annotations

import json
import os
import time
import tomllib
from pathlib import Path

import pytest
from harnesses import memverbs, require_cli, run, throwaway_home

from memverbs.hooks.events import Harness
from memverbs.installers import claude as claude_installer
from memverbs.installers import grok as grok_installer
from memverbs.installers import toml_block
from memverbs.installers.base import Options, hook_moment
from memverbs.installers.steps import Context, InstallError
from memverbs.installers.text_steps import MD_BEGIN, MD_END, MarkedBlock
from memverbs.server.home import Home

USER_CONFIG = '# my grok config\n[cli]\ninstaller = "npm" # inline\n\n[mcp_servers.other]\ncommand = "/bin/cat"\nargs = ["-"]  # keep\n'
USER_AGENTS = "# My rules\n\nBe terse."  # no final newline: the block must not add one for good
CAT = "Alice adopted a cat"
SEED_FACT = "Alice prefers tea over coffee"


# -- MarkedBlock (no CLI) --------------------------------------------------------------


@pytest.mark.parametrize("before", [None, "", "# Rules\n", "# Rules\n\nBe terse.", "a\n\n"])
def test_marked_block_round_trip_is_byte_exact(tmp_path, before):
    path = tmp_path / "AGENTS.md"
    if before is not None:
        path.write_text(before)
    ctx = Context(backups=tmp_path / "backups")
    record = MarkedBlock(path, "## Memory\n\nCall context_pack.\n").apply(ctx)
    text = path.read_text()
    assert text.count(MD_BEGIN) == 1 and text.endswith(MD_END + "\n")
    assert text.startswith(before or "")
    MarkedBlock(path, "## Memory\n\nCall context_pack, then delta.\n").apply(ctx)  # a re-install replaces it in place
    assert path.read_text().count(MD_BEGIN) == 1 and "then delta" in path.read_text()
    MarkedBlock.revert(record, ctx)
    assert (path.read_text() if path.exists() else None) == before


def test_marked_block_keeps_text_added_after_it(tmp_path):
    path = tmp_path / "AGENTS.md"
    path.write_text("mine\n")
    ctx = Context(backups=tmp_path / "backups")
    record = MarkedBlock(path, "ours").apply(ctx)
    path.write_text(path.read_text() + "added later\n")
    MarkedBlock.revert(record, ctx)
    assert path.read_text() == "mine\nadded later\n"


def test_marked_block_without_its_end_marker_is_refused(tmp_path):
    path = tmp_path / "AGENTS.md"
    path.write_text(f"mine\n{MD_BEGIN}\nhalf a block\n")
    with pytest.raises(InstallError):
        MarkedBlock(path, "ours").apply(Context(backups=tmp_path / "backups"))
    assert path.read_text() == f"mine\n{MD_BEGIN}\nhalf a block\n"


def test_marked_block_dry_run_writes_nothing(tmp_path):
    path = tmp_path / "AGENTS.md"
    path.write_text("mine\n")
    ctx = Context(backups=tmp_path / "backups", dry_run=True)
    MarkedBlock(path, "ours").apply(ctx)
    assert path.read_text() == "mine\n" and "+ours" in "".join(ctx.diffs())


# -- the plan (no CLI) ---------------------------------------------------------------------


ALL_EVENTS = list(dict.fromkeys([*grok_installer.EVENTS, *grok_installer.CAPTURES]))


def _opts(tmp_path, **kw) -> Options:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    return Options(Harness.GROK, home=Home(home / ".memverbs"), env=env, project_dir=tmp_path, **kw)


def _claude_settings(tmp_path) -> Path:
    """What `memverbs install claude` writes into ~/.claude/settings.json, which Grok reads too."""
    copts = Options(Harness.CLAUDE, home=Home(tmp_path / "home" / ".memverbs"), env={"HOME": str(tmp_path / "home")})
    groups = {event: [claude_installer.hook_group(copts, event)] for event in claude_installer.EVENTS}
    path = tmp_path / "home" / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hooks": groups}))
    return path


def test_claude_hooks_grok_would_run_are_not_wired_twice(tmp_path):
    _claude_settings(tmp_path)
    steps, notes = grok_installer.plan(_opts(tmp_path))
    hooks = json.loads(next(s for s in steps if s.__class__.__name__ == "OwnedFile").content)["hooks"]
    # Claude's SessionStart matcher (startup|resume|clear|compact) never matches Grok's source "new":
    # Grok needs its own. Claude's UserPromptSubmit hook fires in Grok as it is: not added again.
    assert list(hooks) == ["SessionStart", "PostToolUse", "PreCompact", "PostCompact"]
    assert "matcher" not in hooks["SessionStart"][0]
    assert any("UserPromptSubmit hook not added" in n and "settings.json" in n for n in notes)
    # Claude's capture hooks fire in Grok too (the hook tells Grok's payload apart): not added again,
    # and they do not stand in for Grok's own PreCompact re-arm.
    assert [hook_moment(h["command"]) for h in hooks["PreCompact"][0]["hooks"]] == ["post-compact"]
    for event in ("SessionEnd", "Stop", "PreCompact"):
        assert any(f"{event} capture hook not added" in n and "settings.json" in n for n in notes)


def test_claude_hooks_are_ignored_when_grok_does_not_read_them(tmp_path):
    _claude_settings(tmp_path)
    opts = _opts(tmp_path)
    opts.env["GROK_CLAUDE_HOOKS_ENABLED"] = "false"
    steps, _notes = grok_installer.plan(opts)
    hooks = json.loads(next(s for s in steps if s.__class__.__name__ == "OwnedFile").content)["hooks"]
    assert sorted(hooks) == sorted(ALL_EVENTS)
    moments = {e: [hook_moment(h["command"]) for h in g[0]["hooks"]] for e, g in hooks.items()}
    assert moments["PreCompact"] == ["post-compact", "capture"]
    assert moments["SessionEnd"] == moments["Stop"] == ["capture"]


def test_project_scope_paths_and_no_doubling_over_a_user_install(tmp_path):
    ctx = Context(backups=tmp_path / "backups")
    for step in grok_installer.plan(_opts(tmp_path))[0]:  # a user-scope install first
        step.apply(ctx)
    steps, notes = grok_installer.plan(_opts(tmp_path, scope="project"))
    where = {type(s).__name__: Path(s.path) for s in steps}
    assert where == {"TomlBlock": tmp_path / ".grok" / "config.toml", "MarkedBlock": tmp_path / "AGENTS.md"}
    assert sum("hook not added" in n and "memverbs.json" in n for n in notes) == len(grok_installer.EVENTS) + len(grok_installer.CAPTURES)
    assert any("trusted folder" in n for n in notes)


def test_a_project_hook_does_not_stop_a_user_install(tmp_path):
    (tmp_path / ".grok" / "hooks").mkdir(parents=True)
    own = grok_installer.hooks_file(_opts(tmp_path), list(grok_installer.EVENTS), grok_installer.CAPTURES)
    (tmp_path / ".grok" / "hooks" / "memverbs.json").write_text(own)
    steps, _notes = grok_installer.plan(_opts(tmp_path))  # user scope: fires in every project, not just this one
    hooks = json.loads(next(s for s in steps if s.__class__.__name__ == "OwnedFile").content)["hooks"]
    assert sorted(hooks) == sorted(ALL_EVENTS)


def test_pull_block_names_the_verbs_and_grok_tool_names(tmp_path):
    block = grok_installer.pull_block(_opts(tmp_path))
    assert "$" not in block  # every placeholder filled
    for needle in ("context_pack", "delta", "session_id", "compaction", "memverbs__context_pack", "search_tool"):
        assert needle in block


# -- the real CLI ----------------------------------------------------------------------------


@pytest.fixture
def grok(tmp_path):
    cli = require_cli("grok")
    env = throwaway_home(tmp_path)
    env = {k: v for k, v in env.items() if not k.startswith("OPENCLAW_")}
    home = Path(env["HOME"]) / ".grok"
    home.mkdir()
    (home / "config.toml").write_text(USER_CONFIG)
    (home / "AGENTS.md").write_text(USER_AGENTS)
    return cli, env, home, tmp_path / "project"


def doctor(cli, env, cwd) -> dict:
    proc = run([cli, "mcp", "doctor", "memverbs", "--json"], env, cwd=cwd, check=False, timeout=60)
    return json.loads(proc.stdout)


def test_install_connects_and_uninstall_restores_bytes(grok):
    cli, env, home, project = grok
    out = run([memverbs(), "install", "grok"], env, cwd=project).stdout
    assert "pull block" in out

    report = doctor(cli, env, project)
    server = next(s for s in report["servers"] if s["name"] == "memverbs")
    assert server["healthy"] is True and report["failing_count"] == 0, report
    assert any(c["label"] == "7 tools discovered" for c in server["checks"]), server

    config = (home / "config.toml").read_text()
    assert toml_block.remove(config) == USER_CONFIG  # every byte of the user's outside our block
    ours = tomllib.loads(config)["mcp_servers"]["memverbs"]
    assert ours["args"] == ["serve", "--surface", "verbs"] and ours["startup_timeout_sec"] >= 30
    hooks = json.loads((home / "hooks" / "memverbs.json").read_text())["hooks"]
    assert sorted(hooks) == sorted(["SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "PostCompact", "SessionEnd", "Stop"])
    assert [h["command"].endswith("hook capture --harness grok") for h in hooks["SessionEnd"][0]["hooks"]] == [True]
    assert all("matcher" not in g for groups in hooks.values() for g in groups)
    agents = (home / "AGENTS.md").read_text()
    assert agents.startswith(USER_AGENTS) and agents.count(MD_BEGIN) == 1

    run([memverbs(), "uninstall", "grok"], env, cwd=project)
    assert (home / "config.toml").read_text() == USER_CONFIG
    assert (home / "AGENTS.md").read_text() == USER_AGENTS
    assert not (home / "hooks" / "memverbs.json").exists()
    listed = json.loads(run([cli, "mcp", "list", "--json"], env, cwd=project).stdout)
    assert [s["name"] for s in listed] == ["other"]


def test_install_twice_keeps_one_of_everything(grok):
    cli, env, home, project = grok
    run([memverbs(), "install", "grok"], env, cwd=project)
    first = {p: (home / p).read_text() for p in ("config.toml", "AGENTS.md", "hooks/memverbs.json")}
    run([memverbs(), "install", "grok"], env, cwd=project)
    assert {p: (home / p).read_text() for p in first} == first
    assert first["config.toml"].count(toml_block.BEGIN) == 1 and first["AGENTS.md"].count(MD_BEGIN) == 1
    names = [s["name"] for s in json.loads(run([cli, "mcp", "list", "--json"], env, cwd=project).stdout)]
    assert sorted(names) == ["memverbs", "other"]


def test_a_malformed_config_is_refused_untouched(grok):
    _cli, env, home, project = grok
    broken = USER_CONFIG + "[mcp_servers.broken\n"
    (home / "config.toml").write_text(broken)
    proc = run([memverbs(), "install", "grok"], env, cwd=project, check=False)
    assert proc.returncode != 0 and "config.toml" in proc.stderr + proc.stdout
    assert (home / "config.toml").read_text() == broken
    assert (home / "AGENTS.md").read_text() == USER_AGENTS and not (home / "hooks").exists()


def test_a_server_grok_registered_itself_is_not_overwritten(grok):
    cli, env, home, project = grok
    run([cli, "mcp", "add", "memverbs", "-s", "user", "--", "/bin/cat"], env, cwd=project)
    before = (home / "config.toml").read_text()
    proc = run([memverbs(), "install", "grok"], env, cwd=project, check=False)
    assert proc.returncode != 0 and "grok mcp remove memverbs" in proc.stderr + proc.stdout
    assert (home / "config.toml").read_text() == before


def test_dry_run_prints_the_diff_and_writes_nothing(grok):
    _cli, env, home, project = grok
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    out = run([memverbs(), "install", "grok", "--dry-run"], env, cwd=project).stdout
    assert "+[mcp_servers.memverbs]" in out and f"+{MD_BEGIN}" in out and '"SessionStart"' in out
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before
    assert (home / "config.toml").read_text() == USER_CONFIG
    assert not (Path(env["MEMVERBS_HOME"]) / "integrations" / "grok").exists()


def test_pull_path_end_to_end(grok):
    """Grok loads the block into its prompt, and an agent following it gets the pack from our server."""
    from fake_model import FakeModel, Text, ToolCall
    from harness_e2e import CAPTURE_TIMEOUT_S, World, processes_with_home

    cli, env, home, project = grok
    world = World(env, Path(env["HOME"]), project)
    world.remember(SEED_FACT)
    run([memverbs(), "install", "grok"], env, cwd=project)

    def offers(tool):
        return lambda path, body: any((t.get("function") or {}).get("name") == tool for t in body.get("tools") or [])

    with FakeModel() as api:
        with (home / "config.toml").open("a") as fh:  # a model of our own, appended after our block
            fh.write(f'\n[model.fake]\nmodel = "fake-model"\nbase_url = "{api.url}/v1"\napi_key = "x"\n'
                     'api_backend = "chat_completions"\ncontext_window = 128000\n')
        api.script(
            ToolCall("search_tool", {"query": "memverbs context pack"}, when=offers("search_tool")),
            ToolCall("use_tool", {"tool_name": "memverbs__context_pack",
                                  "tool_input": {"entities": "people/alice", "session_id": "grok-test"}}, when=offers("use_tool")),
            Text("done", when=offers("use_tool")),
        )
        world.harness([cli, "-p", "hi", "-m", "fake", "--always-approve"], {})
        requests = [r for r in api.model_requests() if offers("search_tool")(r.path, r.body)]
    assert requests, "Grok sent no agent request"
    assert any("Long-term memory (memverbs)" in text for _, text in requests[0].messages())
    results = [text for _, text in requests[-1].messages() if "context_pack" in text or SEED_FACT in text]
    assert any(SEED_FACT in text for text in results), results
    hook_runs = {(r["moment"], r["code"]) for r in world.hook_log() if r["harness"] == "grok"}
    assert ("session-start", "ok") in hook_runs or ("session-start", "empty") in hook_runs, hook_runs
    # The session's end started detached capture workers (bounded by their own clocks): they finish on their own.
    deadline = time.monotonic() + CAPTURE_TIMEOUT_S
    while processes_with_home(Path(env["HOME"])) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_with_home(Path(env["HOME"]))
    assert {e["code"] for e in world.capture_log()} >= {"ok"}, world.capture_log()


def test_the_pack_rides_on_the_first_tool_result(grok):
    """Grok drops SessionStart output but delivers PostToolUse additionalContext after the tool
    result: the request after the session's first tool call carries the pack, without the agent
    calling context_pack."""
    from fake_model import FakeModel, Text, ToolCall
    from harness_e2e import PACK_HEADER, World

    cli, env, home, project = grok
    world = World(env, Path(env["HOME"]), project)
    world.remember(SEED_FACT)
    run([memverbs(), "install", "grok"], env, cwd=project)

    def offers(tool):
        return lambda path, body: any((t.get("function") or {}).get("name") == tool for t in body.get("tools") or [])

    with FakeModel() as api:
        with (home / "config.toml").open("a") as fh:
            fh.write(f'\n[model.fake]\nmodel = "fake-model"\nbase_url = "{api.url}/v1"\napi_key = "x"\n'
                     'api_backend = "chat_completions"\ncontext_window = 128000\n')
        api.script(
            ToolCall("search_tool", {"query": "list files"}, when=offers("search_tool")),
            Text("done", when=offers("search_tool")),
        )
        world.harness([cli, "-p", "hi", "-m", "fake", "--always-approve"], {})
        requests = [r for r in api.model_requests() if offers("search_tool")(r.path, r.body)]
    assert len(requests) >= 2, [r.reply for r in requests]
    assert not any(SEED_FACT in text for _, text in requests[0].messages())  # SessionStart output: dropped
    after = [(role, text) for role, text in requests[1].messages() if PACK_HEADER in text and SEED_FACT in text]
    assert after, requests[1].messages()
    hook_runs = {(r["moment"], r["code"]) for r in world.hook_log() if r["harness"] == "grok"}
    assert ("post-tool", "ok") in hook_runs, hook_runs


def test_a_compaction_re_arms_the_pack_on_the_next_tool_result(grok):
    """A reply reporting nearly the model's whole context window makes Grok compact before it goes on;
    its PreCompact/PostCompact hooks re-arm the pack, and the next tool result carries it again.
    (Grok's compaction requests offer the tools too: they are told apart by their summary instruction.)"""
    from fake_model import FakeModel, Text, ToolCall
    from harness_e2e import PACK_HEADER, World, describe

    cli, env, home, project = grok
    world = World(env, Path(env["HOME"]), project)
    world.remember(SEED_FACT)
    run([memverbs(), "install", "grok"], env, cwd=project)

    def compaction(path, body):
        last = (body.get("messages") or [{}])[-1]
        return "produce a faithful, concise summary" in json.dumps(last.get("content"))

    def turn(path, body):
        return not compaction(path, body) and any((t.get("function") or {}).get("name") == "search_tool"
                                                  for t in body.get("tools") or [])

    with FakeModel() as api:
        with (home / "config.toml").open("a") as fh:
            fh.write(f'\n[model.fake]\nmodel = "fake-model"\nbase_url = "{api.url}/v1"\napi_key = "x"\n'
                     'api_backend = "chat_completions"\ncontext_window = 16000\n')
        api.script(
            ToolCall("search_tool", {"query": "list files"}, when=turn, input_tokens=15_900),
            ToolCall("search_tool", {"query": "list files again"}, when=turn, before=lambda: world.remember(CAT)),
            Text("done", when=turn),
        )
        world.harness([cli, "-p", "hi", "-m", "fake", "--always-approve"], {})
        requests = api.model_requests()
    runs = [(r["moment"], r["code"]) for r in world.hook_log() if r["harness"] == "grok"]
    assert ("post-compact", "ok") in runs, (runs, describe(requests))
    after = runs[max(i for i, (moment, _) in enumerate(runs) if moment == "post-compact"):]
    assert ("post-tool", "ok") in after, (runs, describe(requests))  # the re-armed pack went out
    last = [r for r in requests if turn(r.path, r.body)][-1]
    assert [t for _, t in last.messages() if PACK_HEADER in t and CAT in t], (runs, describe([last], limit=1200))
