"""Surgical JSON/JSONC edits: our entry changes, every other byte stays."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memverbs.installers.jsonc import JsonDoc, JsonEditError

USER_FILE = """{
  // the user's own comment
  "theme": "dark",   /* inline block comment */
  "mcp": {
    "other": {"type": "local", "command": ["x"]}, // trailing
  },
  "list": [1, 2,],
}
"""


def test_set_then_delete_restores_every_byte():
    doc = JsonDoc(USER_FILE)
    doc.set(["mcp", "memverbs"], {"type": "local", "command": ["memverbs", "serve"]})
    assert doc.get(["mcp", "memverbs", "command"]) == ["memverbs", "serve"]
    assert "// the user's own comment" in doc.text and "// trailing" in doc.text
    doc.delete(["mcp", "memverbs"])
    assert doc.text == USER_FILE


def test_replacing_a_value_touches_only_that_value():
    doc = JsonDoc(USER_FILE)
    doc.set(["theme"], "light")
    assert doc.text == USER_FILE.replace('"dark"', '"light"')


def test_insert_follows_the_files_indentation():
    doc = JsonDoc('{\n    "a": {\n        "b": 1\n    }\n}\n')
    doc.set(["a", "c"], {"d": [1]})
    assert doc.text == '{\n    "a": {\n        "b": 1,\n        "c": {\n            "d": [\n                1\n            ]\n        }\n    }\n}\n'


def test_missing_parents_are_created_and_an_empty_file_is_fine():
    doc = JsonDoc("")
    doc.set(["mcpServers", "memverbs"], {"command": "x"})
    assert json.loads(doc.text) == {"mcpServers": {"memverbs": {"command": "x"}}}


def test_array_items_append_and_remove():
    doc = JsonDoc('{"hooks": {"SessionStart": [{"matcher": "mine", "hooks": []}]}}')
    doc.append(["hooks", "SessionStart"], {"ours": True})
    assert doc.get(["hooks", "SessionStart"]) == [{"matcher": "mine", "hooks": []}, {"ours": True}]
    assert doc.remove_items(["hooks", "SessionStart"], lambda v: v.get("ours")) == 1
    assert doc.text == '{"hooks": {"SessionStart": [{"matcher": "mine", "hooks": []}]}}'


@pytest.mark.parametrize(
    "bad",
    ['{"a": 1', '{"a": 1} x', "[1, 2]", '{"a": "unterminated}', '{"a" 1}', '{"a": 1, "a": 2}', '{a: 1}'],
)
def test_unparseable_input_is_refused(bad):
    with pytest.raises(JsonEditError):
        JsonDoc(bad)


keys = st.text(alphabet="abcdefgh", min_size=1, max_size=4)
values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(alphabet="xyz \"\\é", max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(keys, values, max_size=4), st.sampled_from([None, 2, 4]), values)
def test_round_trip_on_any_document(data, indent, ours):
    text = json.dumps(data, indent=indent) + "\n"
    doc = JsonDoc(text)
    assert doc.data == data
    if "memverbs" in data:
        return
    doc.set(["memverbs"], ours)
    assert json.loads(doc.text) == {**data, "memverbs": ours}
    doc.delete(["memverbs"])
    assert doc.text == text
