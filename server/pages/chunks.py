"""Cutting a page into the chunks the vector arm embeds and search results quote.

Chunks follow the page's own structure: a heading starts a new chunk, blank
lines separate blocks, and blocks are packed up to ~1000 characters (about 250
tokens: small enough that one chunk is about one thing, large enough to carry
its context). A block longer than the hard cap is cut at sentence ends. Only
the world-safe body is chunked (takes fence and private facts-fence rows
removed), because a chunk is quoted to whoever the page is visible to.

What gets embedded is the title plus the chunk, so "Acme" in the title still
helps a chunk that only says "they". Its hash addresses the stored vector:
identical text is embedded once, and an edit re-embeds only what changed.
"""

from __future__ import annotations

import hashlib
import re

from memverbs.server.pages.markdown import fenced_body

TARGET_CHARS = 1000
MAX_CHARS = 1600
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_HEADING = re.compile(r"^#{1,6}\s")


def chunk_page(title: str | None, body: str) -> list[str]:
    text = fenced_body(body or "", include_private=False).strip()
    if not text:
        return [title.strip()] if title and title.strip() else []
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for block in _blocks(text):
        starts_section = bool(_HEADING.match(block))
        if current and (starts_section or size + len(block) > TARGET_CHARS):
            chunks.append("\n\n".join(current))
            current, size = [], 0
        for piece in _split_long(block):
            if current and size + len(piece) > MAX_CHARS:
                chunks.append("\n\n".join(current))
                current, size = [], 0
            current.append(piece)
            size += len(piece) + 2
    if current:
        chunks.append("\n\n".join(current))
    # A chunk that is only a heading says nothing on its own: fold it into the next.
    merged: list[str] = []
    for chunk in chunks:
        if merged and _HEADING.match(merged[-1]) and "\n" not in merged[-1]:
            merged[-1] = f"{merged[-1]}\n\n{chunk}"
        else:
            merged.append(chunk)
    return merged


def _blocks(text: str) -> list[str]:
    blocks: list[str] = []
    for raw in re.split(r"\n\s*\n", text):
        lines = raw.strip().splitlines()
        # A heading glued to its first paragraph still starts its own block.
        current: list[str] = []
        for line in lines:
            if _HEADING.match(line) and current:
                blocks.append("\n".join(current).strip())
                current = []
            current.append(line)
        if current:
            blocks.append("\n".join(current).strip())
    return [b for b in blocks if b]


def _split_long(block: str) -> list[str]:
    if len(block) <= MAX_CHARS:
        return [block]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(block):
        while len(sentence) > MAX_CHARS:  # one endless "sentence": cut it hard
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:MAX_CHARS])
            sentence = sentence[MAX_CHARS:]
        if current and len(current) + 1 + len(sentence) > TARGET_CHARS:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces


def embed_input(title: str | None, chunk: str) -> str:
    """The text a chunk's vector is made from."""
    return f"{title.strip()}\n\n{chunk}" if title and title.strip() and not chunk.startswith(title.strip()) else chunk


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
