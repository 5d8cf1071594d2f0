"""Kiwix ZIM files (``wikipedia_en_all_nopic_*.zim`` and the like), read with ``libzim``.

Which entries are articles:
- a ZIM with the namespace-less scheme (libzim 7+, every current Kiwix file) lists its front
  articles in ``listing/titleOrdered/v1``: those that are ``text/html`` and not redirects;
- an older ZIM keeps articles in the ``A/`` namespace: ``A/`` entries that are ``text/html``;
- the main page (a portal, not an article), redirects, media, metadata and other pages are
  left out and counted in ``ignored``.

Each article's HTML becomes sections of prose (``zimhtml.article_sections``); each section is
chunked into ~100-word passages that do not cross sections. A passage records the article's
title, its section path, ``doc_id`` = its path inside the ZIM, ``source`` = ``"<file>#<path>"``,
and ``url``: the article on the web when the ZIM's metadata names its wiki (see ``wiki_base``),
else ``"<file>#<path>"``. pids are ``"<path>#<k>"``; offsets index the article's plain text.

Resuming (``resume_after``, an article's path): a stopped ingest of the same file passes over
the articles before the last one it stored without reading them (stored pids are skipped anyway).

A damaged file adds nothing: it is checked before the first article is read (libzim's
verification of the MD5 checksum the ZIM carries; one pass over the file, a few minutes for
100 GB against hours of ingest). A file without a checksum that fails mid-way names the article.
"""

from __future__ import annotations

import array
import re
from typing import Iterator
from urllib.parse import quote, urlsplit

from ...errors import CorpusError
from ...types import Passage
from ..chunking import chunk_spans
from .base import Source
from .zimhtml import article_sections

ZIM_MAGIC = b"ZIM\x04"  # the first four bytes of every ZIM file (0x044D495A little-endian)
_FRONT_LISTING = "listing/titleOrdered/v1"
ENTRIES_PER_ITEM = 64  # articles per work item of a parallel ingest
# Kiwix names: "wikipedia_en_all_nopic_2024-06", "wikipedia_en_simple_all"; files of 2017 and
# earlier "kiwix.wikibooks_be_all"; other Wikimedia projects the same way.
_WIKI_NAME = re.compile(r"^(?:kiwix\.)?(wikipedia|wiktionary|wikivoyage|wikibooks|wikiquote|wikisource|"
                        r"wikinews|wikiversity)_([a-z]{2,3}(?:-[a-z]+)?)_(?:(simple)_)?")
_WIKI_HOST = re.compile(r"^[a-z0-9-]+\.(?:wikipedia|wiktionary|wikivoyage|wikibooks|wikiquote|"
                        r"wikisource|wikinews|wikiversity)\.org$")
_DAMAGED_HINT = ("The file may be truncated or damaged (an interrupted download?): download it "
                 "again, or check it with zimcheck.")


