"""The parameter pipeline: the reference's exact messages, in declaration order."""

import pytest

from memverbs.server.errors import VerbError
from memverbs.server.protocol import params as pipeline
from memverbs.server.protocol.registry import BY_NAME


def check(name, args, strict=False):
    return pipeline.check(BY_NAME[name], args, strict=strict)


def message(name, args, strict=False):
    with pytest.raises(VerbError) as exc:
        check(name, args, strict)
    assert exc.value.code == "invalid_params"
    return exc.value.message


def test_missing_required_is_named_in_declaration_order():
    assert message("remember", {}) == "Missing required parameter: fact"
    assert message("remember", {"fact": "x"}) == "Missing required parameter: provenance"
    assert message("remember", {"fact": "x", "provenance": None}) == "Missing required parameter: provenance"


def test_type_mismatch_messages():
    assert message("forget", {"id": 42}) == 'Parameter "id" must be a string'
    assert message("context_pack", {"entities": ["a"]}) == 'Parameter "entities" must be a string'
    assert message("recall", {"budget_tokens": "10"}) == 'Parameter "budget_tokens" must be a number'
    assert message("recall", {"include_expired": "yes"}) == 'Parameter "include_expired" must be a boolean'
    assert message("recall", {"limit": True}) == 'Parameter "limit" must be a number'


def test_enum_mismatch_lists_the_values():
    assert (
        message("remember", {"fact": "x", "provenance": "p", "kind": "rumour"})
        == 'Parameter "kind" must be one of: event, preference, commitment, belief, fact'
    )
    assert message("remember", {"fact": "x", "provenance": "p", "visibility": "team"}) == (
        'Parameter "visibility" must be one of: world, private'
    )


def test_first_failure_wins():
    # kind (declared after fact) is bad, but the missing provenance is reported first.
    assert message("remember", {"fact": "x", "kind": "nope"}) == "Missing required parameter: provenance"


def test_optional_null_and_empty_string_are_absent():
    checked = check("recall", {"entity": "", "query": None, "since": "", "limit": None})
    assert checked.params == {}


def test_required_empty_string_reaches_the_handler():
    assert check("entity", {"name": ""}).params == {"name": ""}


def test_generic_suggestion_on_dispatch_errors():
    with pytest.raises(VerbError) as exc:
        check("remember", {})
    assert exc.value.suggestion == "Check the tool schema — required params and types are declared there."


def test_unknown_params_warn_with_did_you_mean():
    checked = check("recall", {"entty": "x", "zzzzzzzz": 1, "_meta": {}, "dry_run": True})
    assert checked.params == {"_meta": {}, "dry_run": True}
    assert checked.unknown == [("entty", "entity"), ("zzzzzzzz", None)]
    assert checked.warning_lines()[0] == (
        'warning: unknown parameter "entty" ignored — did you mean "entity"?. A future release rejects unknown parameters.'
    )
    assert checked.warnings_meta() == [
        {"code": "unknown_param", "param": "entty", "suggestion": "entity"},
        {"code": "unknown_param", "param": "zzzzzzzz"},
    ]


def test_unknown_params_rejected_in_strict_mode():
    with pytest.raises(VerbError) as exc:
        check("recall", {"entty": "x"}, strict=True)
    assert exc.value.message.startswith("1 unknown parameter(s) not declared in the recall tool schema")
    assert '"entty"' in exc.value.suggestion and '"entity"' in exc.value.suggestion
    assert "entty" not in exc.value.message


@pytest.mark.parametrize(
    ("value", "expected"),
    [(10000, 10000), (12.9, 12), (0.5, 0), (0, None), (-3, None), (float("inf"), None), ("5", None), (True, None)],
)
def test_budget_parsing(value, expected):
    assert pipeline.budget(value) == expected
