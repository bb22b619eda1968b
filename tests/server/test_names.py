"""Slugs, aliases, the token estimate and the budget packer."""

from hypothesis import given
from hypothesis import strategies as st

from memverbs.server.names import estimate_tokens, normalize_alias, slugify, slugify_path
from memverbs.server.verbs.budget import pack, pack_two


def test_slugify():
    assert slugify("Jane Doé & Co.") == "jane-doe-co"
    assert slugify("  --Hello__World--  ") == "hello-world"
    assert slugify_path("people/Jane Doe") == "people/jane-doe"
    assert slugify_path("people/conformance-run-abc") == "people/conformance-run-abc"


def test_normalize_alias():
    assert normalize_alias('  "Big   Boss" ') == "big boss"
    assert normalize_alias("[ACME]") == "acme"
    assert normalize_alias("ﬁne") == "fine"  # NFKC


def test_estimate_tokens_counts_utf16_units():
    assert estimate_tokens("") == 0
    assert estimate_tokens(None) == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("😀😀") == 1  # two surrogate pairs = 4 units


def test_pack_is_a_strict_prefix():
    cost = len
    assert pack(["aaa", "b", "cc"], cost, 4).kept == ["aaa", "b"]
    # never skips the item that does not fit to take a later one
    result = pack(["aaa", "cccc", "b"], cost, 5)
    assert result.kept == ["aaa"] and result.dropped == 2 and result.used == 3
    assert pack(["aaaaa"], cost, 4).kept == []


def test_pack_without_budget_keeps_everything():
    result = pack(["aa", "bbb"], len, 0)
    assert result.kept == ["aa", "bbb"] and result.used == 5 and result.dropped == 0


def test_pack_two_gives_arm_b_only_the_remainder():
    a, b = pack_two(["aa"], len, ["bb", "c"], len, 3)
    assert a.kept == ["aa"] and b.kept == [] and b.dropped == 2
    a, b = pack_two(["aa"], len, ["c", "dd"], len, 3)
    assert b.kept == ["c"] and b.dropped == 1
    a, b = pack_two(["aa"], len, ["b"], len, 2)  # nothing left: arm B dropped entirely
    assert b.kept == [] and b.used == 0 and b.dropped == 1


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_an_ascii_segment_is_spelled_as_the_rule_for_every_script_spells_it(segment):
    from memverbs.server.names import _ascii_segment, _spelled_segment

    assert _ascii_segment(segment) == _spelled_segment(segment)
