"""The inspector's brain reads (entity window, change feed) run on every backend; the browser
tests run on SQLite."""

from __future__ import annotations


def pytest_generate_tests(metafunc):
    if "brain_backend" not in metafunc.fixturenames or metafunc.definition.get_closest_marker("sqlite_only"):
        return
    if metafunc.module.__name__.rsplit(".", 1)[-1] == "test_ui_units":
        metafunc.parametrize("brain_backend", ["sqlite", "postgres"], indirect=True)
