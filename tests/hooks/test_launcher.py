"""The lean hook launcher the installers write (hooks/launcher.py) and its fast path (hooks/fastpath.py):
real cold processes started exactly as a harness starts them, through a shell."""

import gc
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import payloads
import pytest
from helpers import ROOMY_DEADLINE, installed_hook_command, page
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.hooks import capture as capture_hook
from memverbs.hooks import fastpath, launcher
from memverbs.hooks.events import Harness
from memverbs.hooks.launcher import LAUNCHER_MARK, bootstrap_argv, bootstrap_code
from memverbs.installers.base import Options, hook_command, hook_moment, launcher_step
from memverbs.installers.steps import Context
from memverbs.server.brain.factory import locate
from memverbs.server.home import Home
from memverbs.server.quickconfig import quick_settings

CHECKOUT = Path(__file__).resolve().parents[2]


def log_lines(home):
    path = home.logs / "hooks.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def shell(command: str, payload, env: dict, cwd=None) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(["/bin/sh", "-c", command], input=data, capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=30)


@pytest.fixture
def brain(local):
    page(local, "people/alice", "Alice Example", summary="Runs payments at Acme.")
    local.ok("remember", fact="Alice prefers async standups", provenance="chat", entity="people/alice")
    return local


def write_launcher(opts: Options) -> Path:
    """The launcher file exactly as `memverbs install` writes it (its step, on the disk)."""
    step = launcher_step(opts)
    step.apply(Context(backups=opts.home.backups / "test"))
    return step.path


@pytest.fixture
def lean(env):
    """Run a moment through the exact command `memverbs install claude` writes."""
    opts = Options(Harness.CLAUDE, env=env)
    write_launcher(opts)

    def run(moment: str, payload, *, extra_env=None, cwd=None) -> subprocess.CompletedProcess:
        return shell(f"{hook_command(opts, moment)} {shlex.join(ROOMY_DEADLINE)}", payload, {**env, **(extra_env or {})}, cwd)

    return run


def with_dirs(dirs: list[str]) -> str:
    """The bootstrap code with other recorded directories."""
    return re.sub(r"p=\[.*?\];", lambda _: f"p={json.dumps(dirs)};", bootstrap_code(), count=1)


def wait_unchanged(lean, home) -> subprocess.CompletedProcess:
    """Heartbeats until the cursor is past delta's in-flight lag and the fast path answers."""
    for _ in range(24):
        proc = lean("heartbeat", payloads.CLAUDE_PROMPT)
        if log_lines(home)[-1]["code"] == "unchanged":
            return proc
        time.sleep(0.25)
    raise AssertionError(f"no unchanged heartbeat: {log_lines(home)[-3:]}")


def test_the_installed_command_is_a_short_line_that_runs_the_launcher_file(tmp_path):
    argv = bootstrap_argv()
    assert argv[0] == sys.executable and argv[1:4] == ["-I", "-S", "-c"] and argv[-1] == "hook"
    user = tmp_path / "a-user-with-a-longish-name"
    env = {"HOME": str(user), "PATH": os.environ["PATH"]}  # the default home, as most users have it
    opts = Options(Harness.CLAUDE, env=env, home=Home(user / ".memverbs"))
    for moment in ("session-start", "post-compact", "heartbeat", "capture"):
        command = hook_command(opts, moment)
        assert command == f"{user}/.memverbs/bin/memverbs-hook {moment} --harness claude"
        assert len(command) <= 160 and hook_moment(command) == moment  # base.is_our_hook knows it
    script = write_launcher(opts).read_text()
    assert script.startswith(f"#!{sys.executable} -IS\n") and LAUNCHER_MARK in script and bootstrap_code() in script
    assert os.stat(write_launcher(opts)).st_mode & 0o777 == 0o755


