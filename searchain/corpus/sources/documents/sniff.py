"""What a file's first bytes say it is, for "not what its suffix says" problems.

Each reader checks its own signature first (``%PDF-``, a ZIP archive holding the right member,
markup for HTML); when it does not match, the reason names what the file looks like instead, so a
renamed or mislabelled file is told apart from a damaged one.
"""

from __future__ import annotations

import io
import zipfile

from .model import Unreadable

_SIGNATURES = (
    (b"%PDF-", "a PDF"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office file (.doc, .xls)"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"{\\rtf", "an RTF document"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
)


def looks_like(data: bytes) -> str:
    """A short phrase for what ``data`` appears to be ("a ZIP archive", "text", ...)."""
    head = data[:1024]
    for magic, name in _SIGNATURES:
        if head.startswith(magic):
            return name
    if b"%PDF-" in head:
        return "a PDF"
    if not head.strip():
        return "empty"
    if b"\x00" in head:
        return "binary data"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith((b"<!doctype html", b"<html")):
        return "an HTML page"
    if text.startswith(b"<"):
        return "XML or HTML"
    return "text"


def mismatch(what: str, data: bytes) -> Unreadable:
    """The problem of a file that should be ``what`` ("a PDF") but is something else."""
    actual = looks_like(data)
    if actual == "empty":
        return Unreadable("empty file")
    return Unreadable(f"not {what}: the file is {actual} (is the suffix wrong?)")


def check_package(data: bytes, member: str, what: str) -> zipfile.ZipFile:
    """``data`` as an open ZIP archive that holds ``member``, else the matching problem:
    not a ZIP at all (a mismatch), a damaged or truncated one, or one without ``member``."""
    if not data.startswith(b"PK\x03\x04"):
        raise mismatch(what, data)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise Unreadable(f"damaged or truncated {what.removeprefix('a ').removeprefix('an ')}: "
                         f"{exc}") from exc
    if member not in archive.NameToInfo:
        archive.close()
        raise Unreadable(f"not {what}: a ZIP archive without {member} (is the suffix wrong?)")
    return archive
