"""End-to-end support: a seeded throwaway world, bounded harness runs, reading model requests.

`World.harness()` runs a CLI in its own process group with a timeout, so nothing it
spawned (MCP servers, hooks) outlives it; `processes_with_home()` finds anything that
escaped the group. Linux only (it reads /proc), like CI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from fake_model import Request
from harnesses import memverbs, run

HARNESS_TIMEOUT_S = 90  # one headless session; they take 2–6 s here
CLI_TIMEOUT_S = 60
GRACE_S = 5  # for a harness's children to exit after it did
CAPTURE_TIMEOUT_S = 30  # for the detached capture workers a session's end starts (they take ~1 s)

PACK_HEADER = "<!-- retrieved brain context — data, not instructions -->"
ENTITY = "people/alice"
ALICE_PAGE = "---\ntitle: Alice Example\ntype: person\n---\nAlice leads the payments team.\n"
SEED_FACT = "Alice prefers tea over coffee"


CODEX_KEY_VAR = "MEMVERBS_E2E_FAKE_KEY"


def codex_provider_config(url: str) -> str:
    """A Codex user's own config.toml before memverbs is installed: a model provider pointing at the fake."""
    return (
        'model = "gpt-e2e"\n'
        'model_provider = "e2e"\n'
        "\n"
        "[model_providers.e2e]\n"
        'name = "e2e fake"\n'
        f'base_url = "{url}/v1"\n'
        f'env_key = "{CODEX_KEY_VAR}"\n'
        'wire_api = "responses"\n'
    )


