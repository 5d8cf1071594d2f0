"""EPUB e-books with the standard library and the HTML reader: the chapters the package's spine
lists, in reading order, each read like a web page; the title from the package metadata.

A chapter's section path starts from its entry in the book's table of contents (EPUB 3 ``nav``
or EPUB 2 ``toc.ncx``); its own ``h1`` replaces that, deeper headings extend it. Not ebooklib:
reading needs only ZIP and XML, and ebooklib is AGPL (the tests use it to write books).
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
from urllib.parse import unquote

from .html import add_html, decode_html
from .model import Document, DocumentBuilder, Unreadable, short_error
from .sniff import check_package

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_NCX = "{http://www.daisy.org/z3986/2005/ncx/}"
_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
_XHTML = ("application/xhtml+xml", "text/html")


def read_epub(data: bytes) -> Document:
    with check_package(data, "META-INF/container.xml", "an EPUB e-book") as archive:
        try:
            return _read(archive)
        except (ET.ParseError, KeyError, ValueError, OSError) as exc:
            raise Unreadable(f"damaged EPUB e-book: {short_error(exc)}") from exc
        except RecursionError as exc:
            raise Unreadable("a chapter's HTML is nested too deeply to read") from exc


def _read(archive) -> Document:
    container = ET.fromstring(archive.read("META-INF/container.xml"))
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise Unreadable("damaged EPUB e-book: META-INF/container.xml names no package file")
    opf_path = rootfile.get("full-path")
    package = ET.fromstring(archive.read(opf_path))
    base = posixpath.dirname(opf_path)
    manifest = {item.get("id"): item for item in package.iter(f"{_OPF}item")}
    chapters = []
    for ref in package.iter(f"{_OPF}itemref"):
        item = manifest.get(ref.get("idref"))
        if item is None or item.get("media-type") not in _XHTML or _is_nav(item):
            continue
        chapters.append(_join(base, item.get("href", "")))
    _refuse_drm(archive, set(chapters))
    labels = _toc_labels(archive, base, manifest.values())
    builder = DocumentBuilder()
    for path in chapters:
        if path not in archive.NameToInfo:
            continue  # a spine entry without its file: the rest of the book still reads
        builder.reset_headings()
        if labels.get(path):
            builder.heading(1, labels[path], write=False)
        add_html(decode_html(archive.read(path)), builder)
    found = package.find(f".//{_DC}title")
    document = builder.build((found.text or "") if found is not None else "")
    if not document.parts:
        raise Unreadable("no text in this e-book (only images?)")
    return document


def _is_nav(item) -> bool:
    """The EPUB 3 navigation document (the table of contents as a page), not a chapter."""
    return "nav" in (item.get("properties") or "").split()


def _join(base: str, href: str) -> str:
    return posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0])))


def _refuse_drm(archive, chapters: set[str]) -> None:
    """An ``encryption.xml`` that covers chapters (not just fonts, which publishers obfuscate)
    means DRM: the text is ciphertext."""
    if "META-INF/encryption.xml" not in archive.NameToInfo:
        return
    tree = ET.fromstring(archive.read("META-INF/encryption.xml"))
    encrypted = {unquote(ref.get("URI", "")) for ref in tree.iter(f"{_ENC}CipherReference")}
    if encrypted & chapters:
        raise Unreadable("DRM-protected e-book: its chapters are encrypted; only DRM-free EPUBs can be read")


def _toc_labels(archive, base: str, items) -> dict[str, str]:
    """``{chapter path: its first label in the table of contents}`` (EPUB 3 nav, else NCX)."""
    labels: dict[str, str] = {}
    for item in items:
        href = _join(base, item.get("href", ""))
        if href not in archive.NameToInfo:
            continue
        if _is_nav(item):
            from selectolax.lexbor import LexborHTMLParser

            tree = LexborHTMLParser(decode_html(archive.read(href)))
            navs = [n for n in tree.css("nav") if (n.attributes.get("epub:type") or "") == "toc"]
            for link in (navs[0] if navs else tree).css("a[href]"):
                target = _join(posixpath.dirname(href), link.attributes.get("href") or "")
                labels.setdefault(target, " ".join(link.text(deep=True).split()))
            if labels:
                return labels
        elif item.get("media-type") == "application/x-dtbncx+xml":
            ncx = ET.fromstring(archive.read(href))
            for point in ncx.iter(f"{_NCX}navPoint"):
                text, content = point.find(f"{_NCX}navLabel/{_NCX}text"), point.find(f"{_NCX}content")
                if text is not None and content is not None:
                    target = _join(posixpath.dirname(href), content.get("src", ""))
                    labels.setdefault(target, " ".join((text.text or "").split()))
    return labels
