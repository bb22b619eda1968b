"""The consent page: who is asking, for what, and the owner's yes or no.

`/authorize` (the SDK's handler) has checked the client, its redirect URI and
scopes and stored the request; it sends the browser here with the request's
one-time id. The page names the client and where the browser will be sent
afterwards, the scopes (`read`, `write`) and the surface asked for — the owner may
grant less, never more — and asks for the owner's login (owner.py). Approving
spends the request and issues a code; either answer goes back to the client's
redirect URI with `state` and `iss` (RFC 9207).

The page can't be framed (clickjacking) and is never cached; the request id is
a 256-bit secret, and a forged POST still needs the owner's login. Password checks
(scrypt) run on a pool of their own, HASH_WORKERS threads, so guessing costs the
brain's workers nothing; how many run at all is limits.py's `Logins`.
"""

from __future__ import annotations

import asyncio
import html
import math
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
from mcp.server.auth.provider import construct_redirect_uri
from starlette.responses import HTMLResponse, RedirectResponse, Response

from memverbs.server.oauth import credentials, owner
from memverbs.server.oauth.limits import Logins
from memverbs.server.protocol.surfaces import SURFACES, allowed
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from starlette.requests import Request

    from memverbs.server.brain.base import Brain
    from memverbs.server.oauth.provider import OAuthConfig, Run

CONSENT_PATH = "/consent"
HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
FAILED_LOGIN_DELAY_S = 0.5
HASH_WORKERS = 1
SCOPE_TEXT = {"read": "read your world-visible memory and pages", "write": "remember, forget and edit pages"}
SURFACE_TEXT = {"verbs": "the seven memory verbs", "starter": "the verbs and the page reads",
                "full": "every tool, page writes included"}
STYLE = """body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0}.where{color:#555}
.err{color:#a00;font-weight:600}button{font-size:1rem;padding:.4rem 1rem;margin-right:.5rem}
input[type=password]{font-size:1rem;width:100%;padding:.3rem}"""


