"""Provider settings through `memverbs config`: typed, validated, and never a key."""

from memverbs.cli.main import main
from memverbs.server.settings import load_settings


def test_provider_settings_round_trip(home, capsys):
    assert main(["config", "set", "embeddings.model", "nomic-embed-text"]) == 0
    assert main(["config", "set", "embeddings.dimensions", "256"]) == 0
    assert main(["config", "set", "llm.provider", "openai"]) == 0
    assert main(["config", "set", "llm.price_input_per_mtok", "0.5"]) == 0
    assert main(["config", "set", "search.evidence_cosine_floor", "0.75"]) == 0
    settings = load_settings(home)
    assert settings.embeddings.model == "nomic-embed-text" and settings.embeddings.dimensions == 256
    assert settings.llm.provider == "openai" and settings.llm.price_input_per_mtok == 0.5
    assert settings.search.evidence_cosine_floor == 0.75


def test_bad_values_and_keys_are_refused(home, capsys):
    assert main(["config", "set", "llm.provider", "gemini"]) == 1
    assert main(["config", "set", "search.evidence_cosine_floor", "1.5"]) == 1
    assert main(["config", "set", "llm.api_key", "sk-secret"]) == 1
    err = capsys.readouterr().err
    assert 'unknown setting "llm.api_key"' in err
    assert "sk-secret" not in home.config_path.read_text() if home.config_path.exists() else True
