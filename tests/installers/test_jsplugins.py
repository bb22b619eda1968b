"""The JS plugins' shared `runHook` is one template (templates/run-hook.js), copied verbatim into each."""

from __future__ import annotations

import pytest

from memverbs.installers import jsplugins


@pytest.mark.parametrize("path", jsplugins.plugin_paths(), ids=lambda p: p.parent.name)
def test_each_plugin_carries_the_template_unchanged(path):
    text = path.read_text(encoding="utf-8")
    assert jsplugins.render(text) == text, f"{path} drifted from templates/run-hook.js: run python -m memverbs.installers.jsplugins"
    assert text.count("function runHook(") == 1


def test_a_drifted_copy_is_caught_and_rewritten():
    path = jsplugins.plugin_paths()[0]
    text = path.read_text(encoding="utf-8")
    drifted = text.replace("const MAX_OUTPUT = 64 * 1024;", "const MAX_OUTPUT = 1024;", 1)
    assert drifted != text
    assert jsplugins.render(drifted) == text


def test_a_plugin_without_markers_is_refused():
    with pytest.raises(ValueError, match="markers"):
        jsplugins.render("export const Plugin = async () => ({});\n")
