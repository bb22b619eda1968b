"""OpenClaw in tests: the binary check and a config that points it at a fake model."""

from __future__ import annotations

import os

import pytest
from harnesses import require_cli, run


def require_openclaw(env: dict) -> str:
    """The openclaw CLI, if it is a working OpenClaw: skip (fail under MEMVERBS_REQUIRE_HARNESSES=1) otherwise."""
    cli = require_cli("openclaw")
    version = run([cli, "--version"], env, check=False, timeout=60).stdout
    if "OpenClaw" not in version:  # npm installs an empty placeholder on Node < 24
        message = f"openclaw on PATH is not a working OpenClaw (needs Node >= 24): {version.strip()[:80]!r}"
        if os.environ.get("MEMVERBS_REQUIRE_HARNESSES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return cli


def fake_model_config(api_url: str) -> dict:
    """openclaw.json keys that make a fake OpenAI-compatible model at `api_url` the default."""
    provider = {"baseUrl": f"{api_url}/v1", "apiKey": "local-x", "api": "openai-completions",
                "models": [{"id": "fake-model", "name": "Fake", "contextWindow": 128000, "maxTokens": 4096}]}
    return {"models": {"providers": {"fake": provider}}, "agents": {"defaults": {"model": {"primary": "fake/fake-model"}}}}
