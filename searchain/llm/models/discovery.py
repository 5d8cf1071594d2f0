"""The GGUF models already on this computer: the app's own folder, the other local-LLM apps'
stores (LM Studio, Ollama, GPT4All, Jan, the Hugging Face cache, llama.cpp's cache; ``places``
says where each keeps them) and the folders named in ``llm.model_folders``.

``discover_models(...)`` returns one ``FoundModel`` per file, used where it lies: nothing is
copied, moved or written. For each it reads the GGUF header only (``gguf_info``: a few
milliseconds, whatever the file's size) for the quantisation, trained context and chat-template
family, and says whether it fits this machine by the rules the catalogue's recommendation uses.

- A file reached twice (a symlink, a Hugging Face snapshot pointing at a blob, two Ollama tags of
  one blob, a user folder inside LM Studio's) is listed once, under the first place that found
  it; the other names become ``aliases``. Order: app, lmstudio, ollama, gpt4all, jan, hf-cache,
  llama.cpp, folder.
- Ollama keeps weights as ``blobs/sha256-<hex>``; the model's name and tag come from its
  manifest (``manifests/<registry>/<namespace>/<model>/<tag>``, the layer whose media type is
  ``application/vnd.ollama.image.model``), so a row reads ``llama3.2:3b``, not a hash.
- A split model (``-00001-of-00003.gguf``) is one row, sized and its weights counted over all
  its parts (a part missing is the row's error); vision
  projectors (``mmproj-*``) and GPT4All's unfinished ``incomplete-*`` downloads are left out.
- A damaged, truncated or foreign file is listed with the reason in ``error``; one bad file or
  unreadable folder never stops the rest.

``best_found(models, exclude)`` picks the one to offer a newcomer who has only the tiny starter.

Cost: a header with a real vocabulary (150,000 tokens and merges) takes a few milliseconds
(``gguf_header`` leaps over the vocabulary), and the facts of each file are kept, for the life of
the process and in the facts file, keyed by the file's identity, size and modification time:
a second look is a walk and a ``stat`` per file.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from ...errors import ModelError
from ...events import CancelToken, check
from . import places
from .catalogue import DEFAULT_N_CTX
from .facts_cache import FactsCache
from .gguf_info import ModelFacts, read_model_facts
from .memory import estimate_ram_bytes, estimate_vram_bytes
from .recommend import MachineFacts, where_it_runs

SOURCES = ("app", "lmstudio", "ollama", "gpt4all", "jan", "hf-cache", "llama.cpp", "folder")
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_REGISTRY = "registry.ollama.ai"
MAX_DEPTH = 6  # below a root; LM Studio's publisher/repo/file is 3
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})$")
_GENERIC_STEMS = {"model", "ggml-model", "weights"}
# "off": look only in the app's folder and llm.model_folders, not in other apps' places (for a
# user who wants that, and for the test suite, whose real home is not its business).
OTHER_APPS_ENV = "SEARCHAIN_DISCOVER_OTHER_APPS"


@dataclass(frozen=True)
class Root:
    """A place to look: ``layout`` is ``files`` (GGUFs anywhere below, ``depth`` levels deep),
    ``ollama`` (manifests + blobs) or ``hf`` (``models--*/snapshots/*``)."""

    source: str
    path: Path
    layout: str = "files"
    depth: int = MAX_DEPTH


@dataclass(frozen=True)
class FoundModel:
    name: str  # what the source calls it: file name, Ollama "model:tag", Jan's model id
    path: Path  # where it was found; what llm.model_path is set to (used in place)
    source: str  # one of SOURCES
    size_bytes: int  # all parts of a split model
    facts: ModelFacts | None = None  # None: not a readable GGUF (see error)
    error: str | None = None
    repo: str = ""  # LM Studio publisher/repo, Hugging Face repo id, Ollama manifest
    aliases: tuple[str, ...] = ()  # other names of the same file (another tag, a link)
    resolved: Path | None = None  # the file behind a link (a HF snapshot's blob), if any
    fits: str | None = None  # "gpu" | "cpu" | "" (too big) | None (machine not probed)
    ram_bytes: int | None = None  # need on the CPU at the app's context
    vram_bytes: int | None = None  # need fully offloaded

    @property
    def usable(self) -> bool:
        return self.facts is not None

    def as_dict(self) -> dict:
        """The JSON row of ``searchain models list --all --json``."""
        f = self.facts
        return {
            "name": self.name, "path": str(self.path), "source": self.source,
            "size_bytes": self.size_bytes, "repo": self.repo, "aliases": list(self.aliases),
            "resolved_path": str(self.resolved) if self.resolved else None,
            "architecture": f.architecture if f else None,
            "parameters": f.parameters if f else None,
            "quantisation": f.quantisation if f else None,
            "context_length": f.context_length if f else None,
            "template_family": f.template_family if f else None,
            "fits": self.fits, "ram_bytes": self.ram_bytes, "vram_bytes": self.vram_bytes,
            "error": self.error,
        }


@dataclass
class _Candidate:
    name: str
    path: Path
    source: str
    repo: str = ""
    error: str | None = None
    parts: tuple[Path, ...] = ()  # the other files of a split model


def search_roots(models_dir: Path | None = None, folders: Sequence[str] = (),
                 env: Mapping[str, str] | None = None, other_apps: bool = True) -> list[Root]:
    """Every place discovery looks, in precedence order, existing or not. ``other_apps=False``
    (or ``SEARCHAIN_DISCOVER_OTHER_APPS=off``) keeps to the app's folder and ``folders``."""
    d = places.UserDirs.from_env(env)
    roots = [Root("app", Path(models_dir))] if models_dir else []
    if other_apps and d.env.get(OTHER_APPS_ENV, "").strip().lower() not in ("off", "0", "false", "no"):
        roots += [Root("lmstudio", p) for p in places.lmstudio_dirs(d)]
        roots += [Root("ollama", p, "ollama") for p in places.ollama_dirs(d)]
        roots += [Root("gpt4all", p, depth=1) for p in places.gpt4all_dirs(d)]
        roots += [Root("jan", p) for p in places.jan_dirs(d)]
        roots += [Root("hf-cache", p, "hf") for p in places.hf_hub_dirs(d)]
        roots += [Root("llama.cpp", p) for p in places.llama_cpp_dirs(d)]
    roots += [Root("folder", Path(f).expanduser()) for f in folders if str(f).strip()]
    seen, unique = set(), []
    for root in roots:
        key = os.path.normcase(os.path.abspath(root.path))
        if key not in seen:
            seen.add(key)
            unique.append(root)
    return unique


def discover_models(models_dir: Path | None = None, folders: Sequence[str] = (), *,
                    env: Mapping[str, str] | None = None, machine: MachineFacts | None = None,
                    n_ctx: int = DEFAULT_N_CTX, cancel: CancelToken | None = None,
                    other_apps: bool = True, facts: FactsCache | None = None) -> list[FoundModel]:
    """The GGUF models in the app's ``models_dir``, the other apps' places and ``folders``.

    ``env`` replaces ``os.environ`` (HOME, XDG_*, the apps' variables); ``machine`` (from
    ``recommend.machine_facts()``) fills in ``fits``; ``n_ctx`` is the context the needs are
    computed at; ``cancel`` stops between files (``Cancelled``); ``other_apps=False`` lists the
    app's folder and ``folders`` only (what the model dialog shows at once, before the rest);
    ``facts`` remembers headers already read (``FactsCache.in_cache_dir``: across runs too)."""
    facts = facts if facts is not None else FactsCache()
    found: list[FoundModel] = []
    by_file: dict[tuple[int, int], int] = {}
    for root in search_roots(models_dir, folders, env, other_apps):
        if not root.path.is_dir():
            continue
        for cand in _candidates(root):
            check(cancel)
            key = _file_key(cand.path)
            if key is not None and key in by_file:
                first = found[by_file[key]]
                if cand.name != first.name and cand.name not in first.aliases:
                    found[by_file[key]] = replace(first, aliases=first.aliases + (cand.name,))
                continue
            model = _describe(cand, machine, n_ctx, facts)
            if key is not None:
                by_file[key] = len(found)
            found.append(model)
    facts.save()
    return found


QUICK_PARAMETERS = 9e9  # past this a model answers slowly on most machines' CPUs


def best_found(models: Sequence[FoundModel], exclude: Sequence[Path] = ()) -> FoundModel | None:
    """The found model to offer in place of the starter: readable, a chat model (it has a chat
    template), fitting this machine (or the machine unknown), not one of ``exclude`` (the
    starter itself). Preferred: fitting the GPU, then up to ``QUICK_PARAMETERS`` weights, then
    the most weights. None when nothing qualifies."""
    skip = {_file_key(Path(p)) for p in exclude} - {None}

    def fit(m: FoundModel) -> bool:
        return (m.usable and m.facts.template_family != "none" and m.fits != ""
                and _file_key(m.path) not in skip)

    chosen = [m for m in models if fit(m)]
    if not chosen:
        return None
    return max(chosen, key=lambda m: (m.fits == "gpu", m.facts.parameters <= QUICK_PARAMETERS,
                                      m.facts.parameters))


# -- what is in each kind of place ------------------------------------------------------------

def _candidates(root: Root) -> Iterator[_Candidate]:
    if root.layout == "ollama":
        yield from _ollama(root.path)
    elif root.layout == "hf":
        yield from _hf_cache(root.path)
    else:
        yield from _gguf_files(root, root.path)


def _gguf_files(root: Root, folder: Path, repo: str | None = None) -> Iterator[_Candidate]:
    """The models in a folder of plain GGUF files; split models joined, projectors left out.
    ``repo``: the repository they belong to (a Hugging Face snapshot's); else LM Studio's
    publisher/repo folders name it."""
    files = sorted(_walk(folder, root.depth))
    splits = {path: _split_stem(path) for path in files}
    for path in files:
        if path.name.lower().startswith(("mmproj", "incomplete-")):
            continue
        stem, part = splits[path] or (path.stem, 1)
        if part != 1:
            continue  # counted with the first part
        parts = tuple(p for p in files if p != path and p.parent == path.parent
                      and splits[p] is not None and splits[p][0] == stem) if splits[path] else ()
        total = int(_SPLIT.search(path.stem).group(2)) if splits[path] else 1
        missing = None
        if len(parts) + 1 < total:  # an unfinished download, or a part deleted
            have = {splits[p][1] for p in parts} | {1}
            gone = [f"{k:05d}" for k in range(1, total + 1) if k not in have]
            missing = (f"part{'s' if len(gone) > 1 else ''} {', '.join(gone)} of {total:05d} of this "
                       "split model are missing from its folder" if len(gone) > 1 else
                       f"part {gone[0]} of {total:05d} of this split model is missing from its folder")
        rel = path.parent.relative_to(folder).as_posix()
        rel = "" if rel == "." else rel
        # Jan names each model by its folder (its file is "model.gguf"), as do others' "model.gguf"s.
        name = rel if rel and (root.source == "jan" or stem.lower() in _GENERIC_STEMS) else stem
        where = repo if repo is not None else rel if root.source == "lmstudio" else ""
        yield _Candidate(name, path, root.source, where, error=missing, parts=parts)


def _split_stem(path: Path) -> tuple[str, int] | None:
    """("Big-Q4_K_M", 2) for ``Big-Q4_K_M-00002-of-00003.gguf``; None for a whole file."""
    match = _SPLIT.search(path.stem)
    return (path.stem[:match.start()], int(match.group(1))) if match else None


def _ollama(models: Path) -> Iterator[_Candidate]:
    manifests = models / "manifests"
    for manifest in sorted(_walk(manifests, 4, suffix=None)):
        parts = manifest.relative_to(manifests).parts
        if len(parts) != 4:
            continue
        host, namespace, model, tag = parts
        name = f"{model}:{tag}" if (host, namespace) == (OLLAMA_REGISTRY, "library") else \
            f"{namespace}/{model}:{tag}" if host == OLLAMA_REGISTRY else f"{host}/{namespace}/{model}:{tag}"
        repo = "/".join(parts)
        try:
            doc = json.loads(manifest.read_text(encoding="utf-8"))
            digest = next(layer["digest"] for layer in doc["layers"]
                          if layer.get("mediaType") == OLLAMA_MODEL_LAYER)
            algo, _, hexdigest = str(digest).partition(":")
            if not hexdigest or "/" in hexdigest or "\\" in hexdigest:
                raise ValueError(f"odd digest {digest!r}")
        except StopIteration:
            continue  # an adapter or other non-model manifest: nothing to list
        except (OSError, ValueError, KeyError, TypeError) as exc:
            yield _Candidate(name, manifest, "ollama", repo,
                             error=f"Ollama's manifest {manifest} cannot be read ({exc}).")
            continue
        blob = models / "blobs" / f"{algo}-{hexdigest}"
        if not blob.is_file() and (models / "blobs" / f"{algo}:{hexdigest}").is_file():
            blob = models / "blobs" / f"{algo}:{hexdigest}"  # older Ollama on Linux/macOS
        if not blob.is_file():
            yield _Candidate(name, blob, "ollama", repo,
                             error=f"Ollama's blob for {name} is missing ({blob}); "
                                   f"`ollama pull {name}` fetches it again.")
            continue
        yield _Candidate(name, blob, "ollama", repo)


def _hf_cache(hub: Path) -> Iterator[_Candidate]:
    for repo_dir in sorted(hub.glob("models--*")):
        repo = repo_dir.name.removeprefix("models--").replace("--", "/")
        snapshots = repo_dir / "snapshots"
        if not snapshots.is_dir():
            continue
        for snapshot in sorted(p for p in snapshots.iterdir() if p.is_dir()):
            yield from _gguf_files(Root("hf-cache", snapshot), snapshot, repo=repo)


# -- describing one file ----------------------------------------------------------------------

def _describe(cand: _Candidate, machine: MachineFacts | None, n_ctx: int,
              facts: FactsCache) -> FoundModel:
    resolved = None
    try:
        real = cand.path.resolve()
        resolved = real if real != cand.path.absolute() else None
    except OSError:
        pass
    size = _size(cand.path) + sum(_size(p) for p in cand.parts)
    model = FoundModel(cand.name, cand.path, cand.source, size, repo=cand.repo,
                       resolved=resolved, error=cand.error)
    if cand.error:
        return model
    try:
        header = _read_facts(cand.path, facts)
        # A split model's weights are spread over its parts: count them all.
        extra = sum(_read_facts(part, facts).parameters for part in cand.parts)
    except ModelError as exc:
        return replace(model, error=exc.message)
    except OSError as exc:  # a file that vanished or turned unreadable mid-scan
        return replace(model, error=f"{exc.filename or cand.path} cannot be read: {exc}")
    if extra:
        header = replace(header, parameters=header.parameters + extra)
    model = replace(model, facts=header)
    if machine is None:
        return model
    whole = replace(header, file_size=size)  # a split model needs all its parts in memory
    ctx = min(n_ctx, header.context_length) if header.context_length else n_ctx
    ram, vram = estimate_ram_bytes(whole, ctx, 0), estimate_vram_bytes(whole, ctx)
    return replace(model, ram_bytes=ram, vram_bytes=vram, fits=where_it_runs(ram, vram, machine))


def _read_facts(path: Path, facts: FactsCache) -> ModelFacts:
    """``read_model_facts``, or what ``facts`` remembers of the unchanged file. Only successes
    are kept: a broken file is read again next time."""
    known = facts.get(path)
    if known is not None:
        return known
    found = read_model_facts(path)
    facts.put(path, found)
    return found


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _file_key(path: Path) -> tuple[int, int] | None:
    """The file's identity behind any links (device, inode); None when it cannot be read."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if st.st_ino else None


def _walk(top: Path, depth: int, suffix: str | None = ".gguf") -> Iterator[Path]:
    """Files under ``top`` (down to ``depth`` folder levels) ending in ``suffix``
    (case-insensitive; None: every file). Hidden folders are skipped; linked folders are
    followed once each (a link loop cannot trap the walk); unreadable folders are passed over."""
    seen: set[tuple[int, int]] = set()
    stack = [(top, 1)]
    while stack:
        folder, level = stack.pop()
        try:
            st = folder.stat()
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir():
                    if level < depth and not entry.name.startswith("."):
                        stack.append((Path(entry.path), level + 1))
                elif suffix is None or entry.name.lower().endswith(suffix):
                    if entry.is_file():
                        yield Path(entry.path)
            except OSError:
                continue
