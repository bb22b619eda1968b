"""What each harness sends memverbs's hooks and what its model then receives: the one place to update
when a harness (or our plugin for it) changes what it sends.

* The hook commands are the ones `memverbs install <harness>` writes: it runs for real into a throwaway
  HOME (Claude Code's needs the `claude` CLI on PATH; without it the installer's own plan function gives
  the same command, and the run says so), once per harness and memverbs source, with a placeholder
  MEMVERBS_HOME that each fixture's own home replaces (`Install.for_home`).
* Claude Code and Codex run a command hook as `sh -c <command>` with the event's JSON on stdin
  (HARNESSES.md §1-2, tests/support/payloads.py); the model receives `hookSpecificOutput.additionalContext`
  (or plain stdout) as a system (Claude Code) or developer (Codex) message in the next request.
* OpenClaw runs our plugin (plugin/openclaw/index.js) in the Gateway: here the real plugin file is
  loaded by a small node driver (brainbench_openclaw.mjs) with the hook events OpenClaw 2026.9 sends,
  and the model receives what `before_prompt_build` returns (`prependContext` before the user's
  message, `appendContext` after it). Whatever the plugin sends the hook is therefore what it really
  sends: change the plugin and this benchmark follows.

Each harness also writes the session's transcript where it keeps it (brainbench_transcripts.py), and
ends the session as it does: SessionEnd with `transcript_path` (Claude Code, Codex) or the plugin's
`session_end` (OpenClaw: the session lives in its SQLite store, found by id). The turn-end `Stop` hook,
which captures a live session at most every five minutes, is not fired: in a session this short it
would capture a prefix of the same transcript, which the session's end captures whole.

Every hook process a turn ran is recorded with the payload it was sent and what it printed
(`Delivery.calls`; for OpenClaw the driver wraps `child_process.spawn`), so `-v` shows what each harness
really sends.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from benchmarks import brainbench_transcripts as transcripts
from benchmarks.brainbench_data import Turn
from benchmarks.brainbench_score import Delivery
from benchmarks.processes import memverbs_cmd

HARNESSES = ("claude-code", "codex", "openclaw")
# BrainBench's harness names → memverbs's (`--harness`, provenance `capture:<harness> session <id>`).
MEMVERBS_NAME = {"claude-code": "claude", "codex": "codex", "openclaw": "openclaw"}
ALIASES = {"claude": "claude-code", "claude-code": "claude-code", "codex": "codex", "openclaw": "openclaw"}
HERE = Path(__file__).resolve().parent
DRIVER = HERE / "brainbench_openclaw.mjs"
PLUGIN = HERE.parent / "plugin" / "openclaw"
PLACEHOLDER = "brainbench-home-placeholder"


class HarnessUnavailable(Exception):
    """This harness cannot be replayed here (no node for OpenClaw's plugin): the run skips it and says why."""


# -- the installed commands --------------------------------------------------------------------


@dataclass
class Install:
    harness: str
    how: str  # "memverbs install" | why the installer's plan was read instead
    commands: dict[str, tuple[str, float]]  # Claude's event name → (shell command, timeout s)
    plugin: dict | None  # OpenClaw: plugins.entries.memverbs.config
    placeholder: str

    def for_home(self, home: Path) -> Install:
        """The same install with `home` as its MEMVERBS_HOME (the placeholder replaced, exactly once)."""
        old, new = f"MEMVERBS_HOME={shlex.quote(self.placeholder)}", f"MEMVERBS_HOME={shlex.quote(str(home))}"
        commands = {}
        for event, (cmd, timeout) in self.commands.items():
            if cmd.count(old) != 1:
                raise RuntimeError(f"{self.harness} {event}: the installed command does not set MEMVERBS_HOME once: {cmd}")
            commands[event] = (cmd.replace(old, new), timeout)
        plugin = None
        if self.plugin is not None:
            plugin = json.loads(json.dumps(self.plugin))
            if plugin.get("env", {}).get("MEMVERBS_HOME") != self.placeholder:
                raise RuntimeError(f"openclaw: the installed plugin config does not set MEMVERBS_HOME: {self.plugin}")
            plugin["env"]["MEMVERBS_HOME"] = str(home)
        return Install(self.harness, self.how, commands, plugin, str(home))


def install(harness: str, workdir: Path, source: str) -> Install:
    """Run `memverbs install` for `harness` into a throwaway HOME with `source` as MEMVERBS_SOURCE,
    and read back the hook commands it wrote."""
    user_home = workdir / f"install-{harness}-{source}"
    shutil.rmtree(user_home, ignore_errors=True)
    user_home.mkdir(parents=True)
    placeholder = str(workdir / PLACEHOLDER)
    env = {**harness_env(user_home), "MEMVERBS_HOME": placeholder}
    if source != "default":
        env["MEMVERBS_SOURCE"] = source
    name = MEMVERBS_NAME[harness]
    proc = subprocess.run([*memverbs_cmd(), "install", name, "--json"], env=env, capture_output=True, text=True,
                          timeout=120, cwd=user_home)
    how = "memverbs install"
    if harness == "claude-code":
        settings = user_home / ".claude" / "settings.json"
        if proc.returncode != 0 or not settings.exists():
            how = f"the installer's plan (`memverbs install claude` failed here: {proc.stderr.strip().splitlines()[:1]})"
            commands = _claude_plan(user_home, placeholder, env)
        else:
            commands = _hook_commands(json.loads(settings.read_text()))
        return Install(harness, how, commands, None, placeholder)
    if proc.returncode != 0:
        raise RuntimeError(f"memverbs install {name} failed: {proc.stderr.strip()}")
    if harness == "codex":
        return Install(harness, how, _hook_commands(json.loads((user_home / ".codex" / "hooks.json").read_text())), None, placeholder)
    config = json.loads((user_home / ".openclaw" / "openclaw.json").read_text())
    return Install(harness, how, {}, config["plugins"]["entries"]["memverbs"]["config"], placeholder)


def _hook_commands(settings: dict) -> dict[str, tuple[str, float]]:
    out = {}
    for event, groups in (settings.get("hooks") or {}).items():
        for group in groups:
            for hook in group.get("hooks") or []:
                if " hook " in f" {hook.get('command', '')} " and "memverbs" in hook.get("command", ""):
                    out[event] = (hook["command"], float(hook.get("timeout", 60)))
    return out


def _claude_plan(user_home: Path, placeholder: str, env: dict) -> dict[str, tuple[str, float]]:
    from memverbs.hooks.events import Harness  # noqa: PLC0415
    from memverbs.installers import claude  # noqa: PLC0415
    from memverbs.installers.base import Options  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415

    opts = Options(Harness.CLAUDE, project_dir=user_home, home=Home(Path(placeholder)), env=env)
    return _hook_commands({"hooks": {event: [claude.hook_group(opts, event)] for event in claude.EVENTS}})


# -- one session in each harness -------------------------------------------------------------------


class Session:
    """One harness session over one brain: its start, each user prompt, its end (and capture)."""

    harness = ""

    def __init__(self, install: Install, user_home: Path, cwd: Path, started: float) -> None:
        self.install, self.user_home, self.cwd, self.started = install, user_home, cwd, started
        self.session_id = self.new_id()
        self.env = harness_env(user_home)

    def new_id(self) -> str:
        return str(uuid.uuid4())

    def start(self) -> Delivery:
        raise NotImplementedError

    def prompt(self, turn: Turn, history: list[Turn]) -> Delivery:
        raise NotImplementedError

    def end(self, turns: list[Turn], given: dict[int, Delivery], start: Delivery) -> str:
        """Write the transcript and end the session as the harness does: "ran", or what went wrong."""
        raise NotImplementedError

    def close(self) -> None:
        pass


def harness_env(user_home: Path) -> dict[str, str]:
    """The harness's environment: the user's, with a throwaway HOME and no memverbs variable of ours
    (the installed command carries its own MEMVERBS_HOME and MEMVERBS_SOURCE)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVERBS_", "CODEX_", "CLAUDE_", "OPENCLAW_"))}
    env["HOME"] = str(user_home)
    return env


class CommandHookSession(Session):
    """Claude Code and Codex: shell hooks from settings, Claude's payloads and output format."""

    max_output: int | None = None  # stdout longer than this never reaches the model
    def _run(self, event: str, payload: dict) -> tuple[str, Delivery]:
        cmd, timeout = self.install.commands[event]
        delivery = Delivery()
        call = {"moment": event, "payload": payload, "stdout": ""}
        delivery.calls.append(call)
        started = time.perf_counter()
        try:
            proc = subprocess.run(["/bin/sh", "-c", cmd], input=json.dumps(payload), env=self.env, cwd=self.cwd,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            delivery.ms = (time.perf_counter() - started) * 1000
            delivery.problems.append(f"{event}: no answer within the harness's {timeout:g} s timeout")
            return "", delivery
        delivery.ms = (time.perf_counter() - started) * 1000
        delivery.raw = {"stdout": proc.stdout, "command": cmd}
        call["stdout"] = proc.stdout
        if proc.returncode != 0:
            delivery.problems.append(f"{event}: exit {proc.returncode}: {proc.stderr.strip()[:200]}")
            return "", delivery
        if self.max_output is not None and len(proc.stdout) > self.max_output:
            delivery.problems.append(f"{event}: {len(proc.stdout)} characters of output, over the harness's "
                                     f"{self.max_output}: not injected")
            return "", delivery
        return model_text(proc.stdout, delivery, event), delivery

    def base_payload(self, event: str) -> dict:
        return {"session_id": self.session_id, "transcript_path": str(self.transcript_path()), "cwd": str(self.cwd),
                "hook_event_name": event}

    def transcript_path(self) -> Path:
        raise NotImplementedError

    def start(self) -> Delivery:
        text, delivery = self._run("SessionStart", {**self.base_payload("SessionStart"), "source": "startup",
                                                     **self.start_extra()})
        delivery.parts["session-start"] = text
        return delivery

    def prompt(self, turn: Turn, history: list[Turn]) -> Delivery:
        payload = {**self.base_payload("UserPromptSubmit"), "prompt": turn.text, **self.prompt_extra(turn)}
        text, delivery = self._run("UserPromptSubmit", payload)
        delivery.parts["prompt"] = text
        return delivery

    def start_extra(self) -> dict:
        return {}

    def prompt_extra(self, turn: Turn) -> dict:
        return {}

    def end(self, turns: list[Turn], given: dict[int, Delivery], start: Delivery) -> str:
        self.write_transcript(turns, given, start)
        _, delivery = self._run("SessionEnd", {**self.base_payload("SessionEnd"), **self.end_extra()})
        return "; ".join(delivery.problems) or "ran"

    def end_extra(self) -> dict:
        return {}

    def write_transcript(self, turns: list[Turn], given: dict[int, Delivery], start: Delivery) -> None:
        raise NotImplementedError


def model_text(stdout: str, delivery: Delivery, event: str) -> str:
    """What Claude Code and Codex put in front of the model from a hook's stdout: JSON's
    `hookSpecificOutput.additionalContext`, or the plain text itself."""
    out = stdout.strip()
    if not out:
        return ""
    if out.startswith("{"):
        try:
            data = json.loads(out)
        except ValueError:
            delivery.problems.append(f"{event}: stdout starts like JSON but does not parse")
            return out
        spec = data.get("hookSpecificOutput") if isinstance(data, dict) else None
        context = spec.get("additionalContext") if isinstance(spec, dict) else None
        return context if isinstance(context, str) else ""
    return out


class ClaudeSession(CommandHookSession):
    harness = "claude-code"
    max_output = 10_000  # Claude Code diverts longer hook output to a file instead (HARNESSES.md §1)

    def __init__(self, install: Install, user_home: Path, cwd: Path, started: float) -> None:
        super().__init__(install, user_home, cwd, started)
        self.env["CLAUDE_PROJECT_DIR"] = str(cwd)  # Claude Code sets it for every hook

    def transcript_path(self) -> Path:
        return transcripts.claude_path(self.user_home, self.cwd, self.session_id)

    def prompt_extra(self, turn: Turn) -> dict:
        return {"prompt_id": str(uuid.uuid4()), "permission_mode": "default"}

    def end_extra(self) -> dict:
        return {"reason": "prompt_input_exit"}

    def write_transcript(self, turns: list[Turn], given: dict[int, Delivery], start: Delivery) -> None:
        transcripts.write_claude(self.transcript_path(), self.session_id, self.cwd, turns, given, start, self.started)


class CodexSession(CommandHookSession):
    harness = "codex"
    MODEL = "gpt-5-codex"

    def new_id(self) -> str:
        return transcripts.uuid7(time.time())

    def transcript_path(self) -> Path:
        return transcripts.codex_path(self.user_home, self.session_id, self.started)

    def start_extra(self) -> dict:
        return {"model": self.MODEL, "permission_mode": "default"}

    def prompt_extra(self, turn: Turn) -> dict:
        return {"model": self.MODEL, "turn_id": str(uuid.uuid4()), "permission_mode": "default"}

    def end_extra(self) -> dict:
        return {"model": self.MODEL, "permission_mode": "default"}

    def write_transcript(self, turns: list[Turn], given: dict[int, Delivery], start: Delivery) -> None:
        transcripts.write_codex(self.transcript_path(), self.session_id, self.cwd, turns, given, start, self.started)


class OpenclawSession(Session):
    """OpenClaw: the real plugin, driven by node with the events the Gateway sends."""

    harness = "openclaw"
    AGENT = "main"

    def __init__(self, install: Install, user_home: Path, cwd: Path, started: float, plugin_copy: Path) -> None:
        super().__init__(install, user_home, cwd, started)
        node = shutil.which("node", path=self.env.get("PATH"))
        if node is None:
            raise HarnessUnavailable("node is not on PATH: OpenClaw's plugin cannot be loaded")
        self.session_key = f"agent:{self.AGENT}:main"
        self.proc = subprocess.Popen([node, str(DRIVER), (plugin_copy / "index.js").as_uri(), json.dumps(install.plugin)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=self.env, cwd=self.cwd)
        self.ctx = {"agentId": self.AGENT, "sessionId": self.session_id, "sessionKey": self.session_key,
                    "workspaceDir": str(cwd)}
        self.pack = ""  # the session-start (or post-compact) hook's text, which the plugin re-sends every turn
        self.prompts = 0

    def _hook(self, name: str, event: dict, ctx: dict) -> tuple[dict | None, Delivery]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"hook": name, "event": event, "ctx": ctx}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        delivery = Delivery()
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            delivery.problems.append(f"{name}: the node driver exited: {err.strip()[:300]}")
            return None, delivery
        answer = json.loads(line)
        delivery.ms = float(answer.get("ms") or 0.0)
        if answer.get("error"):
            delivery.problems.append(f"{name}: the plugin threw: {answer['error'][:200]}")
        for run in answer.get("runs") or []:  # the hook processes the plugin ran, as the driver saw them spawned
            payload = _json_or_text(run.get("stdin", ""))
            delivery.calls.append({"moment": run.get("moment"), "payload": payload, "stdout": run.get("stdout", "")})
            if run.get("moment") in PACK_MOMENTS and run.get("code") == 0:
                self.pack = run.get("stdout", "").strip()  # what runHook resolves with: the plugin caches it per session
        result = answer.get("result")
        return result if isinstance(result, dict) else None, delivery

    def start(self) -> Delivery:
        _, delivery = self._hook("session_start", {"sessionId": self.session_id, "sessionKey": self.session_key}, self.ctx)
        return delivery  # the plugin caches the pack; the model gets it with each prompt

    def prompt(self, turn: Turn, history: list[Turn]) -> Delivery:
        event = {"prompt": turn.text, "currentUserMessage": turn.text, "currentUserMessageId": str(uuid.uuid4()),
                 "messages": [transcripts.openclaw_message(t) for t in history]}
        ctx = {**self.ctx, "trigger": "user", "runId": str(uuid.uuid4())}
        result, delivery = self._hook("before_prompt_build", event, ctx)
        result = result or {}
        for key in ("prependSystemContext", "appendSystemContext", "prependContext", "appendContext"):
            if isinstance(result.get(key), str):
                delivery.parts[key] = result[key]
        if self.prompts and self.pack:
            _carry(delivery, self.pack)
        self.prompts += 1
        return delivery

    def end(self, turns: list[Turn], given: dict[int, Delivery], start: Delivery) -> str:
        transcripts.write_openclaw(self.user_home, self.AGENT, self.session_id, self.cwd, turns, self.started)
        messages = sum(1 for _ in turns)
        _, delivery = self._hook("session_end", {"sessionId": self.session_id, "sessionKey": self.session_key,
                                                 "messageCount": messages, "reason": "idle"}, self.ctx)
        return "; ".join(delivery.problems) or "ran"

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


PACK_MOMENTS = ("session-start", "post-compact")


def _carry(delivery: Delivery, pack: str) -> None:
    """After the first prompt, the cached pack the plugin sends again (OpenClaw keeps no prependContext in
    its history, so the plugin re-sends it every turn) is context the model was given already: carried, not
    injected. Whatever else the turn's parts hold stays an injection."""
    for key, text in list(delivery.parts.items()):
        if text.strip() == pack:
            delivery.carried[key] = delivery.parts.pop(key)
        elif pack in text:
            delivery.carried[key] = pack
            delivery.parts[key] = text.replace(pack, "", 1).strip()


def _json_or_text(raw: str) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


SESSIONS: dict[str, type[Session]] = {"claude-code": ClaudeSession, "codex": CodexSession, "openclaw": OpenclawSession}


def plugin_copy(workdir: Path) -> Path:
    """This checkout's OpenClaw plugin, copied with the one SDK module it imports (definePluginEntry: the
    identity, as OpenClaw's own is for a plugin entry)."""
    root = workdir / "openclaw-plugin"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(PLUGIN, root)
    sdk = root / "node_modules" / "openclaw"
    (sdk / "plugin-sdk").mkdir(parents=True)
    (sdk / "package.json").write_text(json.dumps({"name": "openclaw", "type": "module",
                                                  "exports": {"./plugin-sdk/plugin-entry": "./plugin-sdk/plugin-entry.js"}}))
    (sdk / "plugin-sdk" / "plugin-entry.js").write_text("export const definePluginEntry = (options) => options;\n")
    return root


def node_available() -> bool:
    return shutil.which("node") is not None


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
