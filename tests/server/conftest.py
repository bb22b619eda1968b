"""The brain- and verb-level tests run on every backend: SQLite, and Postgres.

A test that uses a home (and so a brain) is parametrised over `brain_backend`;
`postgres-plain` (a server without pgvector) is added for the tests that
exercise the vector arm. A test that pokes at SQLite itself is marked
`sqlite_only`.
"""

from __future__ import annotations

BACKENDS = ["sqlite", "postgres"]
VECTOR_MODULES = {"test_search_hybrid", "test_remember_dedup", "test_privacy_hybrid"}
OWN_BACKENDS = {"test_postgres", "test_migrate"}  # chooses its backends itself


def pytest_generate_tests(metafunc):
    if "brain_backend" not in metafunc.fixturenames or metafunc.definition.get_closest_marker("sqlite_only"):
        return
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if module in OWN_BACKENDS:
        return
    backends = list(BACKENDS)
    if module in VECTOR_MODULES:
        backends.append("postgres-plain")
    metafunc.parametrize("brain_backend", backends, indirect=True)