def test_every_form_an_install_wrote_is_recognised_and_nothing_else():
    ours = {
        "/home/u/.memverbs/bin/memverbs-hook heartbeat --harness claude": "heartbeat",
        "MEMVERBS_HOME=/x '/a b/bin/memverbs-hook' capture --harness codex": "capture",
        shlex.join(bootstrap_argv()) + " session-start --harness claude": "session-start",
        "/usr/local/bin/memverbs hook post-compact --harness grok": "post-compact",
    }
    for command, moment in ours.items():
        assert hook_moment(command) == moment, command
    for command in ("echo hello", "memverbs-notes sync", "/opt/hook heartbeat", "memverbs recall --query hook"):
        assert hook_moment(command) is None, command


def test_session_start_and_heartbeats_through_the_launcher(lean, brain, local, home):
    start = lean("session-start", payloads.CLAUDE_SESSION_START)
    assert start.returncode == 0 and start.stderr == "", start.stderr
    assert "Alice prefers async standups" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    quiet = wait_unchanged(lean, home)
    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == ""
    # A change is on the very next prompt: the fast path hands over to the runner, stdin intact.
    local.ok("remember", fact="Alice moved to Lisbon", provenance="chat", entity="people/alice")
    beat = lean("heartbeat", payloads.CLAUDE_PROMPT)
    assert "Alice moved to Lisbon" in json.loads(beat.stdout)["hookSpecificOutput"]["additionalContext"]
    assert log_lines(home)[-1]["code"] == "ok"


@pytest.mark.parametrize(
    ("stdin", "code"),
    [("not json", "bad_input"), ("[1, 2]", "bad_input"), (json.dumps({"prompt": "no session"}), "bad_input")],
)
def test_input_the_fast_path_cannot_use_reaches_the_runner_intact(lean, brain, home, stdin, code):
    proc = lean("heartbeat", stdin)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert log_lines(home)[-1]["code"] == code


def test_a_remote_receipt_sends_the_heartbeat_to_the_runner(lean, brain, home):
    lean("session-start", payloads.CLAUDE_SESSION_START)
    wait_unchanged(lean, home)
    receipt = home.root / "integrations" / "claude" / "remote-receipt.json"
    receipt.parent.mkdir(parents=True, exist_ok=True)
    receipt.write_text(json.dumps({"remote_url": "http://127.0.0.1:9/mcp"}))  # nothing listens on port 9
    proc = lean("heartbeat", payloads.CLAUDE_PROMPT, extra_env={"MEMVERBS_REMOTE_TOKEN": "mv_x"})
    assert (proc.returncode, proc.stdout) == (0, "")
    assert log_lines(home)[-1]["code"] == "remote_unreachable"  # the remote brain was asked, not the local one


def test_the_kill_switch_and_a_bad_config_number(lean, brain, home):
    lean("session-start", payloads.CLAUDE_SESSION_START)
    wait_unchanged(lean, home)
    before = len(log_lines(home))
    off = lean("heartbeat", payloads.CLAUDE_PROMPT, extra_env={"MEMVERBS_HOOKS": "off"})
    assert (off.returncode, off.stdout, off.stderr, len(log_lines(home))) == (0, "", "", before)
    bad = lean("heartbeat", payloads.CLAUDE_PROMPT, extra_env={"MEMVERBS_BRAIN__BUSY_TIMEOUT_MS": "soon"})
    assert (bad.returncode, bad.stdout) == (0, "")
    assert log_lines(home)[-1]["code"] == "config_error"  # the fast path does not vouch for a config it cannot read