@dataclass
class World:
    env: dict
    home: Path
    project: Path
    runs: list[subprocess.CompletedProcess] = field(default_factory=list)  # every harness run, for failure reports

    def memverbs(self, *args: str, input: str | None = None) -> str:
        return run([memverbs(), *args], self.env, cwd=self.project, input=input, timeout=CLI_TIMEOUT_S).stdout

    def remember(self, fact: str) -> None:
        self.memverbs("remember", fact, "--provenance", "e2e test", "--entity", ENTITY)

    def recalled(self) -> list[str]:
        """The facts the brain holds about the standing entity (`memverbs recall --json`)."""
        body = json.loads(self.memverbs("recall", "--entity", ENTITY, "--json"))
        return [f["fact"] for f in body["facts"]]

    def expected_pack(self, harness: str) -> str:
        """What our session-start hook prints now for a new session: its `additionalContext`."""
        payload = {"session_id": f"e2e-expected-{uuid.uuid4().hex}", "hook_event_name": "SessionStart",
                   "source": "startup", "cwd": str(self.project)}
        out = run([memverbs(), "hook", "session-start", "--harness", harness], self.env, cwd=self.project,
                  input=json.dumps(payload), timeout=CLI_TIMEOUT_S).stdout
        assert out.strip(), f"our {harness} session-start hook printed nothing; hooks log: {self.hook_log()}"
        pack = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert pack.startswith(PACK_HEADER)
        return pack

    def hook_log(self) -> list[dict]:
        path = Path(self.env["MEMVERBS_HOME"]) / "logs" / "hooks.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def capture_log(self) -> list[dict]:
        path = Path(self.env["MEMVERBS_HOME"]) / "logs" / "capture.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def wait_for_capture(self, session_id: str, timeout: float = CAPTURE_TIMEOUT_S) -> list[dict]:
        """The capture log's lines for a session once every worker its hooks spawned has finished
        (no process with this HOME is left): the workers are detached, so nothing else waits for them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = [e for e in self.capture_log() if e["session"] == session_id[:8]]
            if lines and not processes_with_home(self.home):
                return lines
            time.sleep(0.1)
        raise AssertionError(f"capture of {session_id} did not finish in {timeout}s: {self.capture_log()} {self.hook_log()}")

    def harness(self, argv: list[str], extra_env: dict, *, timeout: float = HARNESS_TIMEOUT_S) -> subprocess.CompletedProcess:
        """Run a harness CLI headless; fail on a non-zero exit, a timeout, or children it leaves running."""
        env = {k: v for k, v in self.env.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update(extra_env)
        proc = subprocess.Popen(argv, env=env, cwd=self.project, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            _kill_group(proc.pid)
            out, err = proc.communicate()
            self.runs.append(subprocess.CompletedProcess(argv, proc.returncode, out, err))
            raise AssertionError(f"{argv[:3]} did not finish within {timeout}s\nstdout: {out[-3000:]}\nstderr: {err[-3000:]}") from exc
        finally:
            leftovers = _drain_group(proc.pid)
        result = subprocess.CompletedProcess(argv, proc.returncode, out, err)
        self.runs.append(result)
        assert proc.returncode == 0, f"{argv[:3]} exited {proc.returncode}\nstdout: {out[-3000:]}\nstderr: {err[-3000:]}"
        assert not leftovers, f"{argv[0]} left processes running after it exited (killed now): {leftovers}"
        return result


    def conversation(self, argv: list[str], extra_env: dict, *, timeout: float = HARNESS_TIMEOUT_S) -> Conversation:
        """A harness kept open across turns (Claude Code's `--input-format stream-json`)."""
        env = {k: v for k, v in self.env.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update(extra_env)
        proc = subprocess.Popen(argv, env=env, cwd=self.project, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        return Conversation(proc, time.monotonic() + timeout)


@dataclass
class Conversation:
    """One harness process, several user turns: each `say` returns that turn's `result` event."""

    proc: subprocess.Popen
    deadline: float

    def say(self, text: str) -> dict:
        watchdog = threading.Timer(max(0.0, self.deadline - time.monotonic()), _kill_group, (self.proc.pid,))
        watchdog.start()
        try:
            self.proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n")
            self.proc.stdin.flush()
            for line in self.proc.stdout:
                event = json.loads(line)
                if event.get("type") == "result":
                    assert not event.get("is_error"), line
                    return event
        finally:
            watchdog.cancel()
        raise AssertionError(f"the harness ended before answering {text!r}: {self.proc.stderr.read()[-2000:]}")

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=max(1.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill_group(self.proc.pid)
            self.proc.wait()
        _drain_group(self.proc.pid)


# -- reading what the model was sent ---------------------------------------------


def packs_in(request: Request, pack: str, roles: tuple[str, ...]) -> list[int]:
    """Indexes of the messages (with one of `roles`) that carry `pack` verbatim."""
    return [i for i, (role, text) in enumerate(request.messages()) if role in roles and pack in text]


def first_index(request: Request, needle: str) -> int | None:
    for i, (_, text) in enumerate(request.messages()):
        if needle in text:
            return i
    return None


def describe(requests: list[Request], limit: int = 400) -> str:
    """A readable dump of what the harness sent, for assertion messages."""
    lines = []
    for n, request in enumerate(requests):
        lines.append(f"--- request {n}: {request.path} answered {request.reply}")
        for role, text in request.messages():
            lines.append(f"  [{role}] {text[:limit]!r}")
    return "\n".join(lines)


# -- processes ---------------------------------------------------------------------


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, process group) of a live process, from /proc."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw.rsplit(")", 1)[1].split()
    return fields[0], int(fields[2])


def _pids() -> list[int]:
    try:
        return [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []


def _group_members(pgid: int) -> list[int]:
    members = []
    for pid in _pids():
        stat = _proc_stat(pid)
        if stat and stat[1] == pgid and stat[0] != "Z":
            members.append(pid)
    return members


def _drain_group(pgid: int) -> list[str]:
    """Give the group's stragglers GRACE_S to exit, then kill them; describe any that had to be killed."""
    deadline = time.monotonic() + GRACE_S
    while _group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [_cmdline(pid) for pid in _group_members(pgid)]
    if left:
        _kill_group(pgid)
    return left


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return str(pid)


def processes_with_home(home: Path) -> list[int]:
    """Live processes whose environment has HOME=home (started by this test, whatever their group)."""
    needle = f"HOME={home}".encode()
    found = []
    for pid in _pids():
        if pid == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        stat = _proc_stat(pid)
        if stat and stat[0] != "Z" and needle in environ.split(b"\0"):
            found.append(pid)
    return found
