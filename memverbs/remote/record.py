"""A remote brain as this machine knows it: its URL, where its token is kept, and the local record.

* `normalise_url` — a remote brain is named by its MCP endpoint: a scheme is
  required, the path is `/mcp` (or ends in `/mcp` behind a proxy prefix), and
  credentials, a query or a fragment never belong in it (a URL ends up in
  harness configs and shell history; the token must not).
* where the token is kept: the OS keyring, in vault.py (`TokenVault`);
* `RemoteRecord` — `$MEMVERBS_HOME/remote.json`: which brain this machine is
  connected to and where its token is. It never holds the token.

Stdlib and `keyring` (imported lazily) only, no MCP stack: the hooks, the
installers and a headers helper import it cheaply.
"""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from memverbs.remote.credentials import TOKEN_ENV
from memverbs.server.errors import MemverbsError
from memverbs.server.home import Home

RECORD_NAME = "remote.json"
MCP_SUFFIX = "/mcp"


class RemoteError(MemverbsError):
    """A remote brain cannot be used as asked: a bad URL, an unreadable record, a refused token or
    harness registration; `fix` says what to do."""


# -- the URL ---------------------------------------------------------------------


def normalise_url(raw: str) -> tuple[str, list[str]]:
    """The canonical endpoint URL and any warnings; raises RemoteError for a URL memverbs will not use."""
    text = raw.strip()
    example = "https://brain.example.com/mcp"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise RemoteError(f"{raw!r} is not a valid URL ({exc})", f"Give the server's MCP endpoint, e.g. {example}.") from exc
    scheme = parts.scheme.lower()
    if scheme in ("http", "https") and not parts.netloc:
        raise RemoteError(f"{raw!r} has no host", f"Give the server's MCP endpoint, e.g. {example}.")
    if scheme not in ("http", "https"):
        raise RemoteError(
            f"{raw!r} has no http(s) scheme" if "://" not in text else f"{raw!r} is not an http(s) URL",
            f"Write the whole endpoint, scheme included: {example}.",
        )
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise RemoteError(
            "the URL carries credentials (user:password@)",
            "Take them out of the URL and give connect the token on stdin or at its prompt: URLs end up in configs and shell history.",
        )
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise RemoteError(
            "the URL has a query string or fragment",
            f"Give the bare endpoint ({example}); a token goes on stdin or at the prompt, never in the URL.",
        )
    host = (parts.hostname or "").lower()
    if not host:
        raise RemoteError(f"{raw!r} has no host", f"Give the server's MCP endpoint, e.g. {example}.")
    path = parts.path.rstrip("/")
    if path == "":
        path = MCP_SUFFIX
    elif not path.endswith(MCP_SUFFIX):
        raise RemoteError(
            f"the URL's path {parts.path!r} is not an MCP endpoint (it must end in /mcp)",
            f"memverbs serves MCP at /mcp: {scheme}://{parts.netloc}/mcp (or …/prefix/mcp behind a proxy).",
        )
    shown_host = f"[{host}]" if ":" in host else host
    default_port = {"http": 80, "https": 443}[scheme]
    netloc = shown_host if port in (None, default_port) else f"{shown_host}:{port}"
    url = urlunsplit((scheme, netloc, path, "", ""))
    warnings = []
    if scheme == "http" and not is_loopback_host(host):
        warnings.append(
            f"{url} is plain http to another machine: the token and every memory cross the network unencrypted. "
            "Put TLS in front of the server (`memverbs docs remote`) and use https://."
        )
    return url, warnings


def is_loopback_host(host: str) -> bool:
    """A literal loopback address or `localhost` (no DNS lookup: the answer must not depend on the network)."""
    bare = host.strip("[]").lower()
    if bare == "localhost" or bare.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


# -- the token's home -------------------------------------------------------------


# -- the record of the connection ----------------------------------------------------


@dataclass
class RemoteRecord:
    """What `memverbs connect` set up on this machine (never the token itself)."""

    url: str
    token_store: str  # "keyring" | "env"
    keyring_backend: str = ""
    env_var: str = TOKEN_ENV
    client_id: str | None = None
    scopes: list[str] = field(default_factory=list)
    surface: str | None = None
    source_id: str | None = None
    connected_at: str = ""
    harnesses: list[str] = field(default_factory=list)  # registered by `connect --install` (connection.py)

    @staticmethod
    def path(home: Home) -> Path:
        return home.root / RECORD_NAME

    @classmethod
    def load(cls, home: Home) -> RemoteRecord | None:
        try:
            data = json.loads(cls.path(home).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise RemoteError(
                f"cannot read {cls.path(home)} ({exc})", f"Move {cls.path(home)} aside and run `memverbs connect` again."
            ) from exc
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def save(self, home: Home) -> None:
        path = self.path(home)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(asdict(self), fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)

    @classmethod
    def remove(cls, home: Home) -> bool:
        try:
            cls.path(home).unlink()
        except FileNotFoundError:
            return False
        return True
