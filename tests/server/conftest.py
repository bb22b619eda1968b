"""The brain- and verb-level tests run on every backend: SQLite, and Postgres.

A test that uses a home (and so a brain) is parametrised over `brain_backend`;
`postgres-plain` (a server without pgvector) is added for the tests that
exercise the vector arm. A test that pokes at SQLite itself is marked
`sqlite_only`. The transport and conformance rooms test the wire, not the
brain, and run on SQLite (test_http_postgres chooses its backend itself).
"""

from __future__ import annotations

from pathlib import Path

BACKENDS = ["sqlite", "postgres"]
VECTOR_MODULES = {"test_search_hybrid", "test_remember_dedup", "test_privacy_hybrid"}
OWN_BACKENDS = {"test_postgres", "test_migrate"}  # chooses its backends itself
WIRE_ROOMS = {"transport", "conformance"}  # the wire, not the brain: SQLite only
HERE = Path(__file__).parent


def pytest_generate_tests(metafunc):
    if "brain_backend" not in metafunc.fixturenames or metafunc.definition.get_closest_marker("sqlite_only"):
        return
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    room = Path(metafunc.definition.path).relative_to(HERE).parts[0]
    if module in OWN_BACKENDS or room in WIRE_ROOMS:
        return
    backends = list(BACKENDS)
    if module in VECTOR_MODULES:
        backends.append("postgres-plain")
    metafunc.parametrize("brain_backend", backends, indirect=True)
