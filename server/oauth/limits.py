"""What the unauthenticated OAuth routes allow anyone on the network: small bodies, few requests, bounded storage.

`/register`, `/authorize`, `/consent`, `/token` and `/revoke` answer callers who hold no
token yet, so each must cost the server little whoever calls and however often:

* **Bodies.** An OAuth form or a registration's JSON is a few hundred bytes; each route
  reads at most `body_limit(path)` (a body that declares more is refused from its head:
  transport/http.py, on http_limits's reader).
* **Pace.** Per source address, and overall where the route stores something or hashes a
  password: `PACES`, asked before the body is read (a 429 with Retry-After).
* **Registrations.** Every field a client registers is bounded (`registration_problem`);
  at most MAX_CLIENTS live clients, and a registration nobody ever used is forgotten a day
  after it was made (provider.py).
* **Pending authorizations.** Each `/authorize` stores one request: at most
  MAX_PENDING_PER_CLIENT per client and MAX_PENDING overall are live, and each is forgotten
  when it expires.
* **Logins.** The owner password is the only secret here a person chooses, and scrypt makes
  each guess cost CPU. `Logins` admits a password check per client and overall with a
  backoff that doubles past a few failures; it is charged when the check starts (so a burst
  of requests cannot all slip through as a lockout ends) and only the owner's success
  clears it: a new consent request starts nothing again. The hashing runs on its own
  one-thread pool (consent.py), never on the workers brain calls use. Approval codes are
  60 random bits compared by SHA-256: they are checked first and never wait for the backoff,
  so the owner can still approve with `memverbs auth approve` while someone is guessing.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull
    from starlette.types import Scope

FORM_BODY_BYTES = 8 * 1024  # /token, /revoke, /consent, /authorize: a form of a few fields
REGISTRATION_BODY_BYTES = 16 * 1024  # /register: RFC 7591 metadata, every field below at its bound fits
BODY_LIMITS = {"/register": REGISTRATION_BODY_BYTES}

HOUR = 3600.0
# route → (per source address, overall or None): (requests, per seconds).
PACES: dict[str, tuple[tuple[int, float], tuple[int, float] | None]] = {
    "/register": ((30, HOUR), (120, HOUR)),
    "/authorize": ((60, 60.0), (600, 60.0)),
    "/consent": ((60, 60.0), (600, 60.0)),
    "/token": ((120, 60.0), None),  # no overall pace: a flood must not stop the owner's clients refreshing
    "/revoke": ((120, 60.0), None),
}

REFUSAL_DELAY_S = 0.5  # a request refused for its pace waits this long for its 429: a tight loop gains nothing
MAX_CLIENTS = 1000
UNUSED_CLIENT_TTL_S = 86_400  # a registration that never got a token is forgotten after a day
MAX_PENDING_PER_CLIENT = 20
MAX_PENDING = 500

# Registered metadata: text fields by their longest, lists by their most items and longest item.
MAX_TEXT = {"client_name": 200, "scope": 500, "software_id": 200, "software_version": 100,
            "token_endpoint_auth_method": 50, "application_type": 20}
MAX_URL = 2000
URL_FIELDS = ("client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri")
MAX_LIST = {"redirect_uris": (10, MAX_URL), "contacts": (5, 320), "grant_types": (5, 100), "response_types": (5, 100)}
MAX_JWKS_BYTES = 4096


def body_limit(path: str) -> int:
    return BODY_LIMITS.get(path, FORM_BODY_BYTES)


class Pace:
    """At most `limit` requests per key in each window of `window_s` seconds (a fixed window per key).

    `take` counts one request and says how long the key must wait when it is over: refused
    requests count too, so a client that keeps knocking stays refused until its window ends.
    At most `keys` keys are remembered, the least recently seen forgotten first, so a flood
    from many addresses costs a bounded table (and each per-address pace has an overall one
    beside it that no number of addresses escapes).
    """

    def __init__(self, limit: int, window_s: float, keys: int = 4096) -> None:
        self.limit, self.window_s, self.keys = limit, window_s, keys
        self._seen: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def take(self, key: str, now: float | None = None) -> float:
        """Count a request of `key`: 0.0 when it is within the pace, else the seconds until its window ends."""
        now = time.monotonic() if now is None else now
        start, count = self._seen.pop(key, (now, 0))
        if now - start >= self.window_s:
            start, count = now, 0
        self._seen[key] = (start, count + 1)
        while len(self._seen) > self.keys:
            self._seen.popitem(last=False)
        return 0.0 if count < self.limit else max(0.001, start + self.window_s - now)


def peer(scope: Scope) -> str:
    """The request's source address: the peer's, or the one a trusted proxy in front forwarded
    (uvicorn rewrites `client` from X-Forwarded-For only for a proxy it trusts, loopback by default)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class Paces:
    """One server's `PACES`, counted as its requests come."""

    def __init__(self) -> None:
        self.by_route = {path: (Pace(*mine), Pace(*everyone) if everyone else None)
                         for path, (mine, everyone) in PACES.items()}

    def wait(self, path: str, address: str) -> float:
        """Count a request to `path` from `address`: 0.0 when it may go on, else the seconds to wait."""
        paces = self.by_route.get(path)
        if paces is None:
            return 0.0
        per_address, overall = paces
        wait = per_address.take(address)
        if wait > 0 or overall is None:
            return wait  # one address's refused flood does not spend everyone's pace
        return overall.take("*")


