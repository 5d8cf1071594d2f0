"""Plain text (``.txt``) and Markdown (``.md``, ``.markdown``), read as UTF-8.

The document's text is the file's own text, so a passage's offsets index the file itself. A
Markdown file is cut at its ATX headings (``# ...`` to ``###### ...``; heading lines are in no
passage), each part carrying its heading path; its title is its first level-1 heading.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from .model import SECTION_SEPARATOR, Document, Part, Unreadable, drop_title

_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$", re.M)
_FENCE = re.compile(r"^(```|~~~)", re.M)


def decode_text(data: bytes) -> str:
    """UTF-8 (a BOM dropped); ``Unreadable`` with the failing line for anything else."""
    if b"\x00" in data[:8192]:
        raise Unreadable("binary data, not text (is the suffix right?)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise Unreadable(f"not valid UTF-8 ({exc.reason}); the file was skipped", line=line) from exc


def read_txt(data: bytes) -> Document:
    text = decode_text(data)
    return Document("", text, [Part(0, len(text))])


def read_markdown(data: bytes) -> Document:
    text = decode_text(data)
    fences = [m.start() for m in _FENCE.finditer(text)]
    # a "# comment" inside a fenced code block is no heading
    headings = [m for m in _MD_HEADING.finditer(text) if bisect_left(fences, m.start()) % 2 == 0]
    title = ""
    if headings and len(headings[0].group(1)) == 1:
        title = headings[0].group(2).strip()
    # one level-1 heading names the document: the citation shows it as the title, not the path
    if sum(len(h.group(1)) == 1 for h in headings) != 1:
        title_step = None
    else:
        title_step = title
    parts: list[Part] = []
    path: list[tuple[int, str]] = []
    start = 0
    for heading in headings:
        parts.append(Part(start, heading.start(), None, SECTION_SEPARATOR.join(t for _, t in path)))
        level, name = len(heading.group(1)), heading.group(2).strip()
        while path and path[-1][0] >= level:
            path.pop()
        if name:
            path.append((level, name))
        start = heading.end()
    parts.append(Part(start, len(text), None, SECTION_SEPARATOR.join(t for _, t in path)))
    if title_step:
        parts = [Part(p.start, p.end, None, drop_title(p.section, title_step)) for p in parts]
    return Document(title, text, [p for p in parts if text[p.start:p.end].strip()])

