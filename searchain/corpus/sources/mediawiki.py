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


PAGES_PER_ITEM = 64  # pages per work item for a worker process (parallel ingest) ...
ITEM_CHARS = 2_000_000  # ... or fewer when they hold this much wikitext: in-flight memory stays small


class MediaWikiSource(Source):
    format = "mediawiki"
    resume_after: str | None = None  # page id of the last page stored by a stopped ingest
    skipped_pages = 0  # pages passed over, unparsed, while resuming

    def passages(self) -> Iterator[Passage]:
        return self._walk(lambda page: self.page_passages(page_record(page)))

    def _walk(self, per_page) -> Iterator:
        """``per_page(<page> element)``'s items over the file's pages, resuming as the module says."""
        try:
            raw = open(self.path, "rb")
        except OSError as exc:
            raise CorpusError(f"Cannot read {self.path}: {exc.strerror or exc}") from exc
        self.bytes_total = raw.seek(0, 2)
        raw.seek(0)
        with raw:
            stream: BinaryIO = bz2.open(raw) if _is_bz2(raw) else raw
            try:
                if (yield from self._pages(stream, raw, self.resume_after, per_page)):
                    return
                raw.seek(0)  # the resume page is not in this file: read it all again
                self.skipped_pages = 0
                stream = bz2.open(raw) if _is_bz2(raw) else raw
                yield from self._pages(stream, raw, None, per_page)
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

    def _pages(self, stream: BinaryIO, raw: BinaryIO, resume_after: str | None, per_page):
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
                yield from per_page(elem)
            elem.clear()
            root.clear()  # drop the finished page from the root's child list
            self.bytes_done = raw.tell()
        return not skipping

    # -- parallel ingest (``corpus.parallel``): work items read here, parsed in workers --------

    @property
    def parse_passages_per_core_s(self) -> int:
        """Passages a worker parses per CPU second, measured on real English pages (BENCHMARKS.md,
        #33; 3,380 before session 30's stripper guards, x1.26 since), for ``fts_build``; a
        single-stream dump is read by the parent: ~2 workers' worth."""
        from .multistream import find_index

        return 4_250 if find_index(self.path) is not None else 0

    def work_items(self) -> Iterator[tuple[object, int]]:
        """``(item, bytes_done)`` in file order: streams of a multistream dump when its index lies
        beside it (each worker decompresses its own), else batches of raw pages read here."""
        from .multistream import find_index, stream_items

        index = find_index(self.path)
        if index is not None:
            self.bytes_total = self.path.stat().st_size
            yield from stream_items(self, index)
            return
        batch: list[tuple] = []
        size = 0
        try:
            for record in self._records():
                batch.append(record)
                size += len(record[4])
                if len(batch) >= PAGES_PER_ITEM or size >= ITEM_CHARS:
                    yield ("pages", batch), self.bytes_done
                    batch, size = [], 0
        except CorpusError:  # the file breaks off: the pages read before it still count
            if batch:
                yield ("pages", batch), self.bytes_done
            raise
        if batch:
            yield ("pages", batch), self.bytes_done

    def parse_item(self, item) -> list[Passage]:
        """A work item's passages (in a worker): a batch of pages, or a multistream stream."""
        kind, payload = item
        if kind == "stream":
            from .multistream import stream_records

            records = stream_records(self.path, *payload, page_record)
        else:
            records = payload
        return [p for record in records for p in self.page_passages(record)]

    def _records(self) -> Iterator[tuple]:
        """The raw page records of the file (after the resume page, inclusive), as ``passages``
        reads them: the same resume and the same errors."""
        return self._walk(lambda page: (page_record(page),))

    def page_passages(self, record: tuple) -> list[Passage]:
        """The passages of one page record ``(page id, title, ns, redirect, markup)``; a page
        whose markup the stripper cannot handle is skipped and named, the others go on."""
        page_id, title, ns, redirect, markup = record
        if ns != "0" or redirect or markup.lstrip()[:9].upper() == "#REDIRECT":
            self.ignored += 1
            return []
        if not title or not page_id:
            self.problems.skip(self.path, None, f"page without title or id (title={title!r}, id={page_id!r})")
            return []
        try:
            sections = wikitext_sections(markup)
        except Exception as exc:  # noqa: BLE001 - one odd page must not stop a 20 GB ingest
            self.problems.skip(self.path, None, f"page {page_id} ({title!r}): its wikitext could "
                               f"not be converted ({type(exc).__name__}: {exc}); page skipped")
            return []
        doc = "\n\n".join(text for _, text in sections)  # = strip_wikitext(markup)
        out: list[Passage] = []
        at = 0
        for section, text in sections:  # passages do not cross sections
            for start, end in chunk_spans(doc, at, at + len(text)):
                out.append(Passage(self.corpus, f"{page_id}#{len(out)}", title, doc[start:end],
                                   f"{self.path.name}#{title}", page_id, start, end, section=section))
            at += len(text) + 2
        if not out:
            self.ignored += 1  # a stub whose text was all markup
        return out


def page_record(page: ET.Element) -> tuple[str, str, str, bool, str]:
    """``(page id, title, namespace, is a redirect, markup)`` of a ``<page>`` element: small and
    picklable, what a worker process needs to make the page's passages."""
    fields = {_local(child.tag): child for child in page}
    title = (fields["title"].text or "").strip() if "title" in fields else ""
    page_id = (fields["id"].text or "").strip() if "id" in fields else ""
    ns = (fields["ns"].text or "0").strip() if "ns" in fields else "0"
    revision = fields.get("revision")
    text_elem = None
    if revision is not None:
        text_elem = next((c for c in revision if _local(c.tag) == "text"), None)
    markup = (text_elem.text or "") if text_elem is not None else ""
    return page_id, title, ns, "redirect" in fields, markup


def _local(tag: str) -> str:
    """Tag name without the ``{namespace}`` prefix dumps carry."""
    return tag.rsplit("}", 1)[-1]


def _is_bz2(raw: BinaryIO) -> bool:
    magic = raw.read(3)
    raw.seek(0)
    return magic == b"BZh"
