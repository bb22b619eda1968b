"""HTTP hardening on a real socket: slow clients dropped, oversized bodies refused, rebinding Hosts and Origins refused."""

import socket
import threading
import time

import anyio
import httpx
import pytest
import uvicorn

from benchmarks.http_load import make_token
from memverbs.server.runtime import Runtime
from memverbs.server.transport import http_limits
from memverbs.server.transport.http import RemoteBrainApp


@pytest.fixture
def server(home, monkeypatch):
    monkeypatch.setattr(http_limits.HeadDeadlineProtocol, "head_timeout_s", 0.5)
    monkeypatch.setattr(http_limits, "BODY_TIMEOUT_S", 0.5)
    monkeypatch.setenv("MEMVERBS_HTTP__ALLOWED_HOSTS", "memory.example.com")
    monkeypatch.setenv("MEMVERBS_HTTP__ALLOWED_ORIGINS", "https://memory.example.com")
    runtime = Runtime(home)
    app = RemoteBrainApp(runtime, "full")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    config = uvicorn.Config(app, lifespan="on", log_level="warning", http=http_limits.HeadDeadlineProtocol,
                            limit_concurrency=http_limits.MAX_CONNECTIONS)
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.02)
    yield sock.getsockname()[1]
    srv.should_exit = True
    thread.join(10)
    sock.close()
    runtime.close()


def raw(port, data: bytes, wait: float = 0.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(data)
        time.sleep(wait)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_a_slow_request_head_is_dropped(server):
    assert raw(server, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", wait=1.0) == b""


def test_a_slow_body_is_answered_408(server, home):
    token = make_token(home.root, "slow-client")
    head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n"
            b"Authorization: Bearer " + token.encode() + b"\r\n\r\n")
    assert raw(server, head + b'{"jsonrpc"').startswith(b"HTTP/1.1 408")


def test_an_oversized_body_is_413_before_the_token_is_read(server, home):
    """The 413 reaches the client, not a reset: the refused body's rest is drained before the close
    (closing with unread bytes makes the kernel reset the connection, which can overtake the answer)."""
    head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
            + str(http_limits.MAX_BODY_BYTES + 1).encode() + b"\r\n")
    assert raw(server, head + b"\r\n" + b"x" * (http_limits.MAX_BODY_BYTES + 1)).startswith(b"HTTP/1.1 413")
    # `Expect: 100-continue`: refused at once, without the 100 that would invite the body.
    answer = raw(server, head + b"Expect: 100-continue\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413") and b"100 Continue" not in answer
    # A chunked body declares no size: it is read, and refused past the limit, only once its token passed.
    token = make_token(home.root, "oversized")
    chunked = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
               b"Authorization: Bearer " + token.encode() + b"\r\n\r\n")
    block = b"x" * 65536
    body = b"".join(b"%x\r\n" % len(block) + block + b"\r\n" for _ in range(http_limits.MAX_BODY_BYTES // 65536 + 2))
    assert raw(server, chunked + body + b"0\r\n\r\n").startswith(b"HTTP/1.1 413")


def test_an_unauthenticated_body_is_never_read(server):
    """The token is checked from the head: a client that sends its head and then stalls, or has not
    yet sent its body, gets its 401 at once, not the body's 408 half a minute later (the body
    clock is 0.5 s here; the 401 arrives with no byte of the body sent)."""
    for auth in (b"", b"Authorization: Bearer not-a-token\r\n", b"Authorization: Bearer mvb_" + b"0" * 40 + b"\r\n"):
        head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                + str(http_limits.MAX_BODY_BYTES).encode() + b"\r\n" + auth + b"\r\n")
        with socket.create_connection(("127.0.0.1", server), timeout=5) as s:
            s.sendall(head)
            answer = s.recv(65536)  # nothing of the body sent: the answer cannot have waited for it
            assert answer.startswith(b"HTTP/1.1 401"), answer
            assert b"connection: close" in answer.lower()
            # The answer is whole before the body: its Content-Length of JSON is all there.
            head_part, _, json_part = answer.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head_part.split(b"\r\n") if line.lower().startswith(b"content-length")))
            while len(json_part) < length:
                json_part += s.recv(65536)
            assert b"error" in json_part


def test_an_unauthenticated_upload_is_answered_401_not_reset(server):
    """A client that sends its whole body before reading (httpx does) still reads the 401: the body's
    rest is read and dropped before the close, as for a 413."""
    big = b"x" * (http_limits.MAX_BODY_BYTES - 10)
    for _ in range(3):
        r = httpx.post(f"http://127.0.0.1:{server}/mcp", content=big, headers={"Content-Type": "application/json"},
                       timeout=10)
        assert r.status_code == 401 and r.json()["error"] == "unauthorized"
        assert r.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize(("headers", "status"), [
    ({"Host": "evil.example"}, 421),
    ({"Host": "127.0.0.1.evil.example:3131"}, 421),
    ({"Host": "localhost:3131", "Origin": "http://evil.example"}, 403),
    ({"Host": "localhost:3131", "Origin": "null"}, 403),
    ({"Host": "localhost:3131", "Origin": "https://memory.example.com.evil"}, 403),
    ({"Host": "localhost:3131", "Origin": "http://localhost:5173"}, 401),
    ({"Host": "[::1]:3131"}, 401),
    ({"Host": "memory.example.com"}, 401),
    ({"Host": "memory.example.com", "Origin": "https://memory.example.com"}, 401),
])
def test_host_and_origin_allow_list(server, headers, status):
    r = httpx.post(f"http://127.0.0.1:{server}/mcp", json={}, headers=headers, timeout=10)
    assert r.status_code == status, r.text
    if status in (421, 403):
        assert "allowed_" in r.json()["error_description"]


def test_health_is_answered_while_slow_connections_are_held(server):
    slow = []
    for _ in range(100):
        s = socket.create_connection(("127.0.0.1", server))
        s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        slow.append(s)
    try:
        assert httpx.get(f"http://127.0.0.1:{server}/health", timeout=10).json()["status"] == "ok"
        time.sleep(1.0)
        assert all(s.recv(1) == b"" for s in slow)  # each dropped at its head deadline
    finally:
        for s in slow:
            s.close()


def test_a_body_refused_near_the_end_of_its_clock_is_413_not_408(monkeypatch):
    """The refused body's rest is drained outside the body's clock: the answer says why it was refused."""
    monkeypatch.setattr(http_limits, "BODY_TIMEOUT_S", 1.0)
    monkeypatch.setattr(http_limits, "DRAIN_TIMEOUT_S", 0.5)
    calls = 0

    async def receive():
        nonlocal calls
        calls += 1
        if calls == 1:
            await anyio.sleep(0.8)  # a slow client, still inside its time...
            return {"type": "http.request", "body": b"x" * (http_limits.MAX_BODY_BYTES + 1), "more_body": True}
        await anyio.sleep(10)  # ...that then stalls the rest of its refused body

    async def read():
        with pytest.raises(http_limits.BodyTooLarge):
            await http_limits.read_body(receive)

    anyio.run(read)
