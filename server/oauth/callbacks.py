"""Which redirect URIs a dynamically registered client may use.

Open registration lets anyone on the network register a client; what keeps that
safe is where its codes can be sent. By default (`oauth.registration = known`)
only these are accepted:

* loopback callbacks on any port and path (`http://127.0.0.1:*`, `http://localhost:*`,
  `http://[::1]:*`): native clients and the harness CLIs (RFC 8252 §7.3), whose
  codes never leave the machine that asked;
* the callbacks of the hosted connectors — claude.ai (and Claude Desktop and mobile,
  which use the same infrastructure), ChatGPT;
* the URLs listed in `oauth.redirect_uris`.

`any` also accepts every `https` callback; `off` turns registration off.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

KNOWN_CONNECTORS: dict[str, tuple[str, ...]] = {
    "claude.ai, Claude Desktop": ("https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback"),
    "ChatGPT": ("https://chatgpt.com/connector_platform_oauth_redirect",
                "https://chat.openai.com/connector_platform_oauth_redirect"),
}
KNOWN_CALLBACKS = frozenset(url for urls in KNOWN_CONNECTORS.values() for url in urls)
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback_callback(uri: str) -> bool:
    parts = urlsplit(uri)
    if parts.scheme != "http" or parts.username or parts.password or parts.fragment:
        return False
    host = (parts.hostname or "").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def problem(uri: str, policy: str, extra: frozenset[str]) -> str | None:
    """Why `uri` may not be registered under `policy`, or None when it may."""
    parts = urlsplit(uri)
    if parts.fragment:
        return f"redirect URI {uri} has a fragment, which OAuth forbids"
    if is_loopback_callback(uri) or uri in KNOWN_CALLBACKS or uri in extra:
        return None
    if policy == "any" and parts.scheme == "https" and parts.hostname:
        return None
    return (f"redirect URI {uri} is not one this brain accepts: loopback (http://127.0.0.1:PORT/…), the claude.ai and "
            "ChatGPT connector callbacks, or what the owner lists in oauth.redirect_uris")


def parse_extra(text: str) -> frozenset[str]:
    return frozenset(u.strip() for u in text.split(",") if u.strip())
