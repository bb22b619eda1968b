"""Framing and malformed input on the stdio wire: every frame answered, nothing breaks a line, the server lives."""

import json
import os
import threading
import time

import pytest
from helpers import init_home
from rawmcp import RawMcp

from memverbs.server.dispatch import Outcome
from memverbs.server.transport import stdio, wire


@pytest.fixture(scope="module")
def peer(tmp_path_factory, memverbs_cmd):
    """One server for the module: each test below leaves it serving, which is what they check."""
    home = init_home(tmp_path_factory.mktemp("frames") / "home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    env["MEMVERBS_HOME"] = str(home.root)
    p = RawMcp([*memverbs_cmd, "serve", "--surface", "full"], env)
    p.handshake()
    yield p
    p.close()


MALFORMED = [
    (b"not json", -32700),
    (b"{", -32700),
    (b"\xff\xfe{}", -32700),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":NaN}', -32700),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"entity","arguments":{"name":Infinity}}}', -32700),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"entity","arguments":{"name":-1e999}}}', -32700),
    (b"[" * 100_000 + b"]" * 100_000, -32700),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + b'{"a":' * 60 + b"1" + b"}" * 61 + b"}", -32600),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600),
    (b"[]", -32600),
    (b'"text"', -32600),
    (b"42", -32600),
    (b"null", -32600),
    (b'{"id":1,"method":"ping"}', -32600),
    (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":1}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}', -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":"\\udc00","method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","method":5}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["entity"]}}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"entity","arguments":"x"}}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"entity","_meta":3}}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}', -32601),
]


def test_every_malformed_frame_gets_its_error_and_the_server_lives(peer):
    for raw, code in MALFORMED:
        reply = json.loads(peer.frame(raw))
        assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] == code, (raw[:80], reply)
        assert "result" not in reply
    assert peer.send("ping")["result"] == {}
    assert peer.call("entity", {"name": "still here"})["content"]


def test_an_oversized_frame_is_refused_and_the_next_one_served(peer):
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (wire.MAX_FRAME_BYTES + 10) + b'"}}'
    reply = json.loads(peer.frame(big))
    assert reply["error"]["code"] == -32600 and reply["id"] is None
    assert peer.send("ping")["result"] == {}


LINE_BREAKS = ["\u2028", "\u2029", "\u0085", "\r", "\x00", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r\n", "\n"]


def test_line_breaks_in_text_round_trip_inside_one_frame(peer):
    time.sleep(2)  # a server that has been up a while (the old start-up front handed over to the SDK by then)
    for i, char in enumerate(LINE_BREAKS):
        fact = f"before{char}after mark{i}x"
        peer.call("remember", {"fact": fact, "provenance": "frames", "entity": "people/frames"})
        # Read back byte by byte: the reply is one line, split on \n only, and carries the text intact.
        line = peer.frame(json.dumps({"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"entity": "people/frames", "grep": f"mark{i}x"}}}).encode(), 900)
        assert line.endswith(b"\n") and line.count(b"\n") == 1 and b"\r" not in line, repr(char)
        facts = json.loads(json.loads(line)["result"]["content"][0]["text"])["facts"]
        assert fact in [f["fact"] for f in facts], repr(char)


SURROGATE_ARGUMENTS = [
    {"name": "\ud800"},
    {"name": "ok\udfffok"},
    {"name": "x", "\udc00key": 1},
    {"name": "x", "nested": {"deep": ["\ud83d"]}},
]


def test_lone_surrogates_are_invalid_params_with_a_fix(peer):
    for tool, arguments in [("entity", a) for a in SURROGATE_ARGUMENTS] + [
        ("remember", {"fact": "half \ud83d emoji", "provenance": "p"}),
        ("put_page", {"slug": "people/\udc00", "content": "x"}),
    ]:
        raw = json.dumps({"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        reply = json.loads(peer.frame(raw.encode(), 77))
        body = json.loads(reply["result"]["content"][0]["text"])
        assert reply["result"]["isError"] is True and body["error"] == "invalid_params", body
        assert "surrogate" in body["message"] and body["suggestion"]


def test_a_lone_surrogate_tool_name_is_unknown_tool_in_one_valid_frame(peer):
    raw = b'{"jsonrpc":"2.0","id":78,"method":"tools/call","params":{"name":"ent\\ud800","arguments":{}}}'
    line = peer.frame(raw, 78)
    line.decode("utf-8")  # valid UTF-8, one frame
    body = json.loads(json.loads(line)["result"]["content"][0]["text"])
    assert body["error"] == "unknown_tool"


def test_a_notification_or_a_stray_response_gets_no_reply(peer):
    peer.frame(b'{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}', expect=False)
    peer.frame(b'{"jsonrpc":"2.0","id":5,"result":{}}', expect=False)
    peer.frame(b'{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"x"}}', expect=False)
    before = len(peer.stdout_lines)
    assert peer.send("ping")["result"] == {}
    assert len(peer.stdout_lines) == before + 1


class SlowDispatcher:
    """Blocks tool calls until released: stands in for a slow provider call."""

    surface = "verbs"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.calls: list[str] = []

    def call(self, name, arguments):
        self.calls.append(name)
        self.started.set()
        self.release.wait(10)
        return Outcome({"ok": name})


def _serve_in_thread(dispatcher):
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    out = stdio.ProtocolOut(w_out)
    thread = threading.Thread(target=stdio.serve_connection, args=(dispatcher, os.fdopen(r_in, "rb"), out), daemon=True)
    thread.start()
    reader = os.fdopen(r_out, "rb")

    def send(msg):
        os.write(w_in, json.dumps(msg).encode() + b"\n")

    return send, reader, thread, w_in


def test_a_slow_call_never_stalls_ping_and_cancel_silences_it():
    slow = SlowDispatcher()
    send, reader, thread, w_in = _serve_in_thread(slow)
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert json.loads(reader.readline())["id"] == 1
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "recall", "arguments": {}}})
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "entity", "arguments": {}}})
    send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "delta", "arguments": {}}})
    assert slow.started.wait(10)
    send({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert json.loads(reader.readline()) == {"jsonrpc": "2.0", "id": 5, "result": {}}  # while call 2 still runs
    send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})  # running: silenced
    send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})  # queued: dropped
    send({"jsonrpc": "2.0", "id": 6, "method": "ping"})
    assert json.loads(reader.readline())["id"] == 6
    slow.release.set()
    assert json.loads(reader.readline())["id"] == 4  # 2 and 3 were never answered
    os.close(w_in)
    thread.join(10)
    assert not thread.is_alive()
    assert slow.calls == ["recall", "delta"]


def test_calls_queued_when_the_client_hangs_up_still_run():
    slow = SlowDispatcher()
    slow.release.set()
    send, _reader, thread, w_in = _serve_in_thread(slow)
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    for i in range(2, 6):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "remember", "arguments": {}}})
    os.close(w_in)
    thread.join(10)
    assert slow.calls == ["remember"] * 4


def test_a_client_that_vanishes_mid_reply_ends_the_server_quietly(memverbs_cmd, env):
    import subprocess

    proc = subprocess.Popen([*memverbs_cmd, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                     b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')
    proc.stdin.flush()
    proc.stdout.readline()
    proc.stdout.close()  # the client stops reading, then keeps sending
    for i in range(50):
        proc.stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % (i + 2))
    proc.stdin.close()
    assert proc.wait(timeout=20) == 0
    assert "Traceback" not in proc.stderr.read().decode()