def registration_problem(info: OAuthClientInformationFull) -> str | None:
    """Why this registration's metadata is refused (a field over its bound), or None."""
    for name, longest in MAX_TEXT.items():
        value = getattr(info, name, None)
        if isinstance(value, str) and len(value) > longest:
            return f"{name} is over {longest} characters"
    for name in URL_FIELDS:
        value = getattr(info, name, None)
        if value is not None and len(str(value)) > MAX_URL:
            return f"{name} is over {MAX_URL} characters"
    for name, (most, longest) in MAX_LIST.items():
        items = getattr(info, name, None) or []
        if len(items) > most:
            return f"{name} lists over {most} items"
        if any(len(str(item)) > longest for item in items):
            return f"an item of {name} is over {longest} characters"
    if info.jwks is not None:
        import json  # noqa: PLC0415

        if len(json.dumps(info.jwks, default=str)) > MAX_JWKS_BYTES:
            return f"jwks is over {MAX_JWKS_BYTES} bytes"
    return None


class Backoff:
    """Failures per key: past `free` of them each attempt waits base × 2^(failures − free) seconds, at most `cap`.

    An attempt is charged when it is admitted (`admit`), so only one at a time gets through a
    lockout as it ends; `clear` (the owner's success) forgets the key. A key quiet for
    `forget_s` starts again. At most `keys` keys are remembered.
    """

    def __init__(self, free: int, base_s: float, cap_s: float, forget_s: float = HOUR, keys: int = 4096) -> None:
        self.free, self.base_s, self.cap_s, self.forget_s, self.keys = free, base_s, cap_s, forget_s, keys
        self._failures: OrderedDict[str, tuple[int, float]] = OrderedDict()  # key → (count, time of the last)

    def wait(self, key: str, now: float | None = None) -> float:
        """Seconds before `key` may try again (0.0: now)."""
        now = time.monotonic() if now is None else now
        count, last = self._failures.get(key, (0, now))
        if count < self.free or now - last >= self.forget_s:
            return 0.0
        return max(0.0, last + min(self.cap_s, self.base_s * 2 ** (count - self.free)) - now)

    def charge(self, key: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        count, last = self._failures.pop(key, (0, now))
        if now - last >= self.forget_s:
            count = 0
        self._failures[key] = (count + 1, now)
        while len(self._failures) > self.keys:
            self._failures.popitem(last=False)

    def clear(self, key: str) -> None:
        self._failures.pop(key, None)


class Logins:
    """The owner-password checks the consent page may run: per client and overall (`Backoff`)."""

    def __init__(self) -> None:
        self.per_client = Backoff(free=5, base_s=5.0, cap_s=900.0)
        self.overall = Backoff(free=10, base_s=2.0, cap_s=60.0)

    def admit(self, client_id: str) -> float:
        """0.0 and the check charged, or the seconds to wait (nothing charged)."""
        now = time.monotonic()
        wait = max(self.per_client.wait(client_id, now), self.overall.wait("*", now))
        if wait > 0:
            return wait
        self.per_client.charge(client_id, now)
        self.overall.charge("*", now)
        return 0.0

    def succeeded(self, client_id: str) -> None:
        self.per_client.clear(client_id)
        self.overall.clear("*")
