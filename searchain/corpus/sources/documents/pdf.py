"""PDF through pypdfium2 (PDFium, the engine of Chrome's viewer): one part per page, so every
passage knows its page, and sections from the document's outline (bookmarks) where it has one.

PDFium was chosen over pypdf by measurement (docs/corpus.md): 3-8x the pages per second with the
same words, and it repairs many damaged files. An outline entry's title is looked for on its
page, so text above a heading that starts mid-page stays in the section before it.
"""

from __future__ import annotations

import re
import threading

from .model import SECTION_SEPARATOR, Document, DocumentBuilder, Unreadable
from .sniff import mismatch

# PDFium marks a hyphen it inferred at a line end with U+0002 (or U+FFFE): rejoin the word.
_SOFT_HYPHEN_BREAK = re.compile("[\u0002\ufffe]\r?\n")
# Control characters other than tab and line breaks are dropped: a translate table runs 2.5
# times faster than a regex over every page (#34 ingest throughput).
_CONTROL = str.maketrans(dict.fromkeys([*range(0x00, 0x09), 0x0b, 0x0c, *range(0x0e, 0x20), 0xfffe, 0xffff]))

# PDFium is not thread-safe: two ingests (two folders, two corpora) must not call into it at once.
_PDFIUM = threading.Lock()

_LEFTOVER_TITLE = re.compile(r"\.(docx?|odt|rtf|pdf|pptx?|tex|indd)$", re.I)
NO_TEXT = ("no text layer (a scan or images only): OCR it first, e.g. with ocrmypdf, "
           "then add the result")


def read_pdf(data: bytes) -> Document:
    if b"%PDF-" not in data[:1024]:
        raise mismatch("a PDF", data)
    with _PDFIUM:
        return _read(data)


def _read(data: bytes) -> Document:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise _open_problem(exc) from exc
    try:
        outline = _outline(pdf)
        builder = DocumentBuilder()
        section = ""
        for index in range(len(pdf)):
            text = page_text(pdf, index)
            cuts, section = _section_cuts(text, outline.get(index, []), section)
            for (start, name), (end, _) in zip(cuts, cuts[1:] + [(len(text), "")]):
                builder.page(index + 1, name)
                builder.text_block(text[start:end])
        title = _useful_title(pdf.get_metadata_dict().get("Title") or "")
        pages = len(pdf)
    finally:
        pdf.close()
    document = builder.build(title)
    if not document.parts:
        raise Unreadable(NO_TEXT if pages else "the PDF has no pages")
    return document


def page_text(pdf, index: int) -> str:
    """The text of page ``index`` (0-based), lines joined by "\\n", inferred hyphens rejoined."""
    page = pdf[index]
    try:
        textpage = page.get_textpage()
        try:
            text = textpage.get_text_range()
        finally:
            textpage.close()
    finally:
        page.close()
    if "\u0002" in text or "\ufffe" in text:
        text = _SOFT_HYPHEN_BREAK.sub("", text)
    return text.replace("\r\n", "\n").translate(_CONTROL)


def _outline(pdf) -> dict[int, list[str]]:
    """``{page index: [heading path, ...]}`` from the bookmarks, in outline order."""
    by_page: dict[int, list[str]] = {}
    path: list[str] = []
    try:
        for mark in pdf.get_toc():
            del path[mark.level:]
            path.append(" ".join(mark.get_title().split()))
            dest = mark.get_dest()
            index = dest.get_index() if dest is not None else None
            if index is not None and index >= 0:
                by_page.setdefault(index, []).append(SECTION_SEPARATOR.join(p for p in path if p))
    except Exception:  # noqa: BLE001 - a broken outline costs the sections, never the text
        return {}
    return by_page


def _section_cuts(text: str, headings: list[str], current: str) -> tuple[list[tuple[int, str]], str]:
    """Where on a page each section starts: ``[(offset, section), ...]`` beginning at 0, and the
    section in force at the page's end. A heading whose title is not found on the page starts
    at the top of it."""
    cuts = [(0, current)]
    for path in headings:
        title = path.rsplit(SECTION_SEPARATOR, 1)[-1]
        found = _find_title(text, title, cuts[-1][0])
        if found is None or found == 0 or not text[:found].strip():
            cuts[-1] = (cuts[-1][0], path)  # at the top: the page starts in this section
        else:
            cuts.append((found, path))
        current = path
    return cuts, current


def _find_title(text: str, title: str, after: int) -> int | None:
    """Offset of ``title`` in ``text`` at or after ``after``, spaces matched loosely."""
    words = title.split()
    if not words:
        return None
    match = re.compile(r"\s+".join(map(re.escape, words))).search(text, after)
    return match.start() if match else None


def _useful_title(title: str) -> str:
    """The metadata title unless it is a converter's leftover ("Microsoft Word - x.docx")."""
    title = " ".join(title.split())
    if _LEFTOVER_TITLE.search(title) or title.lower() in ("untitled", "untitled document"):
        return ""
    return title


def _open_problem(exc: Exception) -> Unreadable:
    import pypdfium2.raw as raw

    code = getattr(exc, "err_code", None)
    if code == raw.FPDF_ERR_PASSWORD:
        return Unreadable("encrypted PDF: it needs a password; save an unlocked copy and add that")
    if code == raw.FPDF_ERR_SECURITY:
        return Unreadable("PDF with an unsupported security handler: save an unlocked copy and add that")
    return Unreadable("damaged or truncated PDF: PDFium cannot parse it; re-download or re-export it")
