"""OpenClaw wired to a remote brain, end to end: the pack at session start comes over HTTP.

A real `memverbs serve --http` on 127.0.0.1 holds the brain; the client machine (the throwaway
HOME) runs `memverbs connect URL --token T --install openclaw`, whose token goes to the keyring
(a file backend under HOME). One `openclaw agent --local` turn against a fake model: the plugin
runs the session-start hook, which asks the remote brain for the pack on the token's own lane.
The client's own local brain holds a different fact, which must not be in that pack.

`connect` runs with no openclaw on PATH, so OpenClaw's install ledger has no row for the plugin (the
path a user without the CLI on PATH at connect time takes): the turn proves the linked plugin loads
anyway. tests/e2e/test_openclaw_e2e.py runs its turns after an install that did record it, and
tests/cli/test_connect_install.py's disconnect test runs the ledger calls of `connect`.
"""

from __future__ import annotations

import json
import os

import pytest
from fake_model import Text
from harness_e2e import ENTITY, PACK_HEADER, SEED_FACT, describe
from harnesses import memverbs, run
from helpers import init_home
from openclaw_support import fake_model_config, require_openclaw, without_openclaw

from benchmarks.http_load import RemoteServer, make_token

REMOTE_FACT = "Alice runs the Oslo office"
PROMPT = "where does alice work?"
PLAINTEXT = "keyrings.alt.file.PlaintextKeyring"


@pytest.fixture
def remote_brain(tmp_path):
    home = init_home(tmp_path / "brain-server").root
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVERBS_", "PYTHON_KEYRING", "XDG_"))}
    run([memverbs(), "remember", REMOTE_FACT, "--provenance", "e2e test", "--entity", ENTITY], {**env, "MEMVERBS_HOME": str(home)})
    with RemoteServer(home, env=env) as server:
        server.token = make_token(home, "laptop")
        yield server


@pytest.mark.slow
def test_the_pack_at_session_start_comes_from_the_remote_brain(world, fake_api, remote_brain):
    env = {k: v for k, v in world.env.items() if not k.startswith(("OPENCLAW_", "PYTHON_KEYRING"))}
    world.env.clear()
    world.env.update(env, PYTHON_KEYRING_BACKEND=PLAINTEXT)
    cli = require_openclaw(world.env)
    config = world.home / ".openclaw" / "openclaw.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps(fake_model_config(fake_api.url), indent=2))
    out = run([memverbs(), "connect", remote_brain.url, "--token", remote_brain.token, "--install", "openclaw"],
              without_openclaw(world.env, world.home.parent), cwd=world.project).stdout
    assert remote_brain.token not in config.read_text(), out
    steps = json.loads((world.home / ".memverbs" / "integrations" / "openclaw" / "remote-receipt.json").read_text())["steps"]
    kinds = [step["kind"] for step in steps]
    assert "cli" not in kinds and len(kinds) >= 3, steps  # the server, the plugin entry and its load path; no ledger call

    fake_api.script(Text("In Oslo."))
    # OpenClaw resolves ${MEMVERBS_REMOTE_TOKEN} in the MCP server's header from its environment.
    world.harness([cli, "agent", "--local", "--session-id", "memverbs-e2e-remote", "-m", PROMPT, "--json"],
                  {"MEMVERBS_REMOTE_TOKEN": remote_brain.token}, timeout=180)

    requests = fake_api.model_requests()
    assert requests, "OpenClaw sent no model request"
    users = [text for role, text in requests[0].messages() if role == "user" and PROMPT in text]
    assert users and PACK_HEADER in users[0], describe(requests[:1], limit=1500)
    pack = users[0][users[0].index(PACK_HEADER):users[0].index(PROMPT)]
    assert REMOTE_FACT in pack and SEED_FACT not in pack, describe(requests[:1], limit=1500)  # the remote brain's, not the local one's
    moments = [(e["moment"], e["code"]) for e in world.hook_log() if e["harness"] == "openclaw"]
    assert ("session-start", "ok") in moments, moments
