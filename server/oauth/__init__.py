"""OAuth 2.1 for remote brains: the authorization server inside `memverbs serve --http`.

Built on the MCP SDK's auth components (`mcp.server.auth`): its handlers speak the
protocol (metadata, authorize, token, register, revoke; PKCE S256 checked by the
SDK's token handler) and `provider.py` answers them from the brain. What memverbs
adds is policy and people:

* `credentials.py` — the values issued (prefixes, lifetimes), hashing, scopes and
  surfaces, and the `Grant` an access token gives (stdlib only: the CLI reads it);
* `callbacks.py` — which redirect URIs dynamic registration accepts;
* `owner.py` — the owner's login on the consent page (one-time approval codes from
  `memverbs auth approve`, or the password from `memverbs auth owner-password`);
* `consent.py` — the consent page;
* `server.py` — the routes mounted beside `/health`, and what the bearer gate asks
  of OAuth: is this access token live for this resource, the 401's
  `resource_metadata`, and the 403 `insufficient_scope` challenge.
"""
