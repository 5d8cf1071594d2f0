"""Article HTML (as Kiwix ZIM files hold it) to plain text, section by section.

``article_sections(html)`` returns ``[(section_path, [paragraph, ...]), ...]`` in reading order:
the lead section has the path "", later ones their heading path (``"History > Early years"``).
What is not prose is removed before the text is read: infoboxes and every other table,
navboxes, figures and thumbnails, hatnotes, edit links, reference marks (``[1]``), styles and
scripts; the sections named in ``sections.NON_PROSE_SECTIONS`` are skipped with everything
under them. Text comes from paragraphs, list items, definitions and block quotes.

selectolax (the lexbor engine) parses; docs/corpus.md compares it with lxml on test pages.
"""

from __future__ import annotations

import re

from .sections import is_non_prose, section_path

# Removed with their contents before any text is read. Classes are those of MediaWiki's HTML
# (Parsoid and the legacy parser) that mwoffliner and other ZIM writers keep.
_DROP = ", ".join((
    "script", "style", "noscript", "template", "table", "figure", "figcaption", "img", "audio",
    "video", "math", "sup.reference", ".mw-ref", ".reference", ".mw-editsection", ".infobox",
    ".navbox", ".vertical-navbox", ".sidebar", ".thumb", ".hatnote", ".metadata", ".ambox",
    ".noprint", ".reflist", ".references", ".mw-references-wrap", ".refbegin", ".gallery",
    ".toc", "#toc", ".mw-empty-elt", ".portalbox", ".shortdescription", ".mwe-math-element",
))
_BLOCKS = "h1, h2, h3, h4, h5, h6, p, li, dd, dt, blockquote"
_SPACES = re.compile(r"\s+")
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;:]?\s*\)|\[\s*\]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?)])")


def article_sections(html: str) -> list[tuple[str, list[str]]]:
    """Prose of one article page, grouped by section (see module doc); [] for a page without."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    root = tree.body or tree.root
    if root is None:
        return []
    for node in root.css(_DROP):
        node.decompose()
    sections: list[tuple[str, list[str]]] = [("", [])]
    headings: list[str] = []  # heading text per level, h2 at index 0
    skip_level: int | None = None  # inside a non-prose section of this level
    for node in root.css(_BLOCKS):
        tag = node.tag
        if tag[0] == "h" and tag[1:].isdigit():
            level = int(tag[1:])
            if level == 1:
                continue  # the page title, which the passage carries already
            text = clean_text(node.text(deep=True))
            if skip_level is not None and level > skip_level:
                continue
            skip_level = level if is_non_prose(text) else None
            del headings[level - 2:]
            headings += [""] * (level - 2 - len(headings)) + [text]
            sections.append((section_path(headings), []))
            continue
        if skip_level is not None or _has_block_inside(node):
            continue  # a list item's own paragraphs and sub-items are read on their own
        text = clean_text(node.text(deep=True))
        if text:
            sections[-1][1].append(text)
    return [(path, paras) for path, paras in sections if paras]


def clean_text(text: str) -> str:
    """One line of text: spaces collapsed, brackets emptied by removed marks dropped."""
    text = _SPACES.sub(" ", text.replace("\xa0", " ")).strip()
    text = _EMPTY_BRACKETS.sub("", text)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", text)).strip()


def _has_block_inside(node) -> bool:
    if node.tag not in ("li", "dd", "blockquote"):
        return False
    # (lexbor's css() matches the node itself too, so it is left out by identity)
    return any(inner.mem_id != node.mem_id for inner in node.css("p, li, dd"))
