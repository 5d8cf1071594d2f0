"""Documents people keep: one reader per format, each turning a file's bytes into a
``model.Document`` (text cut into parts with page or heading path) or raising ``Unreadable``.

=========  =====================================  ===================================
suffix     reader                                 where a passage is
=========  =====================================  ===================================
.pdf       ``pdf`` (pypdfium2)                    page, and section from the outline
.docx      ``docx`` (python-docx)                 heading path
.odt       ``odt`` (standard library)             heading path
.html .htm ``html`` (selectolax)                  heading path
.xhtml
.epub      ``epub`` (standard library + html)     table-of-contents entry, heading path
.md        ``text``                               heading path
.txt       ``text``                               -
=========  =====================================  ===================================

Readers import their library on first use, so listing a folder costs no import. ``files`` walks
a folder safely (symlink loops, unreadable entries) and reads each file once.
"""

from __future__ import annotations

from typing import Callable

from .model import Document, Part, Unreadable

# suffix -> format name (the ``DocumentRecord.format`` a file is recorded under)
FORMATS_BY_SUFFIX = {
    ".pdf": "pdf", ".docx": "docx", ".odt": "odt", ".html": "html", ".htm": "html",
    ".xhtml": "html", ".epub": "epub", ".md": "md", ".markdown": "md", ".txt": "txt",
}


def format_of(suffix: str) -> str | None:
    """The format a file with ``suffix`` is read as, or None when it is not a supported type."""
    return FORMATS_BY_SUFFIX.get(suffix.lower())


def read_document(data: bytes, fmt: str) -> Document:
    """``data`` (a whole file) read as ``fmt``; ``Unreadable`` says why a file gives nothing."""
    return _reader(fmt)(data)


def _reader(fmt: str) -> Callable[[bytes], Document]:
    if fmt == "pdf":
        from .pdf import read_pdf as reader
    elif fmt == "docx":
        from .docx import read_docx as reader
    elif fmt == "odt":
        from .odt import read_odt as reader
    elif fmt == "html":
        from .html import read_html as reader
    elif fmt == "epub":
        from .epub import read_epub as reader
    elif fmt == "md":
        from .text import read_markdown as reader
    elif fmt == "txt":
        from .text import read_txt as reader
    else:
        raise ValueError(f"no reader for format {fmt!r}")
    return reader


__all__ = ["Document", "FORMATS_BY_SUFFIX", "Part", "Unreadable", "format_of", "read_document"]
