"""Hostile frontmatter is cheap to refuse: invalid_params through MCP, a file error through import and sync.

A billion-laughs frontmatter of a few hundred bytes used to grow the brain by hundreds of megabytes
(the shared branches are written out when the frontmatter is stored as JSON); values YAML reads but
that are no data (2024-13-45, an integer of 5,000 digits) and a bad second `---` block were `internal`.
"""

from __future__ import annotations

import pytest
from vaults import yaml_bomb as bomb

HOSTILE = {
    "billion-laughs": (bomb(), "expands to over"),
    "recursive-alias": ("---\na: &a [*a]\n---\nbody\n", "refers to itself"),
    "merge-bomb": ("---\na: &a {x: [1,2,3,4,5,6,7,8,9]}\n" + "".join(
        f"{k}: &{k} {{" + ", ".join(f"<<: *{p}" if j == 0 else f"k{j}: *{p}" for j in range(9)) + "}\n"
        for p, k in zip("abcdefg", "bcdefgh", strict=True)) + "---\nbody\n", "expands to over"),
    "deep": ("---\na: " + "[" * 40 + "]" * 40 + "\n---\nbody\n", "deeper than"),
    "huge": ("---\na: '" + "x" * 300_000 + "'\n---\nbody\n", "the limit is"),
    "bad-date": ("---\ncreated: 2024-13-45\n---\nbody\n", "no data"),
    "huge-int": ("---\nn: " + "9" * 5000 + "\n---\nbody\n", "no data"),
    "infinite": ("---\nratio: .inf\n---\nbody\n", "not finite"),
    "nan": ("---\nratio: .nan\n---\nbody\n", "not finite"),
}


def test_the_bomb_is_small():
    assert len(bomb()) < 470


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_frontmatter_is_invalid_params_over_mcp(remote, local, name):
    content, said = HOSTILE[name]
    err = remote.err("put_page", slug="hostile", content=content)
    assert err["error"] == "invalid_params" and said in err["message"], err
    assert local.err("get_page", slug="hostile")["error"] == "not_found"


def test_frontmatter_within_the_limits_still_uses_aliases(local):
    content = "---\ntitle: Anchors\nbase: &b {team: payments}\nmine: *b\ntags: &t [a, b]\nmore: *t\n---\nbody\n"
    local.ok("put_page", slug="anchors", content=content)
    fm = local.ok("get_page", slug="anchors")["frontmatter"]
    assert fm["mine"] == {"team": "payments"} and fm["more"] == ["a", "b"]


@pytest.mark.parametrize("second", ["---\nbad: [unclosed\n---\n", "---\n- a list\n---\n", "---\n" + bomb()[4:]])
def test_a_second_block_in_the_body_is_body_text_never_internal(remote, second):
    content = "---\ntitle: Two blocks\n---\n" + second + "words zebrafish here\n"
    assert remote.ok("put_page", slug="two", content=content)["status"] == "created"
    assert remote.ok("get_page", slug="two")["title"] == "Two blocks"
    hits = remote.ok("search", query="zebrafish")["results"]
    assert [h["slug"] for h in hits] == ["two"]
