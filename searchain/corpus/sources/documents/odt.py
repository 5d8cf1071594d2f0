"""OpenDocument text (``.odt``, LibreOffice's own format) with the standard library: a ZIP
archive whose ``content.xml`` holds headings (``text:h`` with an outline level), paragraphs,
lists and tables; the title comes from ``meta.xml``.

No library: the XML is simple and ElementTree reads it; a table of contents, notes and
annotations are left out (they repeat or interrupt the body).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .model import Document, DocumentBuilder, Unreadable, short_error
from .sniff import check_package

MIMETYPE = "application/vnd.oasis.opendocument.text"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_DC = "http://purl.org/dc/elements/1.1/"

H, P = f"{{{_TEXT}}}h", f"{{{_TEXT}}}p"
_ROW = f"{{{_TABLE}}}table-row"
_SPACE, _TAB, _BREAK = f"{{{_TEXT}}}s", f"{{{_TEXT}}}tab", f"{{{_TEXT}}}line-break"
_LEVEL = f"{{{_TEXT}}}outline-level"
# Containers whose text is not body text: tables of contents and indexes repeat the headings,
# notes and annotations would cut sentences in two, tracked changes hold deleted text.
_SKIP = {f"{{{_TEXT}}}{n}" for n in (
    "table-of-content", "alphabetical-index", "illustration-index", "table-index", "object-index",
    "user-index", "bibliography", "tracked-changes", "note", "sequence-decls")} | {
    f"{{{_OFFICE}}}annotation", f"{{{_OFFICE}}}forms"}


def read_odt(data: bytes) -> Document:
    with check_package(data, "content.xml", "an OpenDocument text (.odt)") as archive:
        if "mimetype" in archive.NameToInfo:
            kind = archive.read("mimetype").decode("ascii", "replace").strip()
            if kind != MIMETYPE:
                raise Unreadable(f"not an OpenDocument text: it is {kind or 'unlabelled'} "
                                 "(is the suffix wrong?)")
        try:
            content = ET.fromstring(archive.read("content.xml"))
            meta = ET.fromstring(archive.read("meta.xml")) if "meta.xml" in archive.NameToInfo else None
        except (ET.ParseError, OSError, ValueError) as exc:
            raise Unreadable(f"damaged OpenDocument text: {short_error(exc)}") from exc
    builder = DocumentBuilder()
    body = content.find(f"{{{_OFFICE}}}body/{{{_OFFICE}}}text")
    if body is not None:
        _blocks(body, builder)
    title = ""
    if meta is not None:
        found = meta.find(f".//{{{_DC}}}title")
        title = (found.text or "") if found is not None else ""
    document = builder.build(title)
    if not document.parts:
        raise Unreadable("no text in this OpenDocument text")
    return document


def _blocks(element: ET.Element, builder: DocumentBuilder) -> None:
    """Headings, paragraphs and table rows under ``element``, in document order."""
    for child in element:
        tag = child.tag
        if tag in _SKIP:
            continue
        if tag == H:
            builder.heading(_level(child), _inline(child))
        elif tag == P:
            builder.paragraph(_inline(child))
        elif tag == _ROW:
            cells = [" ".join(_inline(p) for p in cell.iter(P)).strip() for cell in child]
            builder.paragraph(" | ".join(c for c in cells if c))
        else:  # lists, list items, sections, tables: containers of the above
            _blocks(child, builder)


def _level(heading: ET.Element) -> int:
    try:
        return max(1, int(heading.get(_LEVEL, "1")))
    except ValueError:
        return 1


def _inline(element: ET.Element) -> str:
    """The text of a paragraph: spans followed, ``text:s`` as its count of spaces."""
    out = [element.text or ""]
    for child in element:
        tag = child.tag
        if tag == _SPACE:
            count = child.get(f"{{{_TEXT}}}c", "1")
            out.append(" " * (int(count) if count.isdigit() else 1))
        elif tag == _TAB or tag == _BREAK:
            out.append(" ")
        elif tag not in _SKIP:
            out.append(_inline(child))
        out.append(child.tail or "")
    return "".join(out)
