"""HTML (a saved web page, an e-book chapter) through selectolax (the Lexbor parser): the main
content's headings and blocks in order, headings ``h1``-``h6`` as the section path.

Chosen over trafilatura by measurement (docs/corpus.md): it is many times faster, keeps every
block of a page that is all content (an e-book chapter, a manual) where a boilerplate
classifier may drop some, and pulls in one small wheel. Site chrome is left out by structure:
the page's ``<main>`` (else its ``<article>``s, else its ``<body>``), without navigation,
footers, asides, forms, scripts and styles, nor the blocks that older sites mark as chrome by
name only (``<div id="top-menu">``, ``class="sidebar"``, ARIA roles: see ``_CHROME_WORDS``).
"""

from __future__ import annotations

import re

from .model import Document, DocumentBuilder, Unreadable
from .sniff import mismatch

# Never body text.
_DROP = {"script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object",
         "nav", "aside", "footer", "form", "button", "select", "textarea", "head", "-comment"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Elements that end a block of text (a paragraph of the document) before and after them.
_BLOCKS = {"p", "div", "section", "article", "main", "li", "ul", "ol", "dl", "dt", "dd",
           "blockquote", "pre", "table", "tr", "figure", "figcaption", "address", "details",
           "summary", "caption", "hr", "br", "body", "header", "center"}
_CELLS = {"td", "th"}
# A container whose id or class has one of these words (split at "-", "_", spaces) is site
# chrome. Not "header" ("post-header" holds the title) nor "related" ("related-work").
_CHROME_WORDS = {"nav", "navbar", "navigation", "menu", "menubar", "sidebar", "footer",
                 "breadcrumb", "breadcrumbs", "cookie", "cookies", "banner", "advert",
                 "advertisement", "ads", "share", "sharing", "social", "comments", "masthead",
                 "toolbar", "widget", "popup", "newsletter", "subscribe", "skip"}
_CHROME_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"}
_NAMED = {"div", "section", "ul", "ol", "table", "span", "p", "header"}  # containers checked by name
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)


def decode_html(data: bytes) -> str:
    """The page's text: its byte-order mark, else its ``<meta charset>``, else UTF-8, else
    Windows-1252 (what browsers assume for old pages without one)."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):].decode(codec, errors="replace")
    declared = _CHARSET.search(data[:4096])
    if declared:
        try:
            return data.decode(declared.group(1).decode("ascii"), errors="replace")
        except LookupError:
            pass  # an unknown name: guess below
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def read_html(data: bytes) -> Document:
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n")
    if b"\x00" in data[:1024] and not data.startswith((b"\xff\xfe", b"\xfe\xff")) or \
            (not head.startswith(b"<") and b"<" not in data[:4096]):
        raise mismatch("an HTML page", data)
    builder = DocumentBuilder()
    try:
        title = add_html(decode_html(data), builder)
    except RecursionError as exc:
        raise Unreadable("HTML nested too deeply to read (over ~900 levels)") from exc
    document = builder.build(title or builder.first_heading)
    if not document.parts:
        raise Unreadable("no text in this page (only scripts, navigation or images?)")
    return document


def add_html(html: str, builder: DocumentBuilder) -> str:
    """Append the main content of ``html`` to ``builder``; returns the page's ``<title>``."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = title_node.text(deep=True).strip() if title_node is not None else ""
    for root in _content_roots(tree):
        _Walker(builder).walk(root)
    return title


def _content_roots(tree) -> list:
    """``<main>``, else the ``<article>``s not inside another, else the body (or the document)."""
    main = tree.css_first("main, [role=main]")
    if main is not None:
        return [main]
    articles = [a for a in tree.css("article") if not _inside(a, "article")]
    if articles:
        return articles
    return [tree.body if tree.body is not None else tree.root]


def _inside(node, tag: str) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag == tag:
            return True
        parent = parent.parent
    return False


def _is_chrome(node) -> bool:
    """True for a block named as site chrome by its id, class or ARIA role."""
    attrs = node.attributes
    if not attrs:
        return False
    if (attrs.get("role") or "").lower() in _CHROME_ROLES:
        return True
    names = f"{attrs.get('id') or ''} {attrs.get('class') or ''}".lower()
    return bool(names.strip()) and not _CHROME_WORDS.isdisjoint(_WORD_SPLIT.split(names))


class _Walker:
    """Depth-first over the DOM, collecting inline text until a block boundary."""

    def __init__(self, builder: DocumentBuilder):
        self.builder = builder
        self.inline: list[str] = []
        self.pre = 0  # inside <pre>: keep its lines

    def walk(self, node) -> None:
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag == "-text":
                self.inline.append(child.text_content or "")
            elif tag in _DROP or (tag in _NAMED and _is_chrome(child)):
                continue
            elif tag in _HEADINGS:
                self.flush()
                self.builder.heading(_HEADINGS[tag], child.text(deep=True, separator=" "))
            elif tag in _CELLS:
                self.inline.append(" ")
                self.walk(child)
                self.inline.append(" | ")
            elif tag in _BLOCKS:
                self.flush()
                self.pre += tag == "pre"
                self.walk(child)
                self.flush()
                self.pre -= tag == "pre"
            else:  # inline: a, b, span, em, code, ...
                self.walk(child)

    def flush(self) -> None:
        if self.inline:
            text = "".join(self.inline).strip().strip("|").strip()
            self.inline = []
            self.builder.paragraph(text, keep_lines=self.pre > 0)