def test_a_package_in_the_project_directory_cannot_shadow_ours(lean, brain, home, tmp_path):
    project = tmp_path / "project"
    evil = project / "memverbs"
    evil.mkdir(parents=True)
    marker = tmp_path / "hijacked"
    (evil / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    proc = lean("session-start", payloads.CLAUDE_SESSION_START, cwd=project)
    assert proc.returncode == 0 and proc.stdout and not marker.exists()
    # PYTHONPATH is ignored too (-I): a harness's environment cannot redirect the hook.
    proc = lean("session-start", payloads.CLAUDE_SESSION_START, cwd=project, extra_env={"PYTHONPATH": str(project)})
    assert proc.returncode == 0 and proc.stdout and not marker.exists()


def test_a_moved_package_falls_back_to_site_through_the_launcher_file(env, brain, home):
    opts = Options(Harness.CLAUDE, env=env)
    path = write_launcher(opts)
    path.write_text(path.read_text().replace(bootstrap_code(), with_dirs(["/nonexistent/site-packages"])))
    proc = shell(hook_command(opts, "session-start"), payloads.CLAUDE_SESSION_START, env)
    assert proc.returncode == 0 and "Alice prefers async standups" in proc.stdout, proc.stderr


def test_an_interpreter_a_shebang_cannot_name_runs_through_sh(env, brain, home, tmp_path, monkeypatch):
    """A venv under a long path, or one with a space: the kernel would cut or split the `#!` line."""
    for name in ("with space", "long-" + "x" * 120):
        python = tmp_path / name / "bin" / "python3"
        python.parent.mkdir(parents=True)
        python.symlink_to(sys.executable)
        monkeypatch.setattr(sys, "executable", str(python))
        opts = Options(Harness.CLAUDE, env=env)
        script = write_launcher(opts).read_text()
        assert script.startswith("#!/bin/sh\n")
        proc = shell(hook_command(opts, "session-start"), payloads.CLAUDE_SESSION_START, env)
        assert proc.returncode == 0 and "Alice prefers async standups" in proc.stdout, (name, proc.stderr)


def test_a_moved_package_falls_back_to_site(env, brain, home):
    """The recorded directory no longer holds memverbs (a venv rebuilt for a new Python, an editable
    install replaced by a wheel): the bootstrap runs `site` and finds the memverbs this interpreter has."""
    stale = with_dirs(["/nonexistent/site-packages"])
    assert stale != bootstrap_argv()[4]
    command = shlex.join([*bootstrap_argv()[:4], stale, "hook"]) + " session-start --harness claude"
    proc = shell(command, payloads.CLAUDE_SESSION_START, env)
    assert proc.returncode == 0 and "Alice prefers async standups" in proc.stdout, proc.stderr


def test_a_broken_install_is_silent_and_exits_0(env, brain, home, tmp_path):
    """A package whose runner cannot be imported: the session goes on, nothing printed."""
    pkg = tmp_path / "broken" / "memverbs"
    shutil.copytree(CHECKOUT / "hooks", pkg / "hooks", ignore=shutil.ignore_patterns("__pycache__", "runner.py"))
    (pkg / "__init__.py").write_text("")
    argv, code = bootstrap_argv(), with_dirs([str(pkg.parent)])
    for moment, payload in (("session-start", payloads.CLAUDE_SESSION_START), ("heartbeat", payloads.CLAUDE_PROMPT)):
        proc = subprocess.run([*argv[:4], code, "hook", moment, "--harness", "claude"], input=json.dumps(payload),
                              capture_output=True, text=True, env=env, timeout=30)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def fast_path_probe(env, then: str, payload: dict | None = None) -> tuple[str, str]:
    """A heartbeat through the launcher's bootstrap that asks the fast path alone: whether it
    answered, then what the Python expression `then` says about the process afterwards."""
    payload = payloads.CLAUDE_PROMPT if payload is None else payload
    argv = bootstrap_argv()
    probe = argv[4].replace("main()", "main() if False else None") + (
        ";import memverbs.hooks.fastpath as f,time;print(f.answer_unchanged(sys.argv[2:], time.monotonic())[0]);"
        f"print({then})"
    )
    proc = subprocess.run([*argv[:4], probe, "hook", "heartbeat", "--harness", "claude"],
                          input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=30)
    answered, said = proc.stdout.splitlines()[-2:]
    return answered, said


def test_the_fast_path_imports_no_runner_module(env, brain, home, lean):
    lean("session-start", payloads.CLAUDE_SESSION_START)
    wait_unchanged(lean, home)
    modules = "sorted(m for m in sys.modules if m.startswith(('memverbs','pathlib','dataclasses','hashlib','tempfile','typing')))"
    no_prompt = {k: v for k, v in payloads.CLAUDE_PROMPT.items() if k != "prompt"}
    answered, loaded = fast_path_probe(env, modules, no_prompt)
    assert answered == "True"
    assert eval(loaded) == ["memverbs", "memverbs.hooks", "memverbs.hooks.basics", "memverbs.hooks.fastpath",
                            "memverbs.hooks.launcher", "memverbs.server", "memverbs.server.brain",
                            "memverbs.server.brain.plain"]
    # A prompt adds the reflex's name index (naming nothing here), still none of the runner's modules.
    answered, loaded = fast_path_probe(env, modules)
    assert answered == "True"
    assert eval(loaded) == ["memverbs", "memverbs.hooks", "memverbs.hooks.basics", "memverbs.hooks.fastpath",
                            "memverbs.hooks.launcher", "memverbs.hooks.reflex", "memverbs.server", "memverbs.server.brain",
                            "memverbs.server.brain.plain", "memverbs.server.common_words", "memverbs.server.name_index",
                            "memverbs.server.record", "memverbs.server.terms", "memverbs.server.verbs",
                            "memverbs.server.verbs.pointers"]



def test_a_change_the_fast_path_found_goes_straight_to_delta(env, brain, home, lean):
    """The fast path tells the runner what its one read found, so a delivering heartbeat asks once."""
    lean("session-start", payloads.CLAUDE_SESSION_START)
    wait_unchanged(lean, home)
    assert fast_path_probe(env, "0") == ("True", "0")
    brain.ok("remember", fact="Alice moved the standup to Fridays", provenance="chat", entity="people/alice")
    argv = bootstrap_argv()
    probe = argv[4].replace("main()", "main() if False else None") + (
        ";import memverbs.hooks.fastpath as f,time;done,raw,changed=f.answer_unchanged(sys.argv[2:], time.monotonic());"
        "print(done, changed, raw is not None)"
    )
    for _ in range(24):  # until the fact is past delta's in-flight lag
        proc = subprocess.run([*argv[:4], probe, "hook", "heartbeat", "--harness", "claude"],
                              input=json.dumps(payloads.CLAUDE_PROMPT), capture_output=True, text=True, env=env, timeout=30)
        if proc.stdout.split() == ["False", "True", "True"]:
            break
        time.sleep(0.25)
    assert proc.stdout.split() == ["False", "True", "True"], proc.stdout
    delivered = lean("heartbeat", payloads.CLAUDE_PROMPT)
    assert "standup to Fridays" in delivered.stdout and log_lines(home)[-1]["code"] == "ok"


def test_the_fast_path_parses_the_config_file_once_per_edit(env, brain, home, lean):
    home.config_path.write_text('protocol_installed_at = "2026-11-30T10:00:00Z"\nsource = "default"\n')
    lean("session-start", payloads.CLAUDE_SESSION_START)
    wait_unchanged(lean, home)

    def heartbeat() -> tuple[str, str]:
        return fast_path_probe(env, "'tomllib' in sys.modules")

    assert heartbeat() == ("True", "False")  # the copy the earlier heartbeats left: no TOML parser
    copy = home.root / "hooks" / "config.json"
    assert json.loads(copy.read_text())["data"]["source"] == "default" and copy.stat().st_mode & 0o077 == 0
    # An edit is seen at once: another source has no cursor for this session, so the fast path steps aside.
    home.config_path.write_text('protocol_installed_at = "2026-11-30T10:00:00Z"\nsource = "elsewhere"\n')
    assert heartbeat() == ("False", "True")
    assert json.loads(copy.read_text())["data"]["source"] == "elsewhere"
    copy.write_text("{not json")  # a damaged copy: parsed again, and replaced
    assert heartbeat() == ("False", "True") and json.loads(copy.read_text())["data"]["source"] == "elsewhere"


# Modules that cost a hook more to import than its work: each is needed only off the hooks' path
# (an RFC 2822 date, a logged bug, reindex's snapshot removal, a provider's failure, a dataclass —
# the hook's records are server/record.py's —, a TOML file the hooks read through their parsed copy,
# a page's Markdown, OpenSSL's digests).
HEAVY = ("email", "logging", "decimal", "shutil", "socket", "random", "mcp", "pydantic", "httpx", "dataclasses", "inspect",
         "tomllib", "hashlib", "_hashlib",
         # the in-process fact ranking's locks and arrays: a ranked recall's, not an open's
         "threading", "bisect", "array",
         # typing: the type checker's flag is a module constant on the path (TYPE_CHECKING = False)
         "typing",
         # pathlib and what it imports: the home, the brain's location and its file are strings there
         "pathlib", "urllib", "ipaddress")
# Our own modules a delivering heartbeat does without (a session start shows cards, so it reads page
# summaries: the Markdown module is its to import).
HEAVY_OURS = ("memverbs.server.pages", "memverbs.server.verbs.search", "memverbs.server.protocol.schemas",
              "memverbs.server.brain.vector_index", "memverbs.server.sync", "memverbs.remote",
              # a current brain is opened without building its list of schema steps, nor importing the
              # schema modules it is written in (server/brain/migrations.py, `steps`; sqlite_migrate.current),
              # and ranks no fact
              "memverbs.server.brain.schema", "memverbs.server.brain.postgres", "memverbs.server.brain.sqlite_fact_rank")


def test_a_delivering_heartbeat_and_a_session_start_skip_the_heavy_modules(env, brain, home):
    argv = bootstrap_argv()
    # The hook leaves by os._exit (runner.exit_now): the probe lists the modules on its way out.
    probe = argv[4].replace("main()", "main() if False else None") + (
        ";_exit=os._exit;os._exit=lambda c:(sys.stderr.write(repr(sorted({m.split('.')[0] for m in sys.modules}"
        " | {m for m in sys.modules if m.startswith('memverbs.')}))),sys.stderr.flush(),_exit(c));main()"
    )
    payload = dict(payloads.CLAUDE_PROMPT, session_id="heavy-1")

    def run(moment: str, event: dict) -> set[str]:
        proc = subprocess.run([*argv[:4], probe, "hook", moment, "--harness", "claude"], input=json.dumps(event),
                              capture_output=True, text=True, env=env, timeout=30)
        assert log_lines(home)[-1]["code"] == "ok", (log_lines(home)[-1], proc.stderr)
        return set(eval(proc.stderr))

    started = run("session-start", dict(payload, hook_event_name="SessionStart"))
    assert {"memverbs.server.brain.sqlite", "memverbs.server.verbs.readout"} <= started  # the probe saw a real start
    brain.ok("remember", fact="Alice moved the standup to Fridays", provenance="chat", entity="people/alice")
    delivered = run("heartbeat", payload)
    assert not started & set(HEAVY) and not delivered & set(HEAVY), (started & set(HEAVY), delivered & set(HEAVY))
    assert not {m for m in delivered if m.startswith(HEAVY_OURS)}, delivered
    assert not {m for m in started if m.startswith(HEAVY_OURS[1:])}, started


def test_a_hook_process_runs_without_the_cyclic_collector(env, brain, home, monkeypatch):
    """A hook lives for milliseconds and exits: the collector's passes over a session start's imports
    are time the harness waits for (hooks/launcher.py). The session's end hands a transcript to a
    worker that may live for seconds: the collector is on again before it starts."""
    argv = bootstrap_argv()
    probe = argv[4].replace("main()", "main() if False else None") + (
        ";import gc;_exit=os._exit;os._exit=lambda c:(sys.stderr.write(repr(gc.isenabled())),sys.stderr.flush(),_exit(c));main()"
    )
    proc = subprocess.run([*argv[:4], probe, "hook", "session-start", "--harness", "claude"],
                          input=json.dumps(dict(payloads.CLAUDE_PROMPT, session_id="gc-1", hook_event_name="SessionStart")),
                          capture_output=True, text=True, env=env, timeout=30)
    assert log_lines(home)[-1]["code"] == "ok" and proc.stderr == "False", proc.stderr

    enabled = []

    def leave(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(sys, "argv", ["memverbs-hook", "capture", "--harness", "claude"])
    monkeypatch.setattr(capture_hook, "run_capture_hook", lambda *_: enabled.append(gc.isenabled()))
    monkeypatch.setattr(os, "_exit", leave)
    try:
        with pytest.raises(SystemExit):
            launcher.main()
    finally:
        gc.enable()
    assert enabled == [True]


KEYS = st.sampled_from(["source", "brain.path", "brain.url"])
VALUES = st.sampled_from(["", " ", "default", "work", "brain.db", "other.db", "/abs/b.db", "~/b.db", "sub/b.db",
                          "sqlite:///x.db", "postgresql://u@h/db"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=st.dictionaries(KEYS, VALUES, max_size=3), environ=st.dictionaries(KEYS, VALUES, max_size=3))
def test_the_fast_path_finds_the_brain_and_source_the_runner_would(tmp_path, monkeypatch, config, environ):
    root = tmp_path / "fp-home"
    root.mkdir(exist_ok=True)
    lines = [f'source = "{config["source"]}"'] if "source" in config else []
    brain = {k.split(".")[1]: v for k, v in config.items() if k.startswith("brain.")}
    if brain:
        lines += ["[brain]", *(f'{k} = "{v}"' for k, v in brain.items())]
    (root / "config.toml").write_text("\n".join(lines) + "\n")
    for key in ("source", "brain.path", "brain.url"):
        monkeypatch.delenv("MEMVERBS_" + key.upper().replace(".", "__"), raising=False)
    for key, value in environ.items():
        monkeypatch.setenv("MEMVERBS_" + key.upper().replace(".", "__"), value)
    monkeypatch.setenv("MEMVERBS_HOME", str(root))
    home = Home.from_env()
    full = quick_settings(home)
    path, source, reflex = fastpath._sqlite_brain(fastpath.home_root())
    assert source == full.source
    assert fastpath.reflex_on(reflex) == fastpath.reflex_on(full.hook_reflex)
    try:
        where = locate(full.brain_url, home, full.brain_path)
    except Exception:  # noqa: BLE001 - a URL the full path refuses: the fast path must not have vouched for it
        assert path is None
        return
    if path is not None:  # the fast path answers only for a plain brain.path, and then agrees exactly
        assert where.backend == "sqlite" and os.path.abspath(path) == os.path.abspath(where.path)
    else:
        assert full.brain_url.strip()


@pytest.mark.parametrize("deadline_ms", [250, 600])
def test_a_locked_brain_keeps_the_heartbeat_inside_its_deadline(env, brain, local, home, runtime, deadline_ms):
    """The fast path's wait on a lock and the runner's share one budget: the hook ends silent, locked or on
    its deadline. (How long it took is measured by benchmarks/faults.py, not asserted here.)"""
    runtime.close()
    db = sqlite3.connect(home.root / "brain.db", isolation_level=None)
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("BEGIN EXCLUSIVE")
    try:
        command = installed_hook_command(Options(Harness.CLAUDE, env=env), "heartbeat") + f" --deadline-ms {deadline_ms}"
        proc = shell(command, payloads.CLAUDE_PROMPT, env)
    finally:
        db.execute("ROLLBACK")
        db.close()
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    last = log_lines(home)[-1]
    assert last["code"] in ("brain_locked", "deadline"), last
