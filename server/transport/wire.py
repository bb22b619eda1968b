"""The MCP stdio wire, without the SDK: one JSON-RPC message per line, in, out.

memverbs serves the handshake era of MCP (`initialize`, then `tools/list`,
`tools/call`, `ping`) itself, because the official SDK costs about a second of
imports at start-up and a millisecond of thread hops and model validation on
every request. What the SDK would do is kept, and a test holds the bytes equal
to the SDK's own server (tests/server/transport/test_stdio_equivalence.py): the
version negotiation, the capabilities, the key order of every result (the
SDK's models are alphabetical), `-32601` for a method it does not serve,
`-32602` for a request before `initialize` or with malformed params, and no
answer for a cancelled request.

Where the SDK is silent, this wire answers: a line that is not JSON is
`-32700`; a well-formed line that is not a JSON-RPC request, a batch, nesting
deeper than any tool needs, or a frame over the size cap is `-32600`. Numbers
must be finite (`NaN`, `Infinity` and `1e999` are not JSON numbers). A reply
that carries a lone surrogate (which UTF-8 cannot encode) is sent with ASCII
escapes instead of being dropped. Messages are delimited by `\\n` only:
U+2028, U+2029, U+0085 and friends travel raw inside JSON strings, `\\r` and
NUL as escapes, exactly as the SDK writes them.

This module is pure: it turns a line into replies and calls to run; the I/O
and threads are stdio.py's. No SDK import here.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from memverbs import __version__
from memverbs.server.errors import MemverbsError

# The handshake versions the SDK negotiates (a test pins these against mcp_types.version).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE = "2025-11-25"
# Present in `params._meta` only on 2026-07-28+ (per-request envelope) traffic; spec-reserved prefix.
MODERN_META_KEY = "io.modelcontextprotocol/protocolVersion"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

MAX_FRAME_BYTES = 4 * 1024 * 1024  # one message; a tool's arguments are a few kilobytes
MAX_DEPTH = 32  # nesting of a message; the deepest tool argument is two levels down
NO_ID = object()  # a message without an `id` member: a notification

_SERVED = frozenset({"initialize", "ping", "tools/list", "tools/call"})


class FrameError(MemverbsError):
    """A line that cannot be a request: answered with `code`, `message` and `data`, id null unless known."""

    def __init__(self, code: int, message: str, data: str, msg_id: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data, self.msg_id = code, message, data, msg_id


@dataclass
class Call:
    """A `tools/call` to run off the reader; its reply is `reply(id, encode(outcome))`."""

    msg_id: Any
    name: str
    arguments: dict | None


def reply(msg_id: Any, result: dict) -> bytes:
    return line({"jsonrpc": "2.0", "id": msg_id, "result": result})


def error(msg_id: Any, code: int, message: str, data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return line({"jsonrpc": "2.0", "id": msg_id, "error": err})


def line(message: dict) -> bytes:
    """One frame: compact JSON, UTF-8, non-ASCII raw (as the SDK writes it), then `\\n`."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: still one valid frame, with \\uXXXX escapes
        data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("ascii")
    return data + b"\n"


def parse(raw: bytes) -> dict:
    """A JSON-RPC 2.0 message object from one line, or FrameError saying what is wrong with it."""
    if len(raw) > MAX_FRAME_BYTES:
        raise FrameError(INVALID_REQUEST, "Invalid Request", f"message larger than {MAX_FRAME_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrameError(PARSE_ERROR, "Parse error", f"not UTF-8 at byte {exc.start}") from None
    try:
        msg = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except (ValueError, RecursionError) as exc:
        raise FrameError(PARSE_ERROR, "Parse error", _why(exc)) from None
    if isinstance(msg, list):
        raise FrameError(INVALID_REQUEST, "Invalid Request", "batches are not supported: send one message per line")
    if not isinstance(msg, dict):
        raise FrameError(INVALID_REQUEST, "Invalid Request", "a message must be a JSON object")
    msg_id = msg.get("id", NO_ID)
    echo = msg_id if _valid_id(msg_id) else None
    if msg.get("jsonrpc") != "2.0":
        raise FrameError(INVALID_REQUEST, "Invalid Request", 'the "jsonrpc" member must be "2.0"', echo)
    if msg_id is not NO_ID and not _valid_id(msg_id):
        raise FrameError(INVALID_REQUEST, "Invalid Request", 'the "id" member must be a string or an integer')
    if _too_deep(msg):
        raise FrameError(INVALID_REQUEST, "Invalid Request", f"message nested deeper than {MAX_DEPTH} levels", echo)
    if "method" in msg:
        if not isinstance(msg["method"], str) or _unencodable(msg["method"]):
            raise FrameError(INVALID_REQUEST, "Invalid Request", 'the "method" member must be a string', echo)
    elif msg_id is NO_ID or not ("result" in msg or "error" in msg):
        raise FrameError(INVALID_REQUEST, "Invalid Request", 'a request needs a "method" member', echo)
    return msg


def loads_strict(text: str) -> Any:
    """JSON held to this wire's rules, for the other readers of JSON someone else wrote (`memverbs call`'s
    arguments, a folder's memverbs-facts.jsonl): finite numbers only, integers of at most 4300 digits,
    nested at most MAX_DEPTH levels. ValueError says what is wrong."""
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite, parse_int=_bounded_int)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if isinstance(value, (dict, list)) and _too_deep(value):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value


