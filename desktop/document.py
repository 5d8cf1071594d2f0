"""Turn what the engine returns for "the whole document" into text plus the cited range."""

from __future__ import annotations

from typing import Any

from searchain.types import Passage


def document_text(document: Any, passage: Passage) -> tuple[str, tuple[int, int] | None]:
    """(full text, range of ``passage`` in it) for a document given as text or as its passages.

    A list of passages (in document order) is joined with blank lines; the cited passage is
    found by id. A plain string uses the passage's own ``start``/``end`` offsets when they fit.
    """
    if isinstance(document, str):
        span = (passage.start, passage.end)
        if not (0 <= span[0] < span[1] <= len(document)):
            found = document.find(passage.text)
            span = (found, found + len(passage.text)) if found >= 0 else None
        return document, span
    parts: list[str] = []
    span = None
    offset = 0
    for part in document or []:
        text = part.text if isinstance(part, Passage) else str(part)
        if isinstance(part, Passage) and part.pid == passage.pid:
            span = (offset, offset + len(text))
        parts.append(text)
        offset += len(text) + 2
    if not parts:
        return passage.text, (0, len(passage.text))
    return "\n\n".join(parts), span
