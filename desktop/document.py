"""Turn what the engine returns for "the whole document" into text plus the cited range."""

from __future__ import annotations

from pathlib import Path
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


# Above this size a source is shown in its folder rather than opened: a multi-gigabyte dump
# would stall whatever editor the desktop hands it to.
OPEN_SOURCE_LIMIT_BYTES = 20 * 1024 * 1024


def source_target(passage: Passage, limit: int = OPEN_SOURCE_LIMIT_BYTES) -> tuple[Path, str]:
    """What "Open source file" should open for ``passage``: (path, "file" | "folder").

    Raises FileNotFoundError with a readable message when the file recorded at ingestion time
    is no longer there; the passage itself stays in the corpus either way.
    """
    source = Path(passage.source) if passage.source else None
    if source is None or not source.is_absolute() or not source.is_file():
        raise FileNotFoundError(
            f"The source file {passage.source or '(none recorded)'} is not there any more "
            "(moved or deleted). The passage is still in the corpus.")
    # A passage with a page or heading came from a document (PDF, Word, e-book) that its own
    # viewer opens at any size; the limit is for text dumps.
    located = passage.page is not None or bool(passage.section)
    if source.stat().st_size > limit and not located:
        return source.parent, "folder"
    return source, "file"
