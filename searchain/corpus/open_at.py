"""How to open a cited document at its page: the command or URL *Open source* hands over.

No system call is made here beyond asking which application opens PDFs (``default_pdf_app``,
injectable for tests), so the app and the tests build the same target. The desktop runs it.

A page reaches the viewer three ways, each only where that viewer is known to honour it:
- a page flag of the default PDF viewer on Linux and the BSDs (read from ``xdg-mime``):
  Evince, Atril and Xreader ``-i N``, Okular ``-p N``, Zathura ``-P N``, MuPDF ``file N``,
  qpdfview ``file#N``; SumatraPDF on Windows ``-page N`` when it is on PATH;
- a browser set as the PDF viewer (Firefox, Chromium, Chrome, Edge, Brave) gets
  ``file:///...#page=N``, which their PDF viewers honour (the PDF Open Parameters);
- anything else (macOS Preview cannot be told a page, an unknown viewer, no ``xdg-mime``)
  opens the file at its start, and ``note`` says which page the passage is on.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

# Desktop-file stems (lower case, any prefix such as "org.gnome.") -> (executable, page argv).
# ``{page}`` is 1-based, ``{path}`` the file.
_PAGE_FLAGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "evince": ("evince", ("-i", "{page}", "{path}")),
    "atril": ("atril", ("-i", "{page}", "{path}")),
    "xreader": ("xreader", ("-i", "{page}", "{path}")),
    "okular": ("okular", ("-p", "{page}", "{path}")),
    "zathura": ("zathura", ("-P", "{page}", "{path}")),
    "mupdf": ("mupdf", ("{path}", "{page}")),
    "qpdfview": ("qpdfview", ("--unique", "{path}#{page}")),
}
_BROWSERS = {"firefox": "firefox", "chromium": "chromium", "chromium-browser": "chromium-browser",
             "google-chrome": "google-chrome", "microsoft-edge": "microsoft-edge",
             "brave-browser": "brave-browser"}


@dataclass(frozen=True)
class OpenTarget:
    """What to open: ``command`` (argv) to run when a viewer takes the page itself, else
    ``url`` for the desktop's default handler. ``at_page``: whether the page reaches the
    viewer; ``note``: a sentence for the status bar when it does not."""

    path: Path
    url: str
    command: tuple[str, ...] = ()
    page: int | None = None
    at_page: bool = False
    note: str = ""


def open_target(path: str | Path, page: int | None, *, platform: str | None = None,
                default_app: str | None = None,
                which: Callable[[str], str | None] | None = None) -> OpenTarget:
    """How to open ``path`` at 1-based ``page`` (None: just the file).

    ``default_app``: the desktop file of the default PDF application (``default_pdf_app()``
    when None; pass "" for unknown). ``platform`` and ``which`` stand in for ``sys.platform`` and
    ``shutil.which`` in tests."""
    path = Path(path)
    url = path.resolve().as_uri()
    plain = OpenTarget(path, url)
    if page is None or path.suffix.lower() != ".pdf":
        return plain
    platform = platform or sys.platform
    which = which or shutil.which
    fallback = OpenTarget(path, url, page=page, note=f"Opened {path.name} at its start: the "
                          f"passage is on page {page} (this PDF viewer cannot be told a page).")
    if platform.startswith("win"):
        sumatra = which("SumatraPDF") or which("SumatraPDF.exe")
        if sumatra:
            return OpenTarget(path, url, (sumatra, "-page", str(page), str(path)), page, True)
        return fallback
    if platform == "darwin":  # Preview takes no page; ``open`` passes no fragment
        return fallback
    if default_app is None:
        default_app = default_pdf_app()
    stem = _stem(default_app)
    if stem in _PAGE_FLAGS:
        exe, args = _PAGE_FLAGS[stem]
        found = which(exe)
        if found:
            argv = tuple(a.format(page=page, path=path) for a in args)
            return OpenTarget(path, url, (found, *argv), page, True)
    if stem in _BROWSERS:
        found = which(_BROWSERS[stem])
        if found:
            return OpenTarget(path, f"{url}#page={page}", (found, f"{url}#page={page}"), page, True)
    return fallback


def _stem(desktop_file: str) -> str:
    """``org.gnome.Evince.desktop`` -> ``evince``; ``okularApplication_pdf.desktop`` -> ``okular``;
    ``org.pwmt.zathura-pdf-mupdf.desktop`` -> ``zathura``."""
    name = desktop_file.strip().lower().removesuffix(".desktop")
    name = name.rsplit(".", 1)[-1]
    known = (*_PAGE_FLAGS, *_BROWSERS)
    if name in known:
        return name
    for viewer in known:  # "zathura-pdf-mupdf", "okularapplication_pdf"
        if name.startswith((viewer + "-", viewer + "_", viewer + "application")):
            return viewer
    return name


def default_pdf_app(timeout: float = 2.0) -> str:
    """The desktop file the session opens PDFs with (``xdg-mime``), "" when it cannot tell.
    A short child process: call it off the UI thread."""
    exe = shutil.which("xdg-mime")
    if not exe:
        return ""
    try:
        done = subprocess.run([exe, "query", "default", "application/pdf"], capture_output=True,
                              text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""
