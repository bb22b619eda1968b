"""Every benchmark module imports: a renamed helper in benchmarks/corpus.py or verbs.py breaks the
benchmarks that use it at import time, which no smoke run of the others would notice (the fast tier)."""

import importlib
from pathlib import Path

import pytest

MODULES = sorted(p.stem for p in (Path(__file__).resolve().parent.parent / "benchmarks").glob("*.py"))


def test_the_benchmarks_are_all_found():
    assert {"__main__", "backends", "corpus", "side_by_side", "verbs"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_benchmark_module_imports(name):
    importlib.import_module(f"benchmarks.{name}")
