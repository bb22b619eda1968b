"""A scriptable fake model API on 127.0.0.1, for driving real harness CLIs offline.

It speaks the three wire formats the harnesses use (HARNESSES.md §7):

* Anthropic `POST /v1/messages` (Claude Code), streamed as SSE;
* OpenAI `POST /v1/responses` (Codex), streamed as SSE;
* OpenAI `POST /v1/chat/completions` (opencode, Grok), streamed as SSE;

and answers `HEAD /`, `GET …` (model lists) and `POST …/count_tokens` harmlessly.
Every request is logged (method, path, parsed JSON body) in arrival order.

Replies are scripted: `script(...)` queues turns, and each request takes the first
queued turn whose `when` predicate accepts it (harnesses send side requests — titles,
compaction summaries — so a turn can wait for the request it is meant for). With no
matching turn the reply is plain text, `default_text`. A turn's `before` callable runs
in the server thread before the reply is sent: a test can change the world at an exact
point of the harness's run (e.g. while the harness waits for its compaction summary).

    with FakeModel() as api:
        api.script(ToolCall("remember", {...}, when=api.offers("mcp__memverbs__remember")), Text("saved"))
        ... run the harness with its base URL pointed at api.url ...
        first = api.model_requests()[0]   # .body, .messages(), .reply
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Predicate = Callable[[str, dict], bool]


@dataclass(kw_only=True)
class Turn:
    when: Predicate | None = None  # only a request this accepts takes the turn
    before: Callable[[], None] | None = None  # runs before the reply is sent
    input_tokens: int = 10  # the usage the reply reports (Codex compacts on large reported usage)


@dataclass
class Text(Turn):
    """An assistant message with this text."""

    text: str = "ok"


@dataclass
class ToolCall(Turn):
    """One tool call, by bare tool name (`remember`): each wire format names it as its harness expects
    (`mcp__memverbs__remember` for Anthropic; for Responses, the namespace the request declared)."""

    name: str
    arguments: dict = field(default_factory=dict)


@dataclass
class TooLong(Turn):
    """Anthropic's HTTP 400 `prompt is too long`, which makes Claude Code compact and retry."""

    tokens: int = 250_000
    maximum: int = 200_000


@dataclass
class Request:
    method: str
    path: str
    body: object
    reply: str = ""  # what it was answered with: text / tool_call / too_long / meta
    turn: Turn | None = None

    @property
    def text(self) -> str:
        """The whole body as text: good for `needle in request.text`."""
        return self.body if isinstance(self.body, str) else json.dumps(self.body, ensure_ascii=False)

    def messages(self) -> list[tuple[str, str]]:
        """The conversation as (role, text) in order, whatever the wire format.

        Anthropic's top-level `system` prompt comes first as ("system_prompt", …) and the
        Responses `instructions` as ("instructions", …), so that role "system" means a
        system *message* (where Claude Code puts hook context). Tool calls and results
        are ("assistant"/"tool", their JSON or text).
        """
        body = self.body if isinstance(self.body, dict) else {}
        out: list[tuple[str, str]] = []
        if body.get("system"):
            out.append(("system_prompt", _flatten(body["system"])))
        if isinstance(body.get("instructions"), str):
            out.append(("instructions", body["instructions"]))
        for item in body.get("messages") or body.get("input") or []:
            if not isinstance(item, dict):
                continue
            kind = item.get("type", "message")
            if kind == "message" or "role" in item:
                out.append((item.get("role", "?"), _flatten(item.get("content"))))
            elif kind == "function_call":
                out.append(("assistant", json.dumps(item, ensure_ascii=False)))
            elif kind == "function_call_output":
                out.append(("tool", _flatten(item.get("output"))))
            else:
                out.append((kind, json.dumps(item, ensure_ascii=False)))
        return out


