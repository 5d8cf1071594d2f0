"""Multistream MediaWiki dumps: many bzip2 streams of ~100 pages each, and an index of them.

Wikimedia publishes ``<wiki>-<date>-pages-articles-multistream.xml.bz2`` with
``<wiki>-<date>-pages-articles-multistream-index.txt.bz2`` beside it: one line per page,
``<byte offset of its stream>:<page id>:<title>``. A stream can be decompressed on its own, so a
parallel ingest hands each worker byte ranges of the dump (``stream_items``) instead of
decompressing and parsing the whole file in one process (with storing, half the CPU time of a
serial ingest, measured on real pages: a single-stream dump gains at most 2x from workers).

The first stream holds only ``<mediawiki><siteinfo>``, the last only ``</mediawiki>``; the
others are bare ``<page>`` elements, which ``stream_records`` parses inside a wrapper element.
A plain ``bz2.open`` reads the same file as one stream, which is what the serial path does: the
pages, their order and so the passages are the same either way.
"""

from __future__ import annotations

import bz2
import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterator

from ...errors import CorpusError

STREAMS_PER_ITEM = 2  # ~200 pages a work item: small to hold, big enough to be worth sending
_INDEX_SUFFIXES = ("-index.txt.bz2", "-index.txt")


def find_index(dump: Path) -> Path | None:
    """The index beside a ``...-multistream.xml.bz2`` dump, or None (not multistream, or no index)."""
    name = dump.name
    if not name.endswith(".xml.bz2"):
        return None
    stem = name[: -len(".xml.bz2")]
    for suffix in _INDEX_SUFFIXES:
        candidate = dump.with_name(stem + suffix)
        if candidate.is_file():
            return candidate
    return None


def _index_lines(index: Path) -> Iterator[tuple[int, str, int]]:
    """``(stream offset, page id, line number)`` per index line, streamed (an index of English
    Wikipedia is ~25 M lines: never held whole)."""
    opener = bz2.open if index.name.endswith(".bz2") else open
    try:
        with opener(index, "rt", encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                offset, _, rest = line.partition(":")
                page_id = rest.partition(":")[0]
                if not line.strip():
                    continue
                if not offset.isdigit():
                    raise CorpusError(f"{index}:{number}: not a multistream index line "
                                      f"({line[:80].rstrip()!r}; expected OFFSET:PAGE_ID:TITLE).",
                                      hint="Move the index away to read the dump without it.")
                yield int(offset), page_id, number
    except (OSError, EOFError) as exc:
        raise CorpusError(f"Cannot read the multistream index {index}: {exc}",
                          hint="Download the index again, or move it away to read the dump "
                          "without it.") from exc


def stream_items(source, index: Path) -> Iterator[tuple[object, int]]:
    """``(("stream", (offset, length)), bytes_done)`` over the dump's page streams, in file order.

    Resuming (``source.resume_after``): streams before the one holding that page are passed over
    without reading them; should the page not be in the index, every stream is read.
    """
    size = source.bytes_total
    offsets: list[int] = []
    resume_at = None
    last = -1
    for offset, page_id, number in _index_lines(index):
        if offset != last:
            if offset < last or offset >= size:
                raise CorpusError(f"{index}:{number}: stream offset {offset} does not fit "
                                  f"{source.path} ({size:,} bytes): the index belongs to another dump.",
                                  hint="Put the dump's own index beside it, or move the index away.")
            offsets.append(offset)
            last = offset
        if resume_at is None and source.resume_after is not None and page_id == source.resume_after:
            resume_at = len(offsets) - 1
    if not offsets:
        raise CorpusError(f"The multistream index {index} is empty.",
                          hint="Download the index again, or move it away.")
    ends = offsets[1:] + [size]
    first = resume_at or 0
    source.skipped_pages = 0
    for k in range(first, len(offsets), STREAMS_PER_ITEM):
        stop = min(k + STREAMS_PER_ITEM, len(offsets))
        start, end = offsets[k], ends[stop - 1]
        yield ("stream", (start, end - start)), end


def stream_records(path: Path, offset: int, length: int, page_record) -> list[tuple]:
    """``page_record(<page> element)`` (``mediawiki.page_record``) of each page in the bzip2
    streams at ``offset``."""
    where = f"{path}, bytes {offset:,}-{offset + length:,}"
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = bz2.decompress(fh.read(length))
    except (OSError, EOFError, ValueError) as exc:
        raise CorpusError(f"{where}: not a complete bzip2 stream ({exc}); pages before it were added.",
                          hint="The dump is damaged or its index belongs to another dump: download "
                          "both again, or move the index away to read the dump without it.") from exc
    first, last = data.find(b"<page>"), data.rfind(b"</page>")
    if first < 0 or last < 0:
        return []  # the header or the closing stream
    body = b"<pages>" + data[first:last + len(b"</page>")] + b"</pages>"
    records = []
    try:
        for _, elem in ET.iterparse(io.BytesIO(body)):
            if elem.tag.rsplit("}", 1)[-1] == "page":
                records.append(page_record(elem))
                elem.clear()
    except ET.ParseError as exc:
        raise CorpusError(f"{where}: the XML is malformed ({exc}); pages before it were added.",
                          hint="The dump may be damaged: download it again.") from exc
    return records
