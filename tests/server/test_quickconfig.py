"""The hook path's light config reader agrees with the full settings, key for key."""

import pytest

from memverbs.server.quickconfig import quick_settings
from memverbs.server.settings import load_settings

CASES = [
    ("", {}),
    ('source = "work"\n[brain]\npath = "other.db"\nbusy_timeout_ms = 250\n[hooks]\nentities = "people/me, projects/x"\n', {}),
    ('source = "work"\n[hooks]\nentities = "a"\n', {"MEMVERBS_SOURCE": "env-src", "MEMVERBS_HOOKS__ENTITIES": "b,c"}),
    ("", {"MEMVERBS_BRAIN__PATH": "/abs/brain.db", "MEMVERBS_BRAIN__BUSY_TIMEOUT_MS": "42"}),
    ('[brain]\nurl = "sqlite:///team.db"\n', {}),
    ("", {"MEMVERBS_BRAIN__URL": "postgresql://memverbs@db.example/brain", "MEMVERBS_BRAIN__POOL_SIZE": "2"}),
    ('[brain]\npool_size = 8\n', {}),
    ('mcp_surface = "starter"\n[mcp]\nstrict_params = "reject"\n[search]\nremote_private_pages = true\n', {}),
    ('mcp_surface = "starter"\n', {"MEMVERBS_MCP_SURFACE": "verbs", "MEMVERBS_SEARCH__REMOTE_PRIVATE_PAGES": "1",
                                  "MEMVERBS_MCP__STRICT_PARAMS": "warn"}),
    ("", {"MEMVERBS_SEARCH__REMOTE_PRIVATE_PAGES": "off"}),
    ('cli_remote = true\n[embeddings]\nmodel = "text-embedding-3-small"\n[llm]\nmodel = "claude-sonnet-4-5"\n', {}),
    ('cli_remote = true\n[embeddings]\nmodel = "m"\n', {"MEMVERBS_CLI_REMOTE": "no", "MEMVERBS_EMBEDDINGS__MODEL": "",
                                                      "MEMVERBS_LLM__MODEL": "other"}),
]


@pytest.mark.parametrize(("toml", "env"), CASES)
def test_agrees_with_settings(home, monkeypatch, toml, env):
    home.config_path.write_text(toml)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    quick, full = quick_settings(home), load_settings(home)
    assert quick.source == full.source
    assert quick.brain_path == full.brain.path
    assert quick.brain_url == full.brain.url
    assert quick.busy_timeout_ms == full.brain.busy_timeout_ms
    assert quick.pool_size == full.brain.pool_size
    assert quick.hook_entities == full.hooks.entities
    assert quick.hook_user == full.hooks.user
    assert quick.sure
    assert (quick.mcp_surface, quick.strict_params, quick.remote_private_pages) == (
        full.mcp_surface, full.mcp.strict_params, full.search.remote_private_pages)
    assert (quick.cli_remote, quick.embeddings_model, quick.llm_model) == (full.cli_remote, full.embeddings.model, full.llm.model)
