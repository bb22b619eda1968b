"""The test tiers: which collected tests are end-to-end (tests/conftest.py marks them)."""

from __future__ import annotations

import os

import pytest

E2E_NODEIDS: set[str] = set()


def require_e2e(what: str) -> None:
    """Fail a test that reaches `what` (a harness binary) without being in the e2e tier."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    if current and E2E_NODEIDS and current not in E2E_NODEIDS:
        pytest.fail(f"{current} runs {what} but is not in the e2e tier: mark it `@pytest.mark.e2e` "
                    "(tests/conftest.py says what is marked on its own)")
