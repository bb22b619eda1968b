"""Page chunking: structure-following, bounded, world-safe, and content-addressed."""

from memverbs.server.pages.chunks import MAX_CHARS, chunk_page, embed_input, text_hash


def test_short_page_is_one_chunk_and_empty_body_is_its_title():
    assert chunk_page("Acme", "Acme runs payments.") == ["Acme runs payments."]
    assert chunk_page("Acme", "   ") == ["Acme"]
    assert chunk_page(None, "") == []


def test_headings_start_chunks_and_long_text_is_cut_at_sentences():
    body = "# One\nFirst part.\n\n## Two\nSecond part.\n\n" + ("A sentence that goes on. " * 200)
    chunks = chunk_page("T", body)
    assert chunks[0].startswith("# One") and chunks[1].startswith("## Two")
    assert all(len(c) <= MAX_CHARS + 2 for c in chunks)
    assert len(chunks) >= 4


def test_private_fence_rows_and_takes_are_never_chunked():
    body = "Public.\n\n<!-- facts -->\n- [private] SECRET-ROW\n- public row\n<!-- /facts -->\n<!-- takes -->\nOPINION\n<!-- /takes -->\n"
    text = "\n".join(chunk_page("T", body))
    assert "SECRET-ROW" not in text and "OPINION" not in text and "public row" in text


def test_hash_covers_title_and_text():
    assert embed_input("Acme", "runs payments") == "Acme\n\nruns payments"
    assert text_hash(embed_input("Acme", "x")) != text_hash(embed_input("Other", "x"))
