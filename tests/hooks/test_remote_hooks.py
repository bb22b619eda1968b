"""Hooks of a harness wired to a remote brain, against a real `memverbs serve --http` on 127.0.0.1.

The client machine has no brain: only the remote receipt `connect --install` writes (its
`remote_url`) and the token in `$MEMVERBS_REMOTE_TOKEN`. Every failure ends silent, exit 0,
with its code in the client's hooks log.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import ROOMY_DEADLINE, init_home

from benchmarks.http_load import RemoteServer, make_token
from memverbs.server.brain.sqlite import SqliteBrain

FACT = "Remote Rita runs the Oslo office"
NO_KEYRING = "keyring.backends.fail.Keyring"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = init_home(tmp_path_factory.mktemp("srv") / "home").root
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVERBS_", "PYTHON_KEYRING"))}
    with RemoteServer(home, env=env) as srv:
        srv.token = make_token(home, "laptop")
        srv.cli_env = {**env, "MEMVERBS_HOME": str(home)}
        yield srv


def wire(client_home: Path, url: str, harness: str = "claude") -> None:
    """What `connect URL --install <harness>` leaves for the hooks: the remote receipt with the URL."""
    receipt = client_home / "integrations" / harness / "remote-receipt.json"
    receipt.parent.mkdir(parents=True, exist_ok=True)
    receipt.write_text(json.dumps({"harness": harness, "remote_url": url, "steps": []}))


@pytest.fixture
def client(tmp_path, server, memverbs_cmd):
    home = tmp_path / "client-home"
    home.mkdir()
    wire(home, server.url)
    env = {**server.cli_env, "MEMVERBS_HOME": str(home), "MEMVERBS_REMOTE_TOKEN": server.token,
           "PYTHON_KEYRING_BACKEND": NO_KEYRING, "MEMVERBS_HOOKS__ENTITIES": "people/rita"}

    def hook(moment: str, session: str, extra: dict | None = None, *args: str) -> subprocess.CompletedProcess:
        payload = {"session_id": session, "hook_event_name": "UserPromptSubmit" if moment == "heartbeat" else "SessionStart"}
        proc = subprocess.run([*memverbs_cmd, "hook", moment, "--harness", "claude", *ROOMY_DEADLINE, *args], input=json.dumps(payload),
                              capture_output=True, text=True, env={**env, **(extra or {})}, timeout=60)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        return proc

    hook.home = home
    return hook


def remember_on_server(server, memverbs_cmd, fact: str) -> None:
    subprocess.run([*memverbs_cmd, "remember", fact, "--provenance", "t", "--entity", "people/rita"],
                   env=server.cli_env, check=True, capture_output=True, timeout=60)


def last_code(home: Path) -> str:
    return json.loads((home / "logs" / "hooks.jsonl").read_text().splitlines()[-1])["code"]


def context(proc) -> str:
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_pack_and_delta_come_from_the_remote_brain_on_the_tokens_own_lane(server, client, memverbs_cmd):
    remember_on_server(server, memverbs_cmd, FACT)
    pack = context(client("session-start", "sess-r1"))
    assert FACT in pack and last_code(client.home) == "ok"
    assert not (client.home / "brain.db").exists()  # nothing local was created or read

    brain = SqliteBrain.open(server.home / "brain.db")
    try:
        assert brain.cursor("default", "token:laptop", "sess-r1") is not None  # the token's lane, keyed by the session
        assert brain.cursor("default", "local", "sess-r1") is None  # 'local' stays the local hooks'
    finally:
        brain.close()

    remember_on_server(server, memverbs_cmd, "Remote Rita moved to Bergen")
    beat = context(client("heartbeat", "sess-r1"))
    assert "Remote Rita moved to Bergen" in beat and "New facts since" in beat and FACT not in beat


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"MEMVERBS_REMOTE_TOKEN": "mv_not-a-real-token"}, "remote_401"),
        ({"MEMVERBS_REMOTE_TOKEN": ""}, "remote_no_token"),
        ({"MEMVERBS_REMOTE_TOKEN": "mvb_a\r\nX-Injected: 1"}, "remote_no_token"),  # never a second header line
    ],
)
def test_token_failures_are_silent_codes(client, extra, code):
    proc = client("session-start", "sess-bad", extra)
    assert proc.stdout == "" and last_code(client.home) == code


def test_an_unreachable_brain_is_a_silent_code(client, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    wire(client.home, f"http://127.0.0.1:{port}/mcp")
    proc = client("heartbeat", "sess-gone")
    assert proc.stdout == "" and last_code(client.home) == "remote_unreachable"


def test_a_brain_that_never_answers_times_out_inside_the_deadline(client):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    accepting = threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True)
    accepting.start()
    try:
        wire(client.home, f"http://127.0.0.1:{listener.getsockname()[1]}/mcp")
        proc = client("session-start", "sess-slow", None, "--deadline-ms", "800")
        assert proc.stdout == "" and last_code(client.home) == "remote_timeout"
        log = json.loads((client.home / "logs" / "hooks.jsonl").read_text().splitlines()[-1])
        assert log["ms"] < 800
    finally:
        for conn in held:
            conn.close()
        listener.close()


def test_a_local_brain_is_still_used_without_a_remote_receipt(client, server, memverbs_cmd):
    (client.home / "integrations" / "claude" / "remote-receipt.json").unlink()
    proc = client("session-start", "sess-local")
    assert proc.stdout == "" and last_code(client.home) == "no_brain"  # the local brain, which this machine lacks


def test_the_remote_hook_path_imports_no_mcp_sdk_and_no_http_library(client, server, memverbs_cmd):
    remember_on_server(server, memverbs_cmd, FACT)  # a pack to print, whichever tests ran before on this worker
    probe = (
        "import sys, json\n"
        "from memverbs.hooks.runner import run_hook\n"
        "run_hook(['session-start', '--harness', 'claude'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'httpx', 'httpx2', 'pydantic', 'pydantic_settings', 'starlette', 'anyio',\n"
        "    'http', 'email', 'ssl', 'keyring', 'dataclasses', 'inspect', 'tomllib'))\n"
        "print(json.dumps(heavy))\n"
    )
    # Not measured under `pytest --cov`: coverage's subprocess patch imports dataclasses and tomllib itself.
    # (The hooks a harness runs start with `-I -S`, which never loads it.)
    plain = {k: v for k, v in server.cli_env.items() if not k.startswith("COVERAGE_")}
    env = {**plain, "MEMVERBS_HOME": str(client.home), "MEMVERBS_REMOTE_TOKEN": server.token}
    proc = subprocess.run([sys.executable, "-c", probe], input=json.dumps({"session_id": "sess-imports"}),
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    *_, last = proc.stdout.strip().splitlines()
    assert json.loads(last) == [] and last_code(client.home) == "ok"


def reply_once(raw: bytes, *, close: bool = True) -> tuple[str, threading.Thread, list[bytes]]:
    """A loopback server that reads one request and answers `raw` (keeping the connection open
    unless `close`): the framings a real server or proxy may use."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    seen: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(v for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")) if k.lower() == b"content-length"))
            while len(body) < length:
                body += conn.recv(65536)
            seen.append(head + b"\r\n\r\n" + body)
            conn.sendall(raw)
            if not close:
                conn.recv(1)  # held open until the client hangs up
        listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", thread, seen