class Consent:
    def __init__(self, config: OAuthConfig, run: Run) -> None:
        self.config = config
        self.run = run
        self.logins = Logins()
        self._hashing: anyio.CapacityLimiter | None = None  # made in the event loop, on the first password check

    async def handle(self, request: Request) -> Response:
        if request.method == "GET":
            pending = await self._pending(request.query_params.get("request", ""))
            if pending is None:
                return _gone()
            return self._page(pending, request.query_params.get("request", ""))
        form = await request.form()
        request_id = str(form.get("request", ""))
        pending = await self._pending(request_id)
        if pending is None:
            return _gone()
        if form.get("decision") != "approve":
            return await self._answer(pending, error="access_denied")
        secret = str(form.get("owner_secret", ""))
        login = await self._login(pending, secret)
        if not isinstance(login, bool):
            await asyncio.sleep(FAILED_LOGIN_DELAY_S)  # as long as a wrong login: a refusal is no quicker loop
            return self._page(pending, request_id, status=429, headers={"Retry-After": str(math.ceil(login))}, error=(
                f"Too many wrong logins: passwords are not checked for the next {math.ceil(login)} s. "
                "An approval code from `memverbs auth approve` works now."))
        if not login:
            await asyncio.sleep(FAILED_LOGIN_DELAY_S)
            tries = await self.run(lambda b: b.oauth_failed_attempt(pending["id"]))
            if tries >= owner.MAX_ATTEMPTS:
                return await self._answer(pending, error="access_denied")
            return self._page(pending, request_id, error="That approval code or password is not right.", status=401)
        asked = frozenset(s for s in pending["scopes"].split(",") if s)
        chosen = frozenset(str(s) for s in form.getlist("scope")) & asked  # the owner can grant less, never more
        surface = str(form.get("surface", ""))
        if not chosen or surface not in SURFACES:
            return self._page(pending, request_id, error="Grant at least one of read and write.", status=400)
        surface = credentials.narrower(surface, pending["surface"])
        return await self._answer(pending, scopes=chosen, surface=surface)

    async def _login(self, pending: Any, secret: str) -> bool | float:
        """True: `secret` is the owner's login; False: it is not; a float: the seconds before a
        password may be checked again for this client (nothing was checked)."""
        if owner.could_be_code(secret) and await self.run(lambda b: owner.spend_code(b, secret)):
            return True
        client_id = pending["client_id"]
        wait = self.logins.admit(client_id)  # before anything more is read: a refused guess costs nothing else
        if wait > 0:
            return wait
        hashes = await self.run(owner.password_hashes)
        if not hashes:
            return False
        if self._hashing is None:
            self._hashing = anyio.CapacityLimiter(HASH_WORKERS)
        if not await anyio.to_thread.run_sync(owner.password_ok, secret, hashes, limiter=self._hashing):
            return False
        self.logins.succeeded(client_id)
        return True

    async def _pending(self, request_id: str) -> Any:
        if not request_id.startswith(credentials.REQUEST_PREFIX):
            return None

        def look(brain: Brain) -> Any:
            row = brain.oauth_credential("request", credentials.digest(request_id))
            if row is None or row["revoked_at"] is not None or row["client_revoked_at"] is not None:
                return None
            return row if row["expires_at"] > now_ms() else None

        return await self.run(look)

    async def _answer(self, pending: Any, *, error: str | None = None, scopes: frozenset[str] = frozenset(),
                      surface: str = "") -> Response:
        """Spend the request and send the browser back to the client: a code, or the error."""
        code = credentials.mint("code")
        issue = [] if error else [{
            "client_ref": pending["client_ref"], "kind": "code", "token_hash": credentials.digest(code), "family": None,
            "scopes": ",".join(s for s in credentials.ACCESS_SCOPES if s in scopes), "surface": surface,
            "source_id": pending["source_id"], "resource": pending["resource"], "redirect_uri": pending["redirect_uri"],
            "code_challenge": pending["code_challenge"], "expires_at": now_ms() + credentials.CODE_TTL_S * 1000,
        }]
        if await self.run(lambda b: b.oauth_exchange(pending["id"], issue, now_ms())) is None:
            return _gone()  # answered meanwhile (another tab)
        params = {"error": error} if error else {"code": code}
        target = construct_redirect_uri(pending["redirect_uri"], **params, state=pending["state"], iss=self.config.issuer)
        return RedirectResponse(target, status_code=303, headers={"Cache-Control": "no-store"})

    def _page(self, pending: Any, request_id: str, *, error: str = "", status: int = 200,
              headers: dict[str, str] | None = None) -> Response:
        esc = html.escape
        asked = [s for s in credentials.ACCESS_SCOPES if s in pending["scopes"].split(",")]
        scope_boxes = "".join(
            f'<label><input type="checkbox" name="scope" value="{s}" checked> <b>{s}</b> — {esc(SCOPE_TEXT[s])}</label><br>'
            for s in asked)
        offered = [s for s in SURFACES if s == pending["surface"] or allowed(s) < allowed(pending["surface"])]
        options = "".join(
            f'<option value="{s}"{" selected" if s == pending["surface"] else ""}>{s} — {esc(SURFACE_TEXT[s])}</option>'
            for s in offered)
        where = urlsplit(pending["redirect_uri"])
        body = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Allow {esc(pending["name"])}? — memverbs</title>
<style>{STYLE}</style></head><body>
<h1><span id="client-name">{esc(pending["name"])}</span> wants to use your memverbs brain</h1>
<p class="where">Afterwards your browser goes to <b id="redirect-host">{esc(where.scheme)}://{esc(where.netloc)}</b>.
It sees world-visible memory only, never private facts or pages.</p>
{f'<p class="err" id="error">{esc(error)}</p>' if error else ""}
<form method="post" action="{CONSENT_PATH}">
<input type="hidden" name="request" value="{esc(request_id)}">
<fieldset><legend>Scopes</legend>{scope_boxes}</fieldset>
<fieldset><legend>Surface</legend><select name="surface" id="surface">{options}</select></fieldset>
<fieldset><legend>Owner login</legend>
<label for="owner_secret">An approval code from <code>memverbs auth approve</code>, or the owner password</label>
<input type="password" name="owner_secret" id="owner_secret" autocomplete="current-password" autofocus></fieldset>
<button type="submit" name="decision" value="approve" id="approve">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form></body></html>"""
        return HTMLResponse(body, status_code=status, headers={**HEADERS, **(headers or {})})


def _gone() -> Response:
    return HTMLResponse(
        "<!doctype html><title>memverbs</title><p>This authorization request has expired or was already answered. "
        "Start again from the app that asked.</p>", status_code=400, headers=HEADERS)