class Session:
    """One connection's protocol state: what each request is answered with, and which calls to run."""

    def __init__(self, surface_tools: list[dict]) -> None:
        self.tools = surface_tools
        self.version: str | None = None  # negotiated at `initialize`
        self.opened = False  # the first request decides the era
        self.client_roots = False  # the client declared the `roots` capability (transport/roots.py)
        self._tools_body: bytes | None = None  # the tools/list result, encoded once

    def opens_modern(self, msg: dict) -> bool:
        """Whether this first request opens the 2026-07-28 era (served by the SDK), decided once."""
        if self.opened or "method" not in msg or msg.get("id", NO_ID) is NO_ID:
            return False
        self.opened = True
        params = msg.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        return msg["method"] != "initialize" and isinstance(meta, dict) and MODERN_META_KEY in meta

    def handle(self, msg: dict) -> bytes | Call | None:
        """The reply to one parsed message, a Call to run, or None (notifications, responses)."""
        method = msg.get("method")
        msg_id = msg.get("id", NO_ID)
        if method is None or msg_id is NO_ID:
            return None  # a response to nothing we sent, or a notification (handled by the caller)
        params = msg.get("params")
        if params is not None and not isinstance(params, dict):
            return error(msg_id, INVALID_PARAMS, "Invalid request parameters", "")
        params = params or {}
        if method not in _SERVED:
            return error(msg_id, METHOD_NOT_FOUND, "Method not found", method)
        meta = params.get("_meta")
        if meta is not None and not isinstance(meta, dict):
            return error(msg_id, INVALID_PARAMS, "Invalid request parameters", "")
        if method != "initialize" and isinstance(meta, dict) and MODERN_META_KEY in meta:
            return error(msg_id, INVALID_REQUEST, "this connection serves the handshake protocol era; "
                         "requests carrying the 2026-07-28 envelope are not accepted on it")
        if method == "ping":
            return reply(msg_id, {})
        if method == "initialize":
            return self._initialize(msg_id, params)
        if self.version is None:
            return error(msg_id, INVALID_PARAMS, "Invalid request parameters", "")
        if method == "tools/list":
            if not isinstance(params.get("cursor", ""), str):
                return error(msg_id, INVALID_PARAMS, "Invalid request parameters", "")
            return self._list(msg_id)
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            return error(msg_id, INVALID_PARAMS, "Invalid request parameters", "")
        return Call(msg_id, name, arguments)

    def _initialize(self, msg_id: Any, params: dict) -> bytes:
        requested = params.get("protocolVersion")
        info = params.get("clientInfo")
        if (not isinstance(requested, str) or not isinstance(params.get("capabilities"), dict)
                or not isinstance(info, dict) or not isinstance(info.get("name"), str)
                or not isinstance(info.get("version"), str)):
            return error(msg_id, INVALID_PARAMS, "Invalid request parameters", "")
        self.version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE
        self.client_roots = isinstance(params["capabilities"].get("roots"), dict)
        return reply(msg_id, {
            "capabilities": {"tools": {"listChanged": False}},
            "protocolVersion": self.version,
            "serverInfo": {"name": "memverbs", "version": __version__},
        })

    def _list(self, msg_id: Any) -> bytes:
        # The tool list is fixed for the connection: encode it once, splice the id in.
        if self._tools_body is None:
            self._tools_body = line({"tools": [_tool(t) for t in self.tools]})[:-1]
        body = self._tools_body
        return b'{"jsonrpc":"2.0","id":' + json.dumps(msg_id, ensure_ascii=False).encode() + b',"result":' + body + b"}\n"


def _tool(tool: dict) -> dict:
    """A Tool in the SDK's key order: alphabetical, and so are the annotations and the input schema's
    top level (models there); below that the schema is a plain mapping, kept as written."""
    shaped = {key: tool[key] for key in sorted(tool)}
    for model in ("annotations", "inputSchema"):
        if isinstance(shaped.get(model), dict):
            shaped[model] = {key: tool[model][key] for key in sorted(tool[model])}
    return shaped


def cancelled_id(msg: dict) -> Any:
    params = msg.get("params")
    return params.get("requestId") if isinstance(params, dict) else None


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and not _unencodable(value))


def _unencodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _too_deep(msg: dict | list) -> bool:
    stack: list[tuple[Any, int]] = [(msg, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value if isinstance(v, (dict, list)))
    return False


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _bounded_int(text: str) -> int:
    if len(text) > 4300:  # Python's own limit for int(str), said plainly
        raise ValueError(f"number out of range: an integer of {len(text)} digits")
    return int(text)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


def _why(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return f"message nested deeper than {MAX_DEPTH} levels"
    return str(exc)[:200]
