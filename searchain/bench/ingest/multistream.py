"""Make a multistream dump (and its index) from any MediaWiki dump, as Wikimedia lays them out.

``to_multistream(dump, out, pages_per_stream=100)`` writes ``out`` (``...-multistream.xml.bz2``):
a first bzip2 stream with everything before the first ``<page>`` (``<mediawiki>``, siteinfo),
one stream per ``pages_per_stream`` pages, and a last one with ``</mediawiki>``; and beside it
``...-multistream-index.txt.bz2`` with ``offset:page id:title`` per page. The benchmark and the
tests use it: a real multistream dump of English Wikipedia is 22 GB.
"""

from __future__ import annotations

import bz2
import re
from pathlib import Path

_ID = re.compile(rb"<id>\s*(\d+)\s*</id>")
_TITLE = re.compile(rb"<title>(.*?)</title>", re.S)


def to_multistream(dump: Path, out: Path, pages_per_stream: int = 100, processes: int = 1
                   ) -> tuple[Path, Path]:
    """``(dump, index)`` paths written; ``dump`` may be ``.xml`` or ``.xml.bz2``. ``processes`` > 1
    compresses the streams in that many processes (the same bytes: each stream on its own)."""
    raw = Path(dump).read_bytes()
    data = bz2.decompress(raw) if raw[:3] == b"BZh" else raw
    first = data.find(b"<page>")
    last = data.rfind(b"</page>") + len(b"</page>")
    pages = []
    at = first
    while at < last:
        end = data.index(b"</page>", at) + len(b"</page>")
        pages.append(data[at:end])
        at = end
        while at < last and data[at:at + 6] != b"<page>":
            at += 1
    out = Path(out)
    index = out.with_name(out.name[: -len(".xml.bz2")] + "-index.txt.bz2")
    lines = []
    groups = [pages[k:k + pages_per_stream] for k in range(0, len(pages), pages_per_stream)]
    texts = (b"\n".join(group) + b"\n" for group in groups)
    pool = None
    if processes > 1:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(processes)
    try:
        streams = pool.map(bz2.compress, texts, chunksize=4) if pool else map(bz2.compress, texts)
        with open(out, "wb") as fh:
            fh.write(bz2.compress(data[:first]))
            for group, stream in zip(groups, streams):
                offset = fh.tell()
                for page in group:
                    page_id = _ID.search(page)
                    title = _TITLE.search(page)
                    lines.append(b"%d:%s:%s" % (offset, page_id.group(1) if page_id else b"",
                                                title.group(1) if title else b""))
                fh.write(stream)
            fh.write(bz2.compress(data[last:]))
    finally:
        if pool:
            pool.shutdown()
    index.write_bytes(bz2.compress(b"\n".join(lines) + b"\n"))
    return out, index


def repeat_pages(dump: Path, out: Path, copies: int) -> Path:
    """``out`` (``.xml.bz2``, or plain ``.xml``): ``dump``'s pages ``copies`` times, copy k with
    page ids + k*10^8 and titles suffixed " (k)": a larger dump of real pages for timing."""
    raw = Path(dump).read_bytes()
    data = bz2.decompress(raw) if raw[:3] == b"BZh" else raw
    first, last = data.find(b"<page>"), data.rfind(b"</page>") + len(b"</page>")
    body = data[first:last]
    with (bz2.open(out, "wb") if str(out).endswith(".bz2") else open(out, "wb")) as fh:
        fh.write(data[:first])
        for k in range(copies):
            if k == 0:
                fh.write(body)
                continue
            shift = k * 10 ** 8
            page = re.sub(rb"(<page>\s*<title>)(.*?)(</title>)",
                          lambda m: m.group(1) + m.group(2) + b" (%d)" % k + m.group(3), body, flags=re.S)
            page = re.sub(rb"(</ns>\s*<id>)(\d+)(</id>)",
                          lambda m: m.group(1) + b"%d" % (int(m.group(2)) + shift) + m.group(3), page)
            fh.write(b"\n" + page)
        fh.write(data[last:])
    return Path(out)
