"""Word ``.docx`` through python-docx: paragraphs and tables in document order, headings
("Heading 1".."Heading 9" and styles based on them) as the section path; the title from the
document's properties or its first "Title" paragraph.

Page numbers are not known: Word lays pages out when it displays, the file has none.
"""

from __future__ import annotations

import io
import re

from .model import Document, DocumentBuilder, Unreadable, short_error
from .sniff import check_package

_HEADING = re.compile(r"^heading (\d)$", re.I)


def read_docx(data: bytes) -> Document:
    check_package(data, "word/document.xml", "a Word document (.docx)").close()
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - python-docx raises lxml, KeyError, ValueError, ...
        raise Unreadable(f"damaged Word document: {short_error(exc)}; open and save it again "
                         "in Word") from exc
    levels = _heading_levels(document)
    builder = DocumentBuilder()
    title = (document.core_properties.title or "").strip()
    for block in document.iter_inner_content():
        if hasattr(block, "rows"):  # a table: one block per row, cells joined
            for row in block.rows:
                cells = [c.text.strip() for c in _unique_cells(row)]
                builder.paragraph(" | ".join(c for c in cells if c))
            continue
        style = block._p.style  # the style id: cheaper than resolving paragraph.style each time
        level = levels.get(style)
        if level == 0:
            title = title or block.text.strip()
        elif level is not None:
            builder.heading(level, block.text)
        else:
            builder.paragraph(block.text)
    result = builder.build(title)
    if not result.parts:
        raise Unreadable("no text in this Word document")
    return result


def _heading_levels(document) -> dict[str | None, int]:
    """``{style id: level}`` of the heading styles (0 = Title), following ``based on`` links."""
    levels: dict[str | None, int] = {}
    for style in document.styles:
        base, depth = style, 0
        while base is not None and depth < 10:
            name = (base.name or "").strip()
            found = _HEADING.match(name)
            if found:
                levels[style.style_id] = int(found.group(1))
                break
            if name.lower() == "title":
                levels[style.style_id] = 0
                break
            base, depth = getattr(base, "base_style", None), depth + 1
    return levels


def _unique_cells(row):
    """A row's cells once each (a merged cell appears once per grid column it spans)."""
    seen = []
    for cell in row.cells:
        if not any(cell._tc is s._tc for s in seen):
            seen.append(cell)
    return seen

