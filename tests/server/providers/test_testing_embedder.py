"""The deterministic test embedder: stable, offline, and paraphrase-aware through its synonym table."""

import numpy as np

from memverbs.server.providers.testing import HashingEmbedder, features, stem


def test_deterministic_and_unit_length():
    a = HashingEmbedder().embed(["Deploy freeze on Fridays", ""])
    b = HashingEmbedder().embed(["Deploy freeze on Fridays", ""])
    assert np.array_equal(a, b)
    assert abs(float(np.linalg.norm(a[0])) - 1.0) < 1e-5 and float(np.linalg.norm(a[1])) == 0.0


def test_paraphrase_is_close_and_unrelated_is_far():
    page, paraphrase, other = HashingEmbedder().embed(
        ["Deploy freeze. We never ship releases on Fridays.", "halt shipping before the weekend", "Alice likes tea"]
    )
    assert page @ paraphrase >= 0.8
    assert abs(page @ other) < 0.2


def test_stems_meet():
    assert {stem(w) for w in ("deploy", "deploying", "deployments")} == {"deploy"}
    assert features("releases") == features("shipping")