def tool_reply(body: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": json.dumps(body)}]}}).encode()


def chunked(data: bytes, size: int = 7) -> bytes:
    parts = [b"%x\r\n%s\r\n" % (len(data[i : i + size]), data[i : i + size]) for i in range(0, len(data), size)]
    return b"".join(parts) + b"0\r\n\r\n"


@pytest.mark.parametrize(
    ("framing", "close"),
    [("content-length", True), ("content-length", False), ("chunked", True), ("chunked", False), ("until-close", True)],
)
def test_the_remote_call_reads_every_framing_of_a_reply(framing, close):
    """Content-Length, chunked, or neither (read to the close); a server that keeps the connection
    open anyway does not hold the hook to its deadline."""
    import time

    from memverbs.hooks.remote import RemoteBrain

    data = tool_reply({"protocol_version": "1", "text": "pack ünïcode", "cards": []})
    if framing == "content-length":
        raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data)
    elif framing == "chunked":
        raw = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nTransfer-Encoding: Chunked\r\n\r\n" + chunked(data)
    else:
        raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + data
    url, thread, seen = reply_once(raw, close=close)
    started = time.monotonic()
    body = RemoteBrain(url, "mvb_tok", time.monotonic() + 5).call("context_pack", {"entities": "people/x"})
    assert body["text"] == "pack ünïcode" and time.monotonic() - started < 2
    thread.join(5)
    request = seen[0]
    assert request.startswith(b"POST /mcp HTTP/1.1\r\n") and b"\r\nAuthorization: Bearer mvb_tok\r\n" in request
    assert json.loads(request.partition(b"\r\n\r\n")[2])["params"] == {"name": "context_pack", "arguments": {"entities": "people/x"}}


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\nno", "remote_http_500"),
        (b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", "remote_403"),
        (b"SSH-2.0-OpenSSH_9.6\r\n", "remote_unreachable"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!", "remote_bad_reply"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nbroken\r\n0\r\n\r\n", "remote_bad_reply"),
        # a signed chunk size would walk the parser backwards, forever
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-6\r\n0\r\n\r\n", "remote_bad_reply"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * (80 << 10), "remote_bad_reply"),  # headers that never end
    ],
)
def test_a_reply_that_is_not_a_tool_result_is_its_code(raw, code):
    import time

    from memverbs.hooks.events import RemoteHookError
    from memverbs.hooks.remote import RemoteBrain

    url, thread, _ = reply_once(raw)
    with pytest.raises(RemoteHookError) as caught:
        RemoteBrain(url, "mvb_tok", time.monotonic() + 5).call("delta", {"session_id": "s"})
    assert caught.value.code == code
    thread.join(5)
