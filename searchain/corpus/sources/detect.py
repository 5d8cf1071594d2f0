"""Guess a source's format from its path and first bytes (``--format`` overrides)."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

from ...errors import CorpusError

_SNIFF_BYTES = 1 << 20  # one JSON line of a multi-hop record can be a few hundred KB
# A single document (read like a folder of one file); .txt is sniffed first (it may be a TSV).
_DOCUMENT_SUFFIXES = (".pdf", ".docx", ".odt", ".epub", ".html", ".htm", ".xhtml", ".md", ".markdown")
# Document formats that are binary files (PDF, zip containers): never refused as binary data.
_BINARY_DOCUMENT_SUFFIXES = (".pdf", ".docx", ".odt", ".epub")


# What a text format is called in an error ("this looks like a binary file, not TSV text").
FORMAT_TEXT = {"tsv": "TSV", "jsonl": "JSON Lines", "hotpotqa": "HotpotQA JSON Lines",
               "musique": "MuSiQue JSON Lines", "mediawiki": "MediaWiki XML"}
# Files people mistake for corpora, by their first bytes: named, the error says what it is.
_MAGIC = ((b"GGUF", "a GGUF model file"), (b"PK\x03\x04", "a zip archive"),
          (b"\x1f\x8b", "a gzip archive"), (b"%PDF", "a PDF document"),
          (b"SQLite format 3\0", "an SQLite database"), (b"\x7fELF", "a program"),
          (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
          (b"\xfd7zXZ", "an xz archive"), (b"7z\xbc\xaf", "a 7-Zip archive"))
_RATIO_BYTES = 64 * 1024  # enough to tell, cheap to count character by character
_BINARY_SHARE = 0.1  # text has a stray bad byte or two; binary data is a tenth or more of them


def detect_format(path: Path) -> str:
    """One of the format names in ``sources.FORMATS``; CorpusError when it cannot tell, or when
    the file is binary (named after the format its name suggests, never guessed from junk)."""
    path = Path(path)
    name = path.name.lower()
    if path.is_dir():
        return "parquet" if _parquet_folder(path) else "folder"
    if name.endswith(".parquet") or _starts_with(path, b"PAR1"):  # (sources.parquet.PARQUET_MAGIC)
        return "parquet"  # binary by design, like ZIM
    if name.endswith(".zim") or _starts_with(path, b"ZIM\x04"):  # (sources.zim.ZIM_MAGIC)
        return "zim"  # binary by design: checked before the text checks below
    if name.endswith(_BINARY_DOCUMENT_SUFFIXES):
        # binary by design too; the document reader names a file that is not what its name says
        return "document"
    data = _head_bytes(path)
    by_name = ("mediawiki" if name.endswith((".xml", ".xml.bz2", ".bz2")) else
               "tsv" if name.endswith(".tsv") else "jsonl" if name.endswith(".jsonl") else
               "document" if name.endswith(_DOCUMENT_SUFFIXES) else None)
    refuse_binary(path, data, by_name)
    if by_name in ("mediawiki", "document"):
        return by_name
    head = data.decode("utf-8", errors="replace")
    if not head.strip():
        raise CorpusError(f"{path} is empty.", hint="Pass a file with passages in it.")
    if head.lstrip().startswith("<"):
        return "mediawiki"
    first = head.lstrip("\ufeff").splitlines()[0]
    if name.endswith(".tsv") or first.count("\t") == 2:
        return "tsv"
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    if isinstance(record, dict):
        if isinstance(record.get("paragraphs"), list):
            return "musique"
        if isinstance(record.get("contexts"), list):
            return "hotpotqa"
        if "text" in record or "contents" in record:
            return "jsonl"
    if name.endswith(".txt"):
        return "document"  # plain prose, not records
    if by_name == "jsonl":  # its reader names each line it cannot use, and keeps the others
        return "jsonl"
    raise CorpusError(
        f"Cannot tell the format of {path} from its name or first line.",
        hint="Pass --format tsv|jsonl|hotpotqa|musique|mediawiki|zim|parquet|folder|document.")


def _parquet_folder(path: Path) -> bool:
    """A folder of parquet shards (a Hub dataset's snapshot folder): parquet files and nothing
    a folder corpus would read (documents) beside them."""
    found = False
    try:
        for p in path.rglob("*"):
            if not p.is_file() or any(part.startswith(".") for part in p.relative_to(path).parts):
                continue
            if p.suffix.lower() == ".parquet":
                found = True
            elif p.suffix.lower() in _DOCUMENT_SUFFIXES + (".txt",):
                return False
    except OSError:
        return False
    return found


def _starts_with(path: Path, magic: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(magic)) == magic
    except OSError:
        return False


def check_text_source(path: Path, fmt: str) -> None:
    """``CorpusError`` when ``path``, given as format ``fmt`` (``--format``), is a binary file:
    read as text, it would become NUL-laden junk passages."""
    if fmt in FORMAT_TEXT and Path(path).is_file():
        refuse_binary(Path(path), _head_bytes(Path(path)), fmt)


def refuse_binary(path: Path, data: bytes, fmt: str | None) -> None:
    """``CorpusError`` naming the format problem when ``data`` (a file's first bytes) is not text."""
    what = binary_kind(data)
    if what is None:
        return
    wanted = (f"{FORMAT_TEXT[fmt]} text" if fmt in FORMAT_TEXT else
              "a text document" if fmt == "document" else "a text corpus")
    raise CorpusError(f"{path} looks like a binary file, not {wanted} ({what}); nothing was added.",
                      hint="Pass the corpus file you meant: UTF-8 text (TSV, JSON Lines, MediaWiki "
                      "XML, optionally .bz2), a Kiwix .zim file, a document (PDF, Word, "
                      "OpenDocument, EPUB, HTML, Markdown, text) or a folder of documents.")


def binary_kind(data: bytes) -> str | None:
    """Why ``data`` is not text (it starts like a known binary format, holds NUL bytes, or is
    mostly not UTF-8), or None for text."""
    for magic, what in _MAGIC:
        if data.startswith(magic):
            return f"it starts like {what}"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "it is UTF-16 text: save it as UTF-8"
    if b"\0" in data:
        return "it holds NUL bytes"
    text = data[:_RATIO_BYTES].decode("utf-8", errors="replace")
    bad = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in "\t\n\r\f\v"))
    if text and bad / len(text) >= _BINARY_SHARE:
        return f"{bad / len(text):.0%} of its first characters are not text"
    return None


def _head_bytes(path: Path) -> bytes:
    """The first MB of ``path``, decompressed when it is bzip2."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        raise CorpusError(f"Cannot read {path}: {exc.strerror or exc}",
                          hint="Check the path and its permissions.") from exc
    if data.startswith(b"BZh"):
        try:
            # A prefix decompresses without the stream's end; capped, as bzip2 expands a lot.
            return bz2.BZ2Decompressor().decompress(data, max_length=_SNIFF_BYTES)
        except (OSError, EOFError):
            pass
    return data
