"""The CLI's views that read the brain directly (entities, projects, stats, history, move-facts, page
editing) run on every backend, like tests/server; the rest of tests/cli runs on SQLite."""

from __future__ import annotations

BACKEND_MODULES = {"test_cli_people", "test_cli_projects", "test_cli_properties", "test_page_editing"}


def pytest_generate_tests(metafunc):
    if "brain_backend" not in metafunc.fixturenames or metafunc.definition.get_closest_marker("sqlite_only"):
        return
    if metafunc.module.__name__.rsplit(".", 1)[-1] in BACKEND_MODULES:
        metafunc.parametrize("brain_backend", ["sqlite", "postgres"], indirect=True)
