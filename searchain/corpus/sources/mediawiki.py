"""MediaWiki XML dumps (``pages-articles.xml`` or ``.xml.bz2``), streamed in constant memory.

``iterparse`` walks the XML one element at a time; each ``<page>`` is handled when it closes
and then cleared, and the root is cleared too so finished pages do not pile up. Only articles
are kept (namespace 0, not redirects). Each article's wikitext is stripped to plain text and
split into ~100-word passages; offsets index that plain text, pids are ``"<page id>#<k>"``.

Resuming (``resume_after``, a page id): a stopped ingest of the same dump skips the pages before
that page without stripping their markup (stripping is most of the parse time), then goes on
from it. Should the page not be in the file (a different dump under the same name), the file is
read again from the start: stored passages are skipped by pid either way, so nothing is lost.
"""

from __future__ import annotations

import bz2
import xml.etree.ElementTree as ET
from typing import BinaryIO, Iterator

from ...errors import CorpusError
from ...types import Passage
from ..chunking import chunk_spans
from .base import Source
from .wikitext import wikitext_sections


class MediaWikiSource(Source):
    format = "mediawiki"
    resume_after: str | None = None  # page id of the last page stored by a stopped ingest
    skipped_pages = 0  # pages passed over, unparsed, while resuming

    def passages(self) -> Iterator[Passage]:
        try:
            raw = open(self.path, "rb")
        except OSError as exc:
            raise CorpusError(f"Cannot read {self.path}: {exc.strerror or exc}") from exc
        self.bytes_total = raw.seek(0, 2)
        raw.seek(0)
        with raw:
            stream: BinaryIO = bz2.open(raw) if _is_bz2(raw) else raw
            try:
                if (yield from self._pages(stream, raw, self.resume_after)):
                    return
                raw.seek(0)  # the resume page is not in this file: read it all again
                self.skipped_pages = 0
                stream = bz2.open(raw) if _is_bz2(raw) else raw
                yield from self._pages(stream, raw, None)
            except ET.ParseError as exc:
                line = exc.position[0] if exc.position else None
                raise CorpusError(
                    f"{self.path}:{line}: the XML is malformed ({exc}); pages before this point "
                    "were added, the rest of the file was not read.",
                    hint="The dump may be truncated or damaged: download it again.") from exc
            except (EOFError, OSError) as exc:
                raise CorpusError(
                    f"{self.path}: the compressed stream ends early or is damaged ({exc}); pages "
                    "before this point were added.",
                    hint="Download the dump again.") from exc

    def _pages(self, stream: BinaryIO, raw: BinaryIO, resume_after: str | None):
        """Yield the passages of every page (after ``resume_after``'s, inclusive, when given);
        returns False when ``resume_after`` never came."""
        root = None
        skipping = resume_after is not None
        for event, elem in ET.iterparse(stream, events=("start", "end")):
            if root is None:
                root = elem
                if _local(root.tag) != "mediawiki":
                    raise CorpusError(f"{self.path} is not a MediaWiki dump (root element "
                                      f"<{_local(root.tag)}>, expected <mediawiki>).",
                                      hint="Pass --format to pick the right format.")
            if event != "end" or _local(elem.tag) != "page":
                continue
            if skipping:
                page_id = next(((c.text or "").strip() for c in elem if _local(c.tag) == "id"), "")
                skipping = page_id != resume_after
                self.skipped_pages += skipping
            if not skipping:
                yield from self._page(elem)
            elem.clear()
            root.clear()  # drop the finished page from the root's child list
            self.bytes_done = raw.tell()
        return not skipping

    def _page(self, page: ET.Element) -> Iterator[Passage]:
        fields = {_local(child.tag): child for child in page}
        title = (fields["title"].text or "").strip() if "title" in fields else ""
        page_id = (fields["id"].text or "").strip() if "id" in fields else ""
        ns = (fields["ns"].text or "0").strip() if "ns" in fields else "0"
        revision = fields.get("revision")
        text_elem = None
        if revision is not None:
            text_elem = next((c for c in revision if _local(c.tag) == "text"), None)
        markup = (text_elem.text or "") if text_elem is not None else ""
        if ns != "0" or "redirect" in fields or markup.lstrip()[:9].upper() == "#REDIRECT":
            self.ignored += 1
            return
        if not title or not page_id:
            self.problems.skip(self.path, None, f"page without title or id (title={title!r}, id={page_id!r})")
            return
        sections = wikitext_sections(markup)
        doc = "\n\n".join(text for _, text in sections)  # = strip_wikitext(markup)
        k = at = 0
        for section, text in sections:  # passages do not cross sections
            for start, end in chunk_spans(doc, at, at + len(text)):
                yield Passage(self.corpus, f"{page_id}#{k}", title, doc[start:end],
                              f"{self.path.name}#{title}", page_id, start, end, section=section)
                k += 1
            at += len(text) + 2
        if not k:
            self.ignored += 1  # a stub whose text was all markup


def _local(tag: str) -> str:
    """Tag name without the ``{namespace}`` prefix dumps carry."""
    return tag.rsplit("}", 1)[-1]


def _is_bz2(raw: BinaryIO) -> bool:
    magic = raw.read(3)
    raw.seek(0)
    return magic == b"BZh"
