"""Fetch a release's files into a job folder: resumable, and every file checked against its
published checksum before anything reads it.

``<job>/files/<name>.part`` grows by HTTP Range requests (``llm.models.manager.download_resuming``,
the models' downloader), so a kill or a cancel loses nothing; a finished file is hashed, and only
a match is renamed to ``<job>/files/<name>`` and recorded in ``<job>/verified.json``. A mismatch
moves the file aside to ``<job>/rejected/`` (kept for inspection, never ingested) and stops.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ...errors import Cancelled, CorpusError, ModelError, is_disk_full
from ...events import CancelToken, EventCallback, check
from ...files import file_digest
from .remote import Release, RemoteFile

VERIFIED = "verified.json"


def files_dir(job: Path) -> Path:
    return Path(job) / "files"


def remaining_bytes(job: Path, release: Release) -> int:
    """Bytes still to download (partial files count what they hold)."""
    verified = _verified(job)
    left = 0
    for f in release.files:
        if verified.get(f.name) == f.checksum and (files_dir(job) / f.name).is_file():
            continue
        part = _part(job, f)
        have = part.stat().st_size if part.is_file() else 0
        left += f.size - have if have <= f.size else f.size
    return left


def fetch_release(job: Path, release: Release, *, on_event: EventCallback | None = None,
                  cancel: CancelToken | None = None) -> list[Path]:
    """Download and verify every file of ``release`` not yet verified; their paths."""
    out = []
    for k, remote in enumerate(release.files):
        check(cancel)
        final = files_dir(job) / remote.name
        if final.is_file() and final.stat().st_size == remote.size:
            if _verified(job).get(remote.name) == remote.checksum or file_digest(
                    final, remote.algorithm, on_event=on_event, cancel=cancel) == remote.checksum:
                _record(job, remote)  # (a kill between the rename and the record: hashed again)
                out.append(final)
                continue
        part = _part(job, remote)
        part.parent.mkdir(parents=True, exist_ok=True)
        label = f"{remote.name} ({k + 1}/{len(release.files)})"
        _download(remote, part, label, on_event, cancel)
        _verify(job, remote, part, on_event, cancel)
        os.replace(part, final)
        _record(job, remote)
        out.append(final)
    return out


def _download(remote: RemoteFile, part: Path, label: str, on_event, cancel) -> None:
    from ...llm.models.manager import download_resuming
    from .remote import user_agent

    try:
        download_resuming(remote.url, part, remote.size, label, on_event=on_event, cancel=cancel,
                          headers=user_agent())
    except (Cancelled, KeyboardInterrupt):
        raise  # the partial file stays; the next run resumes it
    except ModelError as exc:  # an unusable huggingface_hub
        raise CorpusError(exc.message, hint=exc.hint) from exc
    except Exception as exc:  # noqa: BLE001 - network errors come in many types
        have = part.stat().st_size if part.is_file() else 0
        if is_disk_full(exc):
            raise CorpusError(f"The disk filled up while downloading {remote.name} ({have:,} of "
                              f"{remote.size:,} bytes are kept).",
                              hint="Free some space, then run the same command again: it resumes "
                                   "where it stopped.") from exc
        raise CorpusError(f"Downloading {remote.name} failed after {have:,} of {remote.size:,} "
                          f"bytes: {type(exc).__name__}: {exc}",
                          hint="Check the network, then run the same command again: it resumes "
                               "where it stopped.") from exc


def _verify(job: Path, remote: RemoteFile, part: Path, on_event, cancel) -> None:
    got_size = part.stat().st_size
    actual = file_digest(part, remote.algorithm, on_event=on_event, cancel=cancel) \
        if got_size == remote.size else None
    if actual == remote.checksum:
        return
    aside = Path(job) / "rejected" / f"{Path(remote.name).name}.{time.strftime('%Y%m%dT%H%M%S')}"
    aside.parent.mkdir(parents=True, exist_ok=True)
    os.replace(part, aside)
    found = (f"{remote.algorithm.upper()} {actual}" if actual is not None
             else f"{got_size:,} bytes, expected {remote.size:,}")
    raise CorpusError(
        f"{remote.name} failed its published checksum (expected {remote.algorithm.upper()} "
        f"{remote.checksum}, got {found}); it was kept aside at {aside} and nothing was ingested.",
        hint="Run the same command again to download it afresh; if it fails again, the server or "
             "a proxy serves a different file than the one published.")


def _part(job: Path, remote: RemoteFile) -> Path:
    final = files_dir(job) / remote.name
    return final.with_name(final.name + ".part")


def _verified(job: Path) -> dict:
    try:
        data = json.loads((Path(job) / VERIFIED).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _record(job: Path, remote: RemoteFile) -> None:
    from ...files import atomic_write_text

    data = _verified(job)
    data[remote.name] = remote.checksum
    atomic_write_text(Path(job) / VERIFIED, json.dumps(data, indent=2))
