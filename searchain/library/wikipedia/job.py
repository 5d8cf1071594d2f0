"""Getting a Wikipedia: download, check, ingest and index as one resumable job.

The job lives in ``<data>/downloads/wikipedia/<lang>-<source>-<snapshot>/``: ``job.json`` pins
the release (snapshot, Hub commit, every file with its size and published checksum) the first
time the job runs, and records the stages finished; ``files/`` holds the verified downloads
(kept: ``corpus rebuild`` re-reads them), ``rejected/`` files that failed their checksum.

Running it again after a kill, a cancel or an error goes on where it stopped: verified files are
not fetched again and partial ones resume (``download``), the ingest skips the passages stored
(``CorpusManager.add``), the index build continues from its checkpoints (``build_index``).
Before the download and before each stage the free disk space is checked against what the
stage needs (``estimate``), so a full disk is found before the work, not hours into it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...config import AppPaths, Settings
from ...files import atomic_write_text
from ...errors import CorpusError
from ...events import CancelToken, EventCallback, Progress, check, emit
from ...units import size, timestamp
from . import estimate
from .download import fetch_release, files_dir, remaining_bytes
from .remote import DEFAULT_SNAPSHOT, HUB, Release, check_choice, find_release

STAGE = "wikipedia"  # Progress(STAGE, k, 3, "download" | "ingest" | INDEX_NOTE)
# The index stage takes hours to days on a CPU; the passages are searchable from its start.
INDEX_NOTE = "index (the corpus can be asked already: by keywords until this is done)"
STAGES = ("download", "ingest", "index")
JOB_FILE = "job.json"
ORIGIN_KEY = "wikipedia_origin"  # in the passage store's meta: lang, source, snapshot, revision


@dataclass(frozen=True)
class WikipediaChoice:
    """What to get: ``lang`` (``simple``, ``en``, ...), ``source`` (``hub`` parquet or ``dump``
    XML), ``snapshot`` (None: the pinned default), ``revision`` (a Hub commit; None: the
    dataset's ``main`` at the job's first run, then recorded), ``name`` of the corpus (None:
    ``wikipedia-<lang>``)."""

    lang: str = "simple"
    source: str = HUB
    snapshot: str | None = None
    revision: str | None = None
    name: str | None = None

    @property
    def corpus(self) -> str:
        return self.name or f"wikipedia-{self.lang}"

    @property
    def snap(self) -> str:
        return self.snapshot or DEFAULT_SNAPSHOT.get(self.source, "")


@dataclass
class GetReport:
    corpus: str
    passages: int
    indexed: int
    job: str
    files: list[str] = field(default_factory=list)
    stages_run: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return dict(self.__dict__, seconds=round(self.seconds, 3))


def job_dir(paths: AppPaths, choice: WikipediaChoice) -> Path:
    return paths.data_dir / "downloads" / "wikipedia" / f"{choice.lang}-{choice.source}-{choice.snap}"


def plan_wikipedia(paths: AppPaths, settings: Settings, choice: WikipediaChoice
                   ) -> tuple[estimate.GetPlan, Release]:
    """The plan, and the release it is for; fetches the file list only (or nothing, when a job
    for this choice has pinned it already). Writes nothing."""
    job = job_dir(paths, choice)
    state = _state(job)
    release = _pinned(state, choice) or find_release(choice.lang, choice.source, choice.snap,
                                                     choice.revision)
    done = set(state.get("stages", [])) if _pinned(state, choice) else set()
    done = frozenset(done | ({"embed"} if "index" in done else set()))  # the build does both
    passages = _stored_passages(paths, settings, choice.corpus) if "ingest" in done else None
    plan = estimate.make_plan(settings, paths.models_dir, choice.corpus, release, job,
                              left_to_download=remaining_bytes(job, release), passages=passages,
                              cache_file=paths.cache_dir / "embed-speed.json", stages_done=done)
    return plan, release


def get_wikipedia(paths: AppPaths, settings: Settings, choice: WikipediaChoice, *,
                  release: Release | None = None, on_event: EventCallback | None = None,
                  cancel: CancelToken | None = None, embedder=None) -> GetReport:
    """Run (or continue) the job for ``choice``; ``release`` from ``plan_wikipedia`` saves a
    second listing. Makes the corpus the active one when it is ready."""
    from ...corpus.manager import CorpusManager

    check_choice(choice.lang, choice.source, choice.snap)
    started = time.monotonic()
    job = job_dir(paths, choice)
    state = _state(job)
    release = _pinned(state, choice) or release or find_release(
        choice.lang, choice.source, choice.snap, choice.revision)
    manager = CorpusManager(paths, settings)
    if not state.get("release") or not _pinned(state, choice):
        if manager.exists(choice.corpus):
            raise CorpusError(f"A corpus named {choice.corpus!r} exists already; nothing was "
                              "downloaded.",
                              hint="Give another name with --name, or remove it first "
                                   f"(`searchain corpus remove {choice.corpus}`).")
        state = {"lang": choice.lang, "source": choice.source, "snapshot": choice.snap,
                 "corpus": choice.corpus, "release": release.to_dict(), "stages": [],
                 "created": timestamp()}
        _save(job, state)
    report = GetReport(choice.corpus, 0, 0, str(job))
    if "ingest" in state["stages"] and not manager.exists(choice.corpus):
        state["stages"] = [s for s in state["stages"] if s == "download"]  # removed since: again
        _save(job, state)
    done = set(state["stages"])

    emit(on_event, Progress(STAGE, 0, len(STAGES), "download"))
    plan = estimate.make_plan(settings, paths.models_dir, choice.corpus, release, job,
                              left_to_download=remaining_bytes(job, release),
                              stages_done=frozenset(done | ({"embed"} if "index" in done else set())))
    if "download" not in done:
        # all that is still to come must fit, not the download alone: finding out after it is worse
        _require_space(job, plan.disk_bytes, "the download and what follows it")
        fetch_release(job, release, on_event=on_event, cancel=cancel)
        _finish(job, state, "download", report)
    report.files = [str(files_dir(job) / f.name) for f in release.files]

    check(cancel)
    emit(on_event, Progress(STAGE, 1, len(STAGES), "ingest"))
    if "ingest" not in done:
        _require_space(paths.corpora_dir, _disk_from(plan, "ingest"), "the ingest and the index")
        source, fmt = _ingest_source(job, release)
        manager.add(choice.corpus, source, fmt, on_event=on_event, cancel=cancel)
        with manager.open_store(choice.corpus) as store:  # where it came from, for later updates
            store.meta_set(ORIGIN_KEY, {"lang": release.lang, "source": release.source,
                                        "snapshot": release.snapshot, "revision": release.revision,
                                        "where": release.where})
        _finish(job, state, "ingest", report)

    check(cancel)
    emit(on_event, Progress(STAGE, 2, len(STAGES), INDEX_NOTE))
    if "index" not in done:
        from ...index.build.builder import build_index  # lazy: the embedding stack

        passages = _stored_passages(paths, settings, choice.corpus) or plan.passages
        later = estimate.make_plan(settings, paths.models_dir, choice.corpus, release, job,
                                   left_to_download=0, passages=passages)
        _require_space(paths.corpora_dir, _disk_from(later, "embed"), "the index build")
        build_index(paths, settings, choice.corpus, on_event=on_event, cancel=cancel,
                    embedder=embedder)
        _finish(job, state, "index", report)
    emit(on_event, Progress(STAGE, len(STAGES), len(STAGES), "ready"))
    manager.set_active(choice.corpus)
    info = manager.info(choice.corpus)
    report.passages, report.indexed = info.passages or 0, info.indexed or 0
    report.seconds = time.monotonic() - started
    return report


def _ingest_source(job: Path, release: Release) -> tuple[Path, str]:
    if release.source == HUB:
        # the shards of one config share its folder: files/<snapshot>.<lang>/train-*.parquet
        folders = {str(Path(f.name).parent) for f in release.files}
        folder = files_dir(job) / (folders.pop() if len(folders) == 1 else "")
        return folder, "parquet"
    # the dump (a multistream one finds its index beside it: ``corpus.sources.multistream``)
    dump = next(f for f in release.files if f.name.endswith(".xml.bz2"))
    return files_dir(job) / dump.name, "mediawiki"


def _disk_from(plan, stage: str) -> int:
    """The disk the stages from ``stage`` on will add."""
    names = [s.name for s in plan.stages]
    return sum(s.disk_bytes for s in plan.stages[names.index(stage):])


def _require_space(folder: Path, needed: int, what: str) -> None:
    free = estimate.free_bytes(folder)
    if free is not None and needed > free:
        raise CorpusError(f"Not enough disk space for {what}: it needs about {size(needed)}, "
                          f"{folder} has {size(free)} free. Nothing of it was started.",
                          hint="Free some space, or keep SearChain's data on a larger disk "
                               "(--home DIR or $SEARCHAIN_HOME), then run the same command "
                               "again: finished stages are kept.")


def _stored_passages(paths: AppPaths, settings: Settings, corpus: str) -> int | None:
    from ...corpus.manager import CorpusManager

    manager = CorpusManager(paths, settings)
    return manager.info(corpus).passages if manager.exists(corpus) else None


def _pinned(state: dict, choice: WikipediaChoice) -> Release | None:
    """The release a job recorded, when it is for this choice (and this revision, if given)."""
    data = state.get("release")
    if not data or state.get("corpus") != choice.corpus:
        return None
    release = Release.from_dict(data)
    if choice.revision and choice.revision != release.revision:
        return None
    return release


def _finish(job: Path, state: dict, stage: str, report: GetReport) -> None:
    state["stages"] = [*state["stages"], stage]
    _save(job, state)
    report.stages_run.append(stage)


def _state(job: Path) -> dict:
    try:
        data = json.loads((job / JOB_FILE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(job: Path, state: dict) -> None:
    job.mkdir(parents=True, exist_ok=True)
    atomic_write_text(job / JOB_FILE, json.dumps(state, indent=2))
