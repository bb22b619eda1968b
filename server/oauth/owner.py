"""The owner's login on the consent page: a one-time approval code, or the owner password.

Whoever can approve a client can read the brain's world-visible memory and, with
`write`, change it; so approving needs something only the brain's owner has:

* an approval code — `memverbs auth approve` prints one (12 characters of
  Crockford-style base32, 60 bits), good once and for 10 minutes; the brain keeps
  its SHA-256;
* the owner password — set with `memverbs auth owner-password`, kept as a salted
  scrypt hash (the only secret here a person chooses, so the only one hashed slowly).

A consent request takes at most `MAX_ATTEMPTS` wrong logins before it is refused; how
many password checks run at all, per client and overall, is limits.py's `Logins`. The
consent page checks in two steps (`spend_code`, then `password_ok` off the brain's
workers); `check` is both, for the CLI and tests. Stdlib only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING

from memverbs.server.oauth.credentials import digest
from memverbs.server.timeparse import now_ms

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain

APPROVAL_TTL_S = 600
MAX_ATTEMPTS = 5
MIN_PASSWORD = 10
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # no I, L, O, U: read aloud or typed without doubt
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


def new_approval_code(brain: Brain) -> str:
    raw = "".join(secrets.choice(_ALPHABET) for _ in range(12))
    brain.oauth_add_owner_secret(kind="approval_code", secret_hash=digest(raw),
                                 expires_at=now_ms() + APPROVAL_TTL_S * 1000, now=now_ms())
    return f"{raw[:4]}-{raw[4:8]}-{raw[8:]}"


def _normal_code(text: str) -> str:
    return text.strip().upper().replace("-", "").replace(" ", "")


def could_be_code(secret: str) -> bool:
    """Whether `secret` has an approval code's shape (typed loosely): anything else is never looked up."""
    code = _normal_code(secret) if len(secret) <= 64 else ""
    return len(code) == 12 and all(c in _ALPHABET for c in code)


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    key = hashlib.scrypt(password.encode("utf-8"), salt=salt, dklen=32, **_SCRYPT)
    enc = base64.b64encode
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${enc(salt).decode()}${enc(key).decode()}"


def password_matches(password: str, stored: str) -> bool:
    try:
        name, n, r, p, salt, key = stored.split("$")
        if name != "scrypt":
            return False
        want = base64.b64decode(key)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), dklen=len(want),
                             n=int(n), r=int(r), p=int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def set_password(brain: Brain, password: str) -> None:
    brain.oauth_add_owner_secret(kind="password", secret_hash=hash_password(password), expires_at=None, now=now_ms())


def has_login(brain: Brain) -> bool:
    """Is there any way to approve a client right now?"""
    now = now_ms()
    return bool(brain.oauth_owner_secrets("password", now) or brain.oauth_owner_secrets("approval_code", now))


MAX_SECRET = 1024


def spend_code(brain: Brain, secret: str) -> bool:
    """Is `secret` a live approval code? It is spent by the check that accepts it. Cheap: one SHA-256."""
    now = now_ms()
    if not could_be_code(secret):
        return False
    code = digest(_normal_code(secret))
    for row in brain.oauth_owner_secrets("approval_code", now):
        if hmac.compare_digest(row["secret_hash"], code):
            return brain.oauth_use_owner_secret(row["id"], now)
    return False


def password_hashes(brain: Brain) -> list[str]:
    """The live owner password's stored hash ([] when none is set)."""
    return [row["secret_hash"] for row in brain.oauth_owner_secrets("password", now_ms())]


def password_ok(secret: str, hashes: list[str]) -> bool:
    """Is `secret` the owner password? Slow by design (scrypt): run it off the brain's workers."""
    if not secret or len(secret) > MAX_SECRET:
        return False
    return any(password_matches(secret, stored) for stored in hashes)


def check(brain: Brain, secret: str) -> bool:
    """Is `secret` the owner's login? An approval code is spent by the check that accepts it."""
    return spend_code(brain, secret) or password_ok(secret, password_hashes(brain))
