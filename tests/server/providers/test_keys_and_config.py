"""Keys come from the environment, then the OS keyring, never from config; providers build lazily."""

import subprocess
import sys

import keyring
import pytest
from keyring.backend import KeyringBackend
from provider_fakes import embeddings_env, llm_env, no_keyring  # noqa: F401 - fixture

from memverbs.server.home import Home
from memverbs.server.providers import keys
from memverbs.server.providers.config import Providers
from memverbs.server.settings import load_settings


class MemoryKeyring(KeyringBackend):
    priority = 1

    def __init__(self, values: dict):
        super().__init__()
        self.values = values

    def get_password(self, service, username):
        return self.values.get((service, username))

    def set_password(self, service, username, password):
        self.values[(service, username)] = password

    def delete_password(self, service, username):
        self.values.pop((service, username), None)


@pytest.fixture
def memory_keyring():
    before = keyring.get_keyring()
    ring = MemoryKeyring({("memverbs", "embeddings_api_key"): "from-ring"})
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(before)


def test_env_beats_keyring(monkeypatch, memory_keyring):
    monkeypatch.setenv("MEMVERBS_EMBEDDINGS_API_KEY", "from-env")
    assert keys.lookup(keys.EMBEDDINGS_KEY) == ("from-env", "env")
    monkeypatch.delenv("MEMVERBS_EMBEDDINGS_API_KEY")
    assert keys.lookup(keys.EMBEDDINGS_KEY) == ("from-ring", "keyring")
    assert keys.lookup(keys.LLM_KEY) == (None, "none")


def test_unconfigured_providers_are_none_with_a_reason(home):
    providers = Providers(load_settings(home))
    assert providers.embedder() is None and "embeddings.model is empty" in providers.embedder_problem
    assert providers.chat() is None and "llm.model is empty" in providers.chat_problem


def test_public_api_without_a_key_is_not_configured(home, monkeypatch, no_keyring):  # noqa: F811
    embeddings_env(monkeypatch, base_url="", key=None)
    llm_env(monkeypatch, base_url="", key=None)
    monkeypatch.setenv("MEMVERBS_LLM__BASE_URL", "")
    providers = Providers(load_settings(home))
    assert providers.embedder() is None and "no API key" in providers.embedder_problem
    assert providers.chat() is None and "no API key" in providers.chat_problem


def test_a_local_server_needs_no_key(home, monkeypatch, no_keyring):  # noqa: F811
    embeddings_env(monkeypatch, base_url="http://127.0.0.1:11434/v1", key=None)
    embedder = Providers(load_settings(home)).embedder()
    assert embedder is not None and "authorization" not in {k.lower() for k in embedder.api.headers}


def test_keys_are_not_settings(home):
    home.config_path.write_text('[embeddings]\nmodel = "m"\napi_key = "sk-in-a-file"\n')
    from memverbs.server.errors import ConfigError

    with pytest.raises(ConfigError) as exc:
        load_settings(Home(home.root))
    assert "api_key" in exc.value.message


def test_nothing_heavy_is_imported_until_a_provider_is_used(home, monkeypatch):
    """Server start and the hook path build a runtime and dispatchers; with providers configured
    that still must not import httpx, numpy or keyring, nor make any call."""
    embeddings_env(monkeypatch)
    llm_env(monkeypatch)
    code = (
        "import sys\n"
        "from memverbs.server.runtime import Runtime\n"
        "rt = Runtime()\n"
        "rt.mcp_dispatcher('verbs'); rt.local_dispatcher()\n"
        "rt.local_dispatcher().call('entity', {'name': 'nobody'})\n"
        "print(sorted(m for m in ('httpx', 'numpy', 'keyring') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
