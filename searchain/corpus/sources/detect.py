"""Guess a source's format from its path and first bytes (``--format`` overrides)."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

from ...errors import CorpusError

_SNIFF_BYTES = 1 << 20  # one JSON line of a multi-hop record can be a few hundred KB


def detect_format(path: Path) -> str:
    """One of the format names in ``sources.FORMATS``; CorpusError when it cannot tell."""
    path = Path(path)
    if path.is_dir():
        return "folder"
    name = path.name.lower()
    if name.endswith(".zim") or _starts_with(path, b"ZIM\x04"):  # (sources.zim.ZIM_MAGIC)
        return "zim"
    if name.endswith((".xml", ".xml.bz2", ".bz2")):
        return "mediawiki"
    head = _head(path)
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
    raise CorpusError(
        f"Cannot tell the format of {path} from its name or first line.",
        hint="Pass --format tsv|jsonl|hotpotqa|musique|mediawiki|zim|folder.")


def _starts_with(path: Path, magic: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(magic)) == magic
    except OSError:
        return False


def _head(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        raise CorpusError(f"Cannot read {path}: {exc.strerror or exc}",
                          hint="Check the path and its permissions.") from exc
    if data.startswith(b"BZh"):
        try:
            data = bz2.BZ2Decompressor().decompress(data)  # a prefix: no end-of-stream needed
        except (OSError, EOFError):
            pass
    return data.decode("utf-8", errors="replace")
