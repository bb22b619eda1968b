"""Smoke-testing a remote brain: is the URL an MCP endpoint, does it take the token, who are we to it.

`memverbs auth test` and `connect` print what it finds (memverbs/cli/probe.py, connect.py), and
doctor checks a connected remote brain with it (memverbs/doctor.py).

One plain POST first, so each way of failing gets its own message (unreachable,
no MCP endpoint there, token refused, server error) — the MCP client folds them
all into one opaque error. Then a real MCP session: tools/list and, where the
surface has it, `whoami` (the token's lane, scopes, surface and source).
"""

from __future__ import annotations

import json

from memverbs import __version__
from memverbs.remote.record import RemoteError

TIMEOUT = 15.0


async def _preflight(url: str, token: str) -> None:
    import httpx2  # noqa: PLC0415 - the MCP client's HTTP library

    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "memverbs-probe", "version": __version__},
        },
    }
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    try:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            response = await http.post(url, json=body, headers=headers)
    except httpx2.HTTPError as exc:
        raise RemoteError(
            f"cannot reach {url} ({type(exc).__name__}: {exc or 'no detail'})",
            "Check the host and port, that `memverbs serve --http` runs there, and any proxy or firewall in between.",
        ) from exc
    status = response.status_code
    if status == 401:
        try:
            why = response.json().get("error_description") or ""
        except ValueError:
            why = ""
        raise RemoteError(
            f"{url} refused the token (401{': ' + why if why else ''})",
            "Check the token, or mint a new one on the server: `memverbs auth create NAME` (see `memverbs auth list`).",
        )
    if status in (404, 405):
        raise RemoteError(
            f"{url} is not an MCP endpoint (HTTP {status})",
            "memverbs serves MCP at /mcp; behind a proxy, use the path the proxy forwards to it.",
        )
    if status >= 500:
        raise RemoteError(f"{url} answered HTTP {status}", "The server has a problem: see its log, and run `memverbs doctor` there.")
    if status >= 400:
        raise RemoteError(f"{url} answered HTTP {status} to an MCP initialize", "Is this really a memverbs (MCP) server?")


async def probe(url: str, token: str) -> dict:
    """What the server says about this token; raises RemoteError with the fix when it says no."""
    from memverbs.server.conformance.connect import connect  # noqa: PLC0415 - the MCP client stack

    await _preflight(url, token)
    try:
        async with connect(url, token) as endpoint:
            names = [t["name"] for t in await endpoint.list_tools()]
            who = None
            if "whoami" in names:
                text, is_error = await endpoint.call_tool("whoami", {})
                who = None if is_error else json.loads(text)
    except Exception as exc:  # a boundary: the MCP client's failures are not a closed set (anyio groups, httpx, the SDK's)
        raise RemoteError(
            f"{url} accepted the token but the MCP session failed ({type(exc).__name__}: {exc})",
            "Check that the server is memverbs (or another MEMORY_VERBS server) and run `memverbs doctor` there.",
        ) from exc
    report = {"url": url, "ok": True, "tools": len(names), "whoami": who}
    if who is None:
        # The verbs surface has no whoami: the tool list alone proves the token works.
        report["surface"] = "verbs" if len(names) <= 7 else None
    else:
        report["surface"] = who.get("surface")
    return report


def describe(report: dict) -> str:
    who = report.get("whoami")
    if who:
        return (
            f"{report['url']} accepts the token: client {who.get('client_id')}, scopes {','.join(who.get('scopes') or [])}, "
            f"surface {who.get('surface')} ({report['tools']} tools), source {who.get('source_id')}"
        )
    return f"{report['url']} accepts the token: {report['tools']} tools (surface {report.get('surface') or 'unknown'}, no whoami on it)"
