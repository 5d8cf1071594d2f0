"""The models folder: list local GGUFs, download catalogue models, remove them.

Downloads use huggingface_hub's own metadata and HTTP code (``get_hf_file_metadata``,
``http_get``) and append to ``models/.partial/<file>.<etag>.part``, so an interrupted or cancelled
pull resumes where it stopped (``hf_hub_download`` itself no longer resumes across runs). Progress
arrives as ``Progress("download", bytes_done, bytes_total)`` events; ``cancel`` stops between
chunks and keeps the partial file for the next ``pull``.

Trust: every catalogue entry pins a commit, a size and a SHA-256 (``catalogue.py``). Before any
byte is fetched the Hub's answer is checked against the pin (a different size, or an LFS ETag that
is a different SHA-256, means the file changed upstream: refused). After the download, the whole
file (resumed or not) is hashed and compared with the pin; a mismatch deletes it. A file already in
the models folder counts as complete only when its size and SHA-256 match the pin (checked without
the network). An entry without a pinned hash is downloaded only when the caller's ``confirm``
callback says yes; it is then checked against the Hub's ETag when that is a SHA-256 (a mirror's or
proxy's other ETag checks nothing, and the confirmation message says so). Only a verified GGUF is
moved into place. ``HF_ENDPOINT`` (or ``endpoint=``) points at a mirror.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ... import units
from ...config import AppPaths
from ...errors import Cancelled, ModelError, is_disk_full
from ...events import CancelToken, EventCallback, Progress, check, emit
from ...files import file_sha256
from .catalogue import CATALOGUE, CatalogueEntry, catalogue_entry
from .gguf_info import ModelFacts, read_model_facts

SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
# huggingface_hub's http_get takes ``tqdm_class`` (our progress and cancel) from 1.1 on; older
# releases fail every pull with a TypeError. pyproject.toml's floor is this version.
HF_HUB_MIN_VERSION = "1.1"
PARTIAL_DIR = ".partial"  # unfinished downloads, kept across runs so that a pull resumes
# Asked before downloading a file the catalogue has no SHA-256 for: True goes ahead.
ConfirmUnverified = Callable[[str], bool]


@dataclass(frozen=True)
class LocalModel:
    path: Path
    facts: ModelFacts | None  # None when the file is not a readable GGUF
    error: str | None = None


class ModelManager:
    def __init__(self, paths: AppPaths, *, endpoint: str | None = None):
        self.models_dir = paths.models_dir
        # Read HF_ENDPOINT now, not at huggingface_hub's import, so a mirror set later is honoured.
        self.endpoint = endpoint or os.environ.get("HF_ENDPOINT") or None

    def catalogue(self) -> tuple[CatalogueEntry, ...]:
        return CATALOGUE

    def find(self, name: str) -> CatalogueEntry:
        entry = catalogue_entry(name, CATALOGUE)
        if entry is not None:
            return entry
        raise ModelError(f"{name!r} is not in the model catalogue.",
                         hint="Known names: " + ", ".join(e.name for e in CATALOGUE) + ".")

    def list_local(self) -> list[LocalModel]:
        """Every ``*.gguf`` under the models folder (hidden folders skipped), with its facts or
        the reason it cannot be read: a broken file is listed, not fatal."""
        found = []
        if not self.models_dir.exists():
            return found
        for path in sorted(self.models_dir.rglob("*.gguf")):
            if any(part.startswith(".") for part in path.relative_to(self.models_dir).parts):
                continue
            try:
                found.append(LocalModel(path, read_model_facts(path)))
            except ModelError as exc:
                found.append(LocalModel(path, None, exc.message))
        return found

    def pull(self, name: str, *, on_event: EventCallback | None = None,
             cancel: CancelToken | None = None,
             confirm: ConfirmUnverified | None = None) -> Path:
        """Download catalogue model ``name`` (resuming a partial download), verified against its
        pin; return its path. ``confirm(message)`` is asked before an unpinned download."""
        entry = self.find(name)
        check(cancel)
        final = self.models_dir / entry.filename
        if entry.sha256 and self._is_complete(final, entry, on_event, cancel):
            return final  # already here and verified: no network needed
        url, size, etag = self._metadata(entry)
        expected = self._expected_sha256(entry, size, etag, confirm)
        part = self._partial_path(entry.filename, etag)
        self._check_space(part, size, entry.filename)
        self._fetch(url, part, size, entry.filename, on_event, cancel)
        self._verify(part, entry, size, expected, on_event, cancel)
        read_model_facts(part)  # a downloaded non-GGUF (an HTML error page...) fails here
        os.replace(part, final)
        return final

    def remove(self, name_or_file: str) -> Path:
        """Delete a model by catalogue name or by file name in the models folder (and any
        partial download of it)."""
        try:
            filename = self.find(name_or_file).filename
        except ModelError:
            filename = name_or_file
        root = self.models_dir.resolve()
        path = (root / filename).resolve()
        if root not in path.parents:
            raise ModelError(f"{name_or_file!r} is not inside the models folder {self.models_dir}.",
                             hint="Give a catalogue name or a file name from "
                                  "`searchain models list`.")
        partials = list((root / PARTIAL_DIR).glob(f"{glob.escape(path.name)}.*.part"))
        if not path.is_file() and not partials:
            raise ModelError(f"No model {name_or_file!r} in {self.models_dir}.",
                             hint="See `searchain models list` for what is there.")
        for p in [path, *partials]:
            p.unlink(missing_ok=True)
        return path

    # -- internals --------------------------------------------------------------------------

    def _is_complete(self, final: Path, entry: CatalogueEntry, on_event, cancel) -> bool:
        """A file already in place counts only when size and SHA-256 match the pin; one that
        does not is left alone until a verified download replaces it."""
        if not final.is_file() or final.stat().st_size != entry.size_bytes:
            return False
        return file_sha256(final, on_event=on_event, cancel=cancel) == entry.sha256

    def _expected_sha256(self, entry: CatalogueEntry, size: int, etag: str,
                         confirm: ConfirmUnverified | None) -> str | None:
        """The hash the download must have: the pin. Refuses a file that changed upstream;
        without a pin, asks ``confirm`` and falls back to the Hub's ETag when it is a SHA-256."""
        where = f"{entry.repo}/{entry.filename} at {entry.revision[:12]}"
        etag_sha = etag.lower() if SHA256_RE.match(etag.lower()) else None
        if entry.size_bytes and size != entry.size_bytes:
            raise ModelError(
                f"The Hub serves {where} with {size:,} bytes, but the catalogue pins "
                f"{entry.size_bytes:,}: the file changed upstream (or the mirror serves another); "
                "nothing was downloaded.",
                hint="Update SearChain for a catalogue checked against the new file, or download "
                     f"a GGUF you trust into {self.models_dir} by hand.")
        if entry.sha256:
            if etag_sha and etag_sha != entry.sha256:
                raise ModelError(
                    f"The Hub's SHA-256 for {where} is {etag_sha}, but the catalogue pins "
                    f"{entry.sha256}: the file changed upstream; nothing was downloaded.",
                    hint="Update SearChain for a catalogue checked against the new file, or "
                         f"download a GGUF you trust into {self.models_dir} by hand.")
            return entry.sha256
        check_note = (f"it will be checked against the Hub's own SHA-256 ({etag_sha[:12]}…) only"
                      if etag_sha else
                      f"the server's ETag ({etag[:20]}) is not a SHA-256, so nothing can check it")
        message = (f"The catalogue has no pinned SHA-256 for {entry.filename} "
                   f"({units.size(size)}): {check_note}. Download it anyway?")
        if confirm is None or not confirm(message):
            raise ModelError(message.replace(" Download it anyway?", " Not downloaded."),
                             hint="Confirm the download (`searchain models pull NAME "
                                  "--allow-unverified`, or Yes in the app), or download a GGUF "
                                  f"you trust into {self.models_dir} by hand.")
        return etag_sha

    def _verify(self, part: Path, entry: CatalogueEntry, size: int, expected: str | None,
                on_event, cancel) -> None:
        """The whole file, resumed or not: its size, then its SHA-256. A bad file is deleted."""
        got = part.stat().st_size
        if got != size:
            part.unlink(missing_ok=True)
            raise ModelError(f"{entry.filename} has {got:,} bytes after the download, expected "
                             f"{size:,}; the download was deleted.",
                             hint="Run the pull again; if it keeps failing, the mirror serves a "
                                  "different file than the catalogue expects.")
        if expected is None:
            return  # the user confirmed an unverifiable download
        actual = file_sha256(part, on_event=on_event, cancel=cancel)
        if actual != expected:
            part.unlink(missing_ok=True)
            raise ModelError(
                f"{entry.filename} failed its checksum (expected SHA-256 {expected}, got "
                f"{actual}); the download was deleted.",
                hint="Run the pull again; if it keeps failing, the mirror serves a different "
                     "file than the catalogue expects.",
            )

    def _partial_path(self, filename: str, etag: str) -> Path:
        # Keyed by ETag: a partial of an older revision of the file is never resumed.
        tag = re.sub(r"[^0-9A-Za-z]", "", etag)[:16] or "noetag"
        folder = self.models_dir / PARTIAL_DIR
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{Path(filename).name}.{tag}.part"

    def _check_space(self, part: Path, size: int, label: str) -> None:
        """Refuse up front when the bytes still to fetch cannot fit: finding out after an hour
        of downloading a 5 GB file is worse than being told at once."""
        have = part.stat().st_size if part.is_file() else 0
        needed = size - have if have <= size else size
        free = shutil.disk_usage(part.parent).free
        if needed > free:
            raise ModelError(f"Not enough disk space for {label}: the download "
                             f"needs {units.size(needed)} more, {self.models_dir} has {units.size(free)} free.",
                             hint="Free some space, or keep SearChain's data on a larger disk "
                                  "(--home DIR or $SEARCHAIN_HOME).")

    def _metadata(self, entry: CatalogueEntry) -> tuple[str, int, str]:
        """(download URL after redirects, size, ETag) from the Hub's HEAD answer."""
        import huggingface_hub

        url = huggingface_hub.hf_hub_url(entry.repo, entry.filename, revision=entry.revision,
                                         endpoint=self.endpoint)
        try:
            meta = huggingface_hub.get_hf_file_metadata(url, endpoint=self.endpoint)
        except Exception as exc:
            raise self._download_error(entry, exc) from exc
        if meta.size is None or not meta.etag:
            raise ModelError(f"The Hub sent no size/ETag for {entry.repo}/{entry.filename}.",
                             hint="Try again later, or download the file by hand into "
                                  f"{self.models_dir}.")
        return meta.location, int(meta.size), meta.etag

    def _fetch(self, url: str, part: Path, size: int, label: str, on_event, cancel) -> None:
        """Append the missing bytes to ``part`` with huggingface_hub's ``http_get``."""
        try:
            download_resuming(url, part, size, label, on_event=on_event, cancel=cancel)
        except (Cancelled, ModelError):
            raise  # the partial file stays for the next pull to resume
        except Exception as exc:
            raise _fetch_error(label, part.stat().st_size if part.is_file() else 0, size,
                               exc) from exc

    def _download_error(self, entry: CatalogueEntry, exc: Exception) -> ModelError:
        from huggingface_hub import errors as hf_errors

        if isinstance(exc, hf_errors.OfflineModeIsEnabled):
            return ModelError(
                f"Cannot download {entry.name}: no network access to the Hugging Face Hub "
                f"(offline mode is on).",
                hint="Connect to the internet and unset HF_HUB_OFFLINE, or copy a .gguf file "
                     f"into {self.models_dir} by hand.",
            )
        if isinstance(exc, hf_errors.HfHubHTTPError) and exc.response is not None:
            return ModelError(
                f"The Hub refused {entry.repo}/{entry.filename} "
                f"(HTTP {exc.response.status_code}).",
                hint="The file may have moved or need a login; check the repository on the Hub.")
        return ModelError(
            f"Cannot download {entry.name}: no network access to the Hugging Face Hub "
            f"({type(exc).__name__}: {exc}).",
            hint="Check the internet connection (or HF_ENDPOINT), or copy a .gguf file into "
                 f"{self.models_dir} by hand.",
        )


