"""synthesize without an LLM: validation first, then `unavailable` with the fix."""


def test_no_llm_is_unavailable_with_detail(remote):
    err = remote.err("synthesize", question="What do we know about Acme?")
    assert list(err) == ["error", "message", "suggestion", "detail", "protocol_version"]
    assert err["error"] == "unavailable"
    assert err["message"] == "synthesize needs an LLM and none is configured."
    assert err["detail"] == "chat gateway unconfigured (NO_ANTHROPIC_API_KEY)"
    assert "recall and entity" in err["suggestion"]


def test_blank_question(remote):
    err = remote.err("synthesize", question=" ")
    assert err["error"] == "invalid_params" and err["message"] == "question must be a non-empty string."


def test_bad_window_is_invalid_params_not_internal(remote):
    err = remote.err("synthesize", question="q", since="the other day")
    assert err["error"] == "invalid_params" and "YYYY-MM-DD" in err["suggestion"]
    err = remote.err("synthesize", question="q", since="2026-09", until="2026-08-01")
    assert err["error"] == "invalid_params" and "after until" in err["message"]


def test_whole_day_and_month_windows_parse(remote):
    err = remote.err("synthesize", question="q", since="2026-08", until="2026-08-31")
    assert err["error"] == "unavailable"