class ZimSource(Source):
    format = "zim"
    # Passages a worker parses per CPU second (``fts_build``), libzim's reading included: 4,100
    # on real English Wikipedia article HTML (~11 kB of HTML a passage; BENCHMARKS.md, #33).
    parse_passages_per_core_s = 4_100
    resume_after: str | None = None  # path of the last article stored by a stopped ingest
    skipped_pages = 0  # articles passed over, unread, while resuming

    def passages(self) -> Iterator[Passage]:
        try:
            yield from self._passages()
        except UnicodeDecodeError as exc:  # libzim decodes entry names as UTF-8 when asked
            raise CorpusError(f"{self.path}: an entry's name is not valid UTF-8 ({exc.reason}): "
                              "the file is damaged. Articles before it were added.",
                              hint=_DAMAGED_HINT) from exc

    def _passages(self) -> Iterator[Passage]:
        archive, base, ids = self._setup()
        for n, entry_id in enumerate(ids, start=1):
            yield from self._read(archive, entry_id, base)
            self.bytes_done = archive.filesize * n // len(ids)

    def _setup(self):
        archive = self._open()
        self.bytes_total = archive.filesize
        base = wiki_base(_metadata(archive, "Source"), _metadata(archive, "Name"))
        ids = self._article_ids(archive)
        self._main = _main_path(archive)
        if self.resume_after is not None:
            ids = self._from_resume_point(archive, ids)
        return archive, base, ids

    def _from_resume_point(self, archive, ids: list[int]) -> list[int]:
        """The ids from the article a stopped ingest stored last (its path is ``resume_after``)
        on; the articles before it are passed over by path, without reading them. All of them
        when that article is not in the file."""
        for k, entry_id in enumerate(ids):
            if archive._get_entry_by_id(entry_id).path == self.resume_after:  # noqa: SLF001
                self.skipped_pages = k
                return ids[k:]
        return ids

    def _read(self, archive, entry_id: int, base: str) -> list[Passage]:
        entry = archive._get_entry_by_id(entry_id)  # noqa: SLF001 - libzim's only id lookup
        try:
            return self._article(archive, entry, base)
        except RuntimeError as exc:  # libzim reports a damaged cluster as RuntimeError
            raise CorpusError(
                f"{self.path}: cannot read article {entry.title!r} ({entry.path}): {exc}. "
                f"Articles before it were added.", hint=_DAMAGED_HINT) from exc

    # -- parallel ingest (``corpus.parallel``): ranges of entry ids, read in workers --------

    def work_items(self) -> Iterator[tuple[object, int]]:
        """``(("entries", ids), bytes_done)``: the articles in ranges of ENTRIES_PER_ITEM, in
        path order; the file is opened and checked here, once."""
        archive, _, ids = self._setup()
        for k in range(0, len(ids), ENTRIES_PER_ITEM):
            stop = min(k + ENTRIES_PER_ITEM, len(ids))
            yield ("entries", ids[k:stop]), archive.filesize * stop // len(ids)

    def parse_item(self, item) -> list[Passage]:
        """The passages of a range of entries (in a worker, which opens the file once)."""
        if getattr(self, "_worker_archive", None) is None:
            from libzim.reader import Archive

            try:
                archive = Archive(str(self.path))
            except RuntimeError as exc:
                raise CorpusError(f"{self.path} is not a readable ZIM file ({exc}).",
                                  hint=_DAMAGED_HINT) from exc
            self._worker_archive = archive
            self._worker_base = wiki_base(_metadata(archive, "Source"), _metadata(archive, "Name"))
            self._main = _main_path(archive)
        try:
            return [p for entry_id in item[1]
                    for p in self._read(self._worker_archive, entry_id, self._worker_base)]
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{self.path}: an entry's name is not valid UTF-8 ({exc.reason}): "
                              "the file is damaged. Articles before it were added.",
                              hint=_DAMAGED_HINT) from exc

    def _open(self):
        from libzim.reader import Archive

        try:
            archive = Archive(str(self.path))
        except RuntimeError as exc:
            raise CorpusError(f"{self.path} is not a readable ZIM file ({exc}); nothing was added.",
                              hint=_DAMAGED_HINT) from exc
        if archive.has_checksum and not archive.check():
            raise CorpusError(f"{self.path} fails its own checksum: the file is damaged; "
                              "nothing was added.", hint=_DAMAGED_HINT)
        return archive

    def _article_ids(self, archive) -> list[int]:
        """Entry ids of the candidate articles, in path order (the file's own order)."""
        if archive.has_new_namespace_scheme:
            listing = _front_listing(archive)
            if listing is not None:
                self.ignored += archive.entry_count - len(listing)
                return sorted(listing)
            return list(range(archive.entry_count))
        ids = []
        for entry_id in range(archive.entry_count):
            if archive._get_entry_by_id(entry_id).path.startswith("A/"):  # noqa: SLF001
                ids.append(entry_id)
            else:
                self.ignored += 1
        return ids

    def _article(self, archive, entry, base: str) -> list[Passage]:
        if entry.is_redirect or entry.path == self._main:
            self.ignored += 1
            return []
        item = entry.get_item()
        if not item.mimetype.startswith("text/html"):
            self.ignored += 1
            return []
        html = bytes(item.content).decode("utf-8", errors="replace")
        title = entry.title or entry.path.rsplit("/", 1)[-1].replace("_", " ")
        sections = article_sections(html)
        if not sections:
            self.ignored += 1  # a page without prose (a list of tables, a disambiguation stub)
            return []
        parts, starts = [], []
        at = 0
        for _, paragraphs in sections:
            body = "\n\n".join(paragraphs)
            starts.append(at)
            parts.append(body)
            at += len(body) + 2
        doc = "\n\n".join(parts)
        here = f"{self.path.name}#{entry.path}"
        url = base + quote(_web_title(entry.path), safe="/:()_,'!*-.~") if base else here
        out = []
        for (section, _), start, body in zip(sections, starts, parts):
            for s, e in chunk_spans(doc, start, start + len(body)):
                out.append(Passage(self.corpus, f"{entry.path}#{len(out)}", title, doc[s:e], here,
                                   entry.path, s, e, url=url, section=section))
        return out


def wiki_base(source: str, name: str) -> str:
    """``"https://en.wikipedia.org/wiki/"`` when the ZIM says which wiki it copies, else "".

    Conservative: an http(s) ``Source`` metadata naming a Wikimedia wiki's host, or a Kiwix
    ``Name`` of the form ``wikipedia_<lang>_...`` (``wikipedia_en_simple_...`` is Simple
    English; ``kiwix.wikibooks_be_all`` the older form, other Wikimedia projects alike).
    Anything else (a ZIM of another site, a renamed file) gets no web address.
    """
    parts = urlsplit(source.strip())
    if parts.scheme in ("http", "https") and _WIKI_HOST.match(parts.hostname or ""):
        return f"https://{parts.hostname}/wiki/"
    match = _WIKI_NAME.match(name.strip())
    if match:
        project, lang, simple = match.groups()
        return f"https://{simple or lang}.{project}.org/wiki/"
    return ""


def _web_title(path: str) -> str:
    """The wiki title of an article's path: ``A/`` and, as mwoffliner wrote until ~2018, ``.html`` dropped."""
    path = path[2:] if path.startswith("A/") else path
    return path[:-5] if path.endswith(".html") else path


def _metadata(archive, key: str) -> str:
    try:
        return bytes(archive.get_metadata(key)).decode("utf-8", errors="replace")
    except (RuntimeError, KeyError):
        return ""


def _main_path(archive) -> str | None:
    try:
        if not archive.has_main_entry:
            return None
        main = archive.main_entry
        return main.get_redirect_entry().path if main.is_redirect else main.path
    except RuntimeError:
        return None


def _front_listing(archive) -> list[int] | None:
    """Ids of the front articles, from the title listing the namespace-less scheme writes."""
    for entry_id in range(archive.entry_count, archive.all_entry_count):
        entry = archive._get_entry_by_id(entry_id)  # noqa: SLF001
        if entry.path == _FRONT_LISTING and not entry.is_redirect:
            ids = array.array("I")
            ids.frombytes(bytes(entry.get_item().content))
            if array.array("I", [1]).tobytes() != b"\x01\x00\x00\x00":
                ids.byteswap()  # stored little-endian
            return [i for i in ids if i < archive.entry_count]
    return None
