"""Which files a Wikipedia snapshot is, where they are, and their published checksums.

Two sources:
- ``hub``: the ``wikimedia/wikipedia`` dataset on the Hugging Face Hub, one folder of parquet
  shards per snapshot and language (``20231101.simple/train-00000-of-00001.parquet``). The
  dataset's ``main`` is resolved to its commit once, and every file is fetched at that commit
  (``Release.revision``, recorded by the job, so a resumed download never mixes commits). Each
  file's SHA-256 is the Hub's own, from the listing's LFS record.
- ``dump``: ``https://dumps.wikimedia.org/<lang>wiki/<snapshot>/``, the multistream dump
  ``<lang>wiki-<snapshot>-pages-articles-multistream.xml.bz2`` and its index
  ``...-multistream-index.txt.bz2`` (side by side in ``files/``, so the ingest hands its bzip2
  streams to worker processes: ``corpus.sources.multistream``); where the checksum list has no
  such pair, the single-stream ``...-pages-articles.xml.bz2`` (read in one process). Every file
  is checked against the dump's published ``...-sha1sums.txt`` (``...-md5sums.txt`` where there
  is no SHA-1 list).

Endpoints: ``HF_ENDPOINT`` (or ``SEARCHAIN_WIKIPEDIA_HUB``) and ``SEARCHAIN_WIKIPEDIA_DUMPS``
point at mirrors (and the tests' loopback stubs). A snapshot that does not exist is a CorpusError
naming the ones that do.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass

from ...errors import CorpusError

HUB_REPO = "wikimedia/wikipedia"
HUB, DUMP = "hub", "dump"
SOURCES = (HUB, DUMP)
LANGS = ("simple", "en")  # offered by name; any Wikipedia language code is accepted
# Pinned defaults: the wikimedia/wikipedia dataset's snapshot. dumps.wikimedia.org keeps only
# the last few months of dumps, so a dump's snapshot is usually given (the error lists them).
DEFAULT_SNAPSHOT = {HUB: "20231101", DUMP: "20231101"}
HUB_DEFAULT = "https://huggingface.co"
DUMPS_DEFAULT = "https://dumps.wikimedia.org"
_LANG = re.compile(r"^[a-z][a-z0-9-]{1,15}$")
_SNAPSHOT = re.compile(r"^\d{8}$")
_TIMEOUT_S = 30


def user_agent() -> dict[str, str]:
    """Wikimedia asks every client to name itself (its User-Agent policy)."""
    from ... import __version__

    return {"User-Agent": f"SearChain-Desktop/{__version__} (searchain corpus get wikipedia)"}


@dataclass(frozen=True)
class RemoteFile:
    name: str  # where it goes under the job's files/ folder (the repo path for the Hub)
    url: str
    size: int
    algorithm: str  # hashlib's name: sha256 | sha1 | md5
    checksum: str


@dataclass(frozen=True)
class Release:
    lang: str
    source: str  # HUB | DUMP
    snapshot: str
    revision: str  # the Hub commit; for a dump, the snapshot itself
    where: str  # a human-readable origin ("wikimedia/wikipedia at 0123abcd")
    files: tuple[RemoteFile, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Release":
        return cls(**{**data, "files": tuple(RemoteFile(**f) for f in data["files"])})


def hub_endpoint() -> str:
    return (os.environ.get("SEARCHAIN_WIKIPEDIA_HUB") or os.environ.get("HF_ENDPOINT")
            or HUB_DEFAULT).rstrip("/")


def dumps_endpoint() -> str:
    return (os.environ.get("SEARCHAIN_WIKIPEDIA_DUMPS") or DUMPS_DEFAULT).rstrip("/")


def check_choice(lang: str, source: str, snapshot: str) -> None:
    if source not in SOURCES:
        raise CorpusError(f"Unknown Wikipedia source {source!r}.",
                          hint=f"Use one of: {', '.join(SOURCES)} (hub: parquet from the Hugging "
                               "Face Hub; dump: the XML dump from dumps.wikimedia.org).")
    if not _LANG.match(lang):
        raise CorpusError(f"{lang!r} is not a Wikipedia language code.",
                          hint="For example: simple (Simple English), en, de, fr.")
    if not _SNAPSHOT.match(snapshot):
        raise CorpusError(f"{snapshot!r} is not a snapshot date.",
                          hint=f"A snapshot is written YYYYMMDD, e.g. {DEFAULT_SNAPSHOT[source]}.")


def find_release(lang: str, source: str, snapshot: str, revision: str | None = None) -> Release:
    """The files of ``lang``'s Wikipedia at ``snapshot`` from ``source`` (one listing request or
    two; nothing is downloaded)."""
    check_choice(lang, source, snapshot)
    return hub_release(lang, snapshot, revision) if source == HUB else dump_release(lang, snapshot)


# -- the Hub ----------------------------------------------------------------------------------
def hub_release(lang: str, snapshot: str, revision: str | None = None) -> Release:
    from huggingface_hub import HfApi, hf_hub_url
    from huggingface_hub.hf_api import RepoFile

    endpoint = hub_endpoint()
    api = HfApi(endpoint=endpoint)
    config = f"{snapshot}.{lang}"
    try:
        revision = revision or api.dataset_info(HUB_REPO, revision="main").sha
        entries = list(api.list_repo_tree(HUB_REPO, config, recursive=True, revision=revision,
                                          repo_type="dataset"))
    except Exception as exc:  # noqa: BLE001 - hub/network errors come in many types
        if _status(exc) == 404:
            raise _no_hub_snapshot(api, lang, snapshot, revision) from exc
        raise _network_error(f"the Hugging Face Hub ({endpoint})", exc) from exc
    files = []
    for entry in entries:
        if not isinstance(entry, RepoFile) or not entry.path.endswith(".parquet"):
            continue
        sha = getattr(entry.lfs, "sha256", None) if entry.lfs is not None else None
        if not sha:
            raise CorpusError(f"The Hub lists {HUB_REPO}/{entry.path} without a SHA-256, so it "
                              "cannot be checked; nothing was downloaded.",
                              hint="Try again later, or use --source dump.")
        files.append(RemoteFile(entry.path, hf_hub_url(HUB_REPO, entry.path, repo_type="dataset",
                                                       revision=revision, endpoint=endpoint),
                                int(entry.size), "sha256", sha.lower()))
    if not files:
        raise _no_hub_snapshot(api, lang, snapshot, revision)
    return Release(lang, HUB, snapshot, revision, f"{HUB_REPO} at {revision[:12]}",
                   tuple(sorted(files, key=lambda f: f.name)))


def _no_hub_snapshot(api, lang: str, snapshot: str, revision: str | None) -> CorpusError:
    try:
        configs = sorted(e.path for e in api.list_repo_tree(HUB_REPO, revision=revision,
                                                            repo_type="dataset")
                         if e.path.endswith(f".{lang}"))
    except Exception:  # noqa: BLE001 - the listing is only for the hint
        configs = []
    there = [c.split(".")[0] for c in configs]
    return CorpusError(
        f"There is no Wikipedia snapshot {snapshot} for language {lang!r} in {HUB_REPO} on the Hub.",
        hint=(f"Snapshots there for {lang!r}: {', '.join(there)}." if there else
              f"The Hub has no {lang!r} Wikipedia in {HUB_REPO}: check the language code.")
        + " Pass one with --snapshot, or try --source dump.")


# -- dumps.wikimedia.org ------------------------------------------------------------------------
def dump_release(lang: str, snapshot: str) -> Release:
    base = dumps_endpoint()
    wiki = f"{lang}wiki"
    folder = f"{base}/{wiki}/{snapshot}"
    sums, algorithm = None, None
    for algorithm, listing in (("sha1", "sha1sums"), ("md5", "md5sums")):
        sums = _get_text(f"{folder}/{wiki}-{snapshot}-{listing}.txt", base)
        if sums is not None:
            break
    if sums is None:
        raise _no_dump(base, wiki, lang, snapshot)
    published = {}
    for line in sums.splitlines():
        parts = line.split()
        if len(parts) == 2:
            published[parts[1]] = parts[0].lower()
    multistream, index, single = dump_names(wiki, snapshot)
    names = [multistream, index]
    if not all(n in published for n in names):
        names = [single]  # no multistream pair: the single-stream dump
    if not all(n in published for n in names):
        raise CorpusError(f"The {snapshot} dump of {wiki} lists no {names[0]} in its checksums "
                          "(the dump may still be running).",
                          hint=f"Pick a finished dump: see {base}/{wiki}/.")
    files = tuple(RemoteFile(n, f"{folder}/{n}", _head_size(f"{folder}/{n}", base), algorithm,
                             published[n]) for n in names)
    return Release(lang, DUMP, snapshot, snapshot, f"{base}/{wiki}/{snapshot}", files)


def dump_names(wiki: str, snapshot: str) -> tuple[str, str, str]:
    """The multistream dump, its index, and the single-stream dump, as Wikimedia names them."""
    stem = f"{wiki}-{snapshot}-pages-articles"
    return (f"{stem}-multistream.xml.bz2", f"{stem}-multistream-index.txt.bz2", f"{stem}.xml.bz2")


def _no_dump(base: str, wiki: str, lang: str, snapshot: str) -> CorpusError:
    index = _get_text(f"{base}/{wiki}/", base) or ""
    there = sorted(set(re.findall(r'href="(\d{8})/?"', index)))
    return CorpusError(
        f"There is no {snapshot} dump of {wiki} at {base}.",
        hint=(f"Dumps there for {lang!r}: {', '.join(there[-6:])}. " if there else
              f"{base} has no {wiki}: check the language code. ")
        + "dumps.wikimedia.org keeps only recent dumps; pass one with --snapshot, or use "
          "--source hub.")


def _session():
    from huggingface_hub.utils import get_session

    return get_session()


def _get_text(url: str, base: str) -> str | None:
    """The body of ``url``, or None on 404."""
    try:
        response = _session().get(url, follow_redirects=True, timeout=_TIMEOUT_S,
                                  headers=user_agent())
    except Exception as exc:  # noqa: BLE001 - httpx/offline errors
        raise _network_error(base, exc) from exc
    if response.status_code == 404:
        return None
    if response.status_code >= 400:
        raise CorpusError(f"{url} answered HTTP {response.status_code}.",
                          hint="Try again later, or point SEARCHAIN_WIKIPEDIA_DUMPS at a mirror.")
    return response.text


def _head_size(url: str, base: str) -> int:
    try:
        response = _session().head(url, follow_redirects=True, timeout=_TIMEOUT_S,
                                   headers=user_agent())
    except Exception as exc:  # noqa: BLE001
        raise _network_error(base, exc) from exc
    size = response.headers.get("content-length")
    if response.status_code >= 400 or not size:
        raise CorpusError(f"{url} answered HTTP {response.status_code} without a size.",
                          hint="Try again later, or point SEARCHAIN_WIKIPEDIA_DUMPS at a mirror.")
    return int(size)


def _status(exc: Exception) -> int | None:
    return getattr(getattr(exc, "response", None), "status_code", None)


def _network_error(where: str, exc: Exception) -> CorpusError:
    offline = type(exc).__name__ == "OfflineModeIsEnabled" or os.environ.get("HF_HUB_OFFLINE") == "1"
    return CorpusError(
        f"Cannot reach {where}: {type(exc).__name__}: {exc}",
        hint=("Downloads are switched off (HF_HUB_OFFLINE=1): unset it. " if offline else
              "Check the internet connection. ")
        + "Nothing was downloaded; run the same command again once it is back.")