class FakeModel:
    def __init__(self, default_text: str = "ok") -> None:
        self.default_text = default_text
        self.requests: list[Request] = []
        self.errors: list[str] = []  # a `before` that raised (the reply is still sent): tests assert it stays empty
        self._turns: list = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------

    def start(self) -> FakeModel:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- scripting and inspection ---------------------------------------------

    def script(self, *turns) -> None:
        with self._lock:
            self._turns.extend(turns)

    def pending(self) -> list:
        with self._lock:
            return list(self._turns)

    def model_requests(self) -> list[Request]:
        """The POSTs that asked the model for a turn (not token counts or model lists)."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.reply != "meta"]

    def mark(self) -> int:
        """A position in the log: `since(mark)` gives the model requests after it."""
        return len(self.model_requests())

    def since(self, mark: int) -> list[Request]:
        return self.model_requests()[mark:]

    @staticmethod
    def offers(tool: str) -> Predicate:
        """A request whose tool list offers `tool` (any wire format's naming)."""

        def predicate(path: str, body: dict) -> bool:
            return tool in tool_names(body)

        return predicate

    # -- serving --------------------------------------------------------------

    def _take(self, path: str, body: object) -> object:
        with self._lock:
            for i, turn in enumerate(self._turns):
                if turn.when is None or (isinstance(body, dict) and turn.when(path, body)):
                    return self._turns.pop(i)
        return Text(text=self.default_text)

    def _error(self, message: str) -> None:
        with self._lock:
            self.errors.append(message)

    def _log(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)


def tool_names(body: dict) -> list[str]:
    """Every tool name a request offers, flattening Codex's namespaces to `namespace/name` and `name`."""
    names: list[str] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        name = tool.get("name") or (tool.get("function") or {}).get("name")
        if name:
            names.append(name)
        for inner in tool.get("tools") or []:  # a namespace of functions
            if isinstance(inner, dict) and inner.get("name"):
                names.append(inner["name"])
                if name:
                    names.append(f"{name}/{inner['name']}")
    return names


def _flatten(content) -> str:
    """Text of a message's content: a string, or blocks (text, tool_use input, tool_result content)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "tool_use":
                parts.append(json.dumps(block, ensure_ascii=False))
            elif "content" in block:
                parts.append(_flatten(block["content"]))
    return "\n".join(parts)


def _handler(model: FakeModel):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            model._log(Request("GET", self.path, None, "meta"))
            self._json(200, {"data": [], "models": [], "object": "list"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = raw.decode(errors="replace")
            path = self.path.split("?", 1)[0]
            if path.endswith("/count_tokens"):
                model._log(Request("POST", self.path, body, "meta"))
                self._json(200, {"input_tokens": 100})
                return
            turn = model._take(path, body)
            model._log(Request("POST", self.path, body, _kind(turn), turn))
            if turn.before is not None:
                try:
                    turn.before()
                except Exception as exc:  # noqa: BLE001 - recorded for the test; the harness still gets its reply
                    model._error(f"{type(turn).__name__}.before failed: {exc!r}")
            if isinstance(turn, TooLong):
                self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": f"prompt is too long: {turn.tokens} tokens > {turn.maximum} maximum"}})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                if path.endswith("/messages"):
                    _anthropic(self, turn)
                elif path.endswith("/responses"):
                    _responses(self, turn, body if isinstance(body, dict) else {})
                else:
                    _chat(self, turn)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def _json(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def sse(self, event: str | None, data: dict) -> None:
            if event:
                self.wfile.write(f"event: {event}\n".encode())
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())

    return Handler


def _kind(turn) -> str:
    return {Text: "text", ToolCall: "tool_call", TooLong: "too_long"}[type(turn)]


_ids = iter(range(1, 1 << 30))
_id_lock = threading.Lock()


def _next_id() -> int:
    with _id_lock:
        return next(_ids)


def _anthropic(h, turn) -> None:
    n = _next_id()
    h.sse("message_start", {"type": "message_start", "message": {
        "id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-fake", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": turn.input_tokens, "output_tokens": 1}}})
    if isinstance(turn, ToolCall):
        # Claude Code's own tools are capitalised (Bash, Write, Edit); anything else is one of ours.
        name = turn.name if turn.name.startswith("mcp__") or turn.name[:1].isupper() else f"mcp__memverbs__{turn.name}"
        h.sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": f"toolu_{n}", "name": name, "input": {}}})
        h.sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(turn.arguments)}})
        stop = "tool_use"
    else:
        h.sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        h.sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": turn.text}})
        stop = "end_turn"
    h.sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    h.sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5}})
    h.sse("message_stop", {"type": "message_stop"})


def _responses(h, turn, body: dict) -> None:
    n = _next_id()
    rid = f"resp_{n}_{int(time.time() * 1000)}"
    if isinstance(turn, ToolCall):
        namespace, name = _codex_tool(body, turn.name)
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name,
                "arguments": json.dumps(turn.arguments), "status": "completed"}
        if namespace:
            item["namespace"] = namespace
        h.sse("response.created", {"type": "response.created", "response": {"id": rid}})
        h.sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                             "item": {**item, "arguments": "", "status": "in_progress"}})
        h.sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item})
    else:
        item = {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}]}
        h.sse("response.created", {"type": "response.created", "response": {"id": rid}})
        h.sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                             "item": {**item, "content": [], "status": "in_progress"}})
        h.sse("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                             "content_index": 0, "item_id": item["id"], "delta": turn.text})
        h.sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item})
    usage = {"input_tokens": turn.input_tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": turn.input_tokens + 5}
    h.sse("response.completed", {"type": "response.completed", "response": {"id": rid, "usage": usage}})


def _codex_tool(body: dict, tool: str) -> tuple[str | None, str]:
    """Where Codex put the tool in its request: (namespace, name) as the model must call it."""
    for entry in body.get("tools") or []:
        if not isinstance(entry, dict):
            continue
        for inner in entry.get("tools") or []:
            if isinstance(inner, dict) and inner.get("name") == tool:
                return entry.get("name"), tool
        if entry.get("name") == tool:
            return None, tool
    return "mcp__memverbs", tool


def _chat(h, turn) -> None:
    base = {"id": f"chatcmpl-{_next_id()}", "object": "chat.completion.chunk", "created": int(time.time()), "model": "fake"}
    if isinstance(turn, ToolCall):
        call = {"index": 0, "id": f"call_{_next_id()}", "type": "function",
                "function": {"name": turn.name, "arguments": json.dumps(turn.arguments)}}
        h.sse(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}, "finish_reason": None}]})
        finish = "tool_calls"
    else:
        h.sse(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": turn.text}, "finish_reason": None}]})
        finish = "stop"
    h.sse(None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    h.sse(None, {**base, "choices": [], "usage": {"prompt_tokens": turn.input_tokens, "completion_tokens": 5,
                                                  "total_tokens": turn.input_tokens + 5}})
    h.wfile.write(b"data: [DONE]\n\n")