def download_resuming(url: str, part: Path, size: int, label: str, *,
                      on_event: EventCallback | None = None, cancel: CancelToken | None = None,
                      headers: dict[str, str] | None = None) -> None:
    """Append the bytes of ``url`` that ``part`` lacks (an HTTP Range request from its length;
    started over when ``part`` is longer than ``size``), with huggingface_hub's ``http_get``.
    Reports ``Progress("download", done, size, label)`` and stops at ``cancel`` between chunks,
    leaving ``part`` to resume. Used for models and for corpus downloads (``library.wikipedia``);
    raises ``Cancelled``, or what the HTTP layer raised."""
    from huggingface_hub.file_download import http_get

    check_hub_api(http_get)
    with part.open("ab") as fh:
        done = fh.tell()
        if done > size:  # not a prefix of this file: start over
            fh.truncate(0)
            done = 0
        http_get(url, fh, resume_size=done, expected_size=size, displayed_filename=label,
                 tqdm_class=_progress_class(on_event, cancel, label), headers=headers)


def check_hub_api(http_get) -> None:
    """Refuse, with the fix, a huggingface_hub whose ``http_get`` predates ``tqdm_class``."""
    import inspect

    params = inspect.signature(http_get).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if "tqdm_class" not in params and not takes_any:  # a wrapper's **kwargs passes it through
        import huggingface_hub

        raise ModelError(
            f"huggingface_hub {huggingface_hub.__version__} is too old to download models "
            f"(SearChain needs {HF_HUB_MIN_VERSION} or newer).",
            hint=f"Upgrade it: pip install 'huggingface_hub>={HF_HUB_MIN_VERSION}'.")


def _fetch_error(label: str, done: int, size: int, exc: Exception) -> ModelError:
    if is_disk_full(exc):
        return ModelError(f"The disk filled up while downloading {label} ({done:,} of {size:,} "
                          "bytes are kept).",
                          hint="Free some space, then pull again: it resumes where it stopped.")
    return ModelError(f"Downloading {label} failed after {done:,} of {size:,} bytes: {exc}",
                      hint="Check the network and free disk space, then pull again: it resumes "
                           "where it stopped.")


def _progress_class(on_event: EventCallback | None, cancel: CancelToken | None, label: str):
    """A tqdm class for huggingface_hub that reports ``Progress`` and honours ``cancel``."""
    from tqdm.std import tqdm

    class _Progress(tqdm):
        def __init__(self, *args, **kwargs):
            self._done = int(kwargs.get("initial") or 0)
            self._total = kwargs.get("total")
            kwargs.pop("name", None)
            super().__init__(*args, **{**kwargs, "disable": True})

        def update(self, n=1):
            self._done += int(n or 0)
            emit(on_event, Progress("download", self._done, self._total, label))
            check(cancel)  # raising here leaves the partial file for the next pull to resume

    return _Progress
