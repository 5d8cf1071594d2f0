"""Corpus sources: each turns one input format into ``Passage``s, reporting bad records.

``open_source(path, fmt, corpus, problems)`` returns a ``Source`` for a format name; see
``detect.detect_format`` for guessing the name from the path and its first bytes. A folder is
read by ``folder.FolderSource`` through ``documents/`` (PDF, Word, OpenDocument, HTML, EPUB,
Markdown, text).
"""

from __future__ import annotations

from pathlib import Path

from ...errors import CorpusError
from ..problems import ProblemLog
from .base import Source, SourceOptions

FORMATS = ("tsv", "jsonl", "hotpotqa", "musique", "mediawiki", "zim", "parquet", "folder", "document")


def open_source(path: Path, fmt: str, corpus: str, problems: ProblemLog,
                options: SourceOptions | None = None) -> Source:
    """A reader for ``path`` in format ``fmt`` (one of FORMATS), reading by ``options``."""
    if fmt == "tsv":
        from .tsv import TsvSource as cls
    elif fmt == "jsonl":
        from .jsonl import JsonlSource as cls
    elif fmt in ("hotpotqa", "musique"):
        from .multihop import HotpotQASource, MuSiQueSource
        cls = HotpotQASource if fmt == "hotpotqa" else MuSiQueSource
    elif fmt == "mediawiki":
        from .mediawiki import MediaWikiSource as cls
    elif fmt == "zim":
        from .zim import ZimSource as cls
    elif fmt == "parquet":
        from .parquet import ParquetSource as cls
    elif fmt in ("folder", "document"):  # a document is a folder of one file
        from .folder import FolderSource as cls
    else:
        raise CorpusError(f"Unknown corpus format {fmt!r}.",
                          hint=f"Use one of: {', '.join(FORMATS)}.")
    return cls(Path(path), corpus, problems, options)
