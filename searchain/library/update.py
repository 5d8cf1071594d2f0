"""A corpus update as one job: the passages (``corpus.update``), then the index extended by the
usual incremental build, which embeds only the passages stored anew (ids above its last
checkpoint) and hides the rows of those deleted; nothing unchanged is re-embedded.

``plan_update`` says the cost before it starts: reading (``corpus.update.plan``) plus embedding
at the speed the index plan measured or cached on this machine (``index.build.plan``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..config import AppPaths, Settings
from ..events import CancelToken, EventCallback
from ..units import duration, size

NEEDS_CONFIRMATION_S = 3600  # as an index build: over an hour, the CLI and the app ask first


@dataclass(frozen=True)
class UpdatePlan:
    read: object  # corpus.update.ReadPlan
    indexed: bool  # the corpus has an index, which the update extends
    models: tuple[str, ...]
    seconds_per_passage: float  # embedding, all models together (0 when not indexed)
    graph_seconds: float = 0.0

    @property
    def embed_seconds(self) -> float | None:
        """Folders: the estimated passages' embedding; snapshots: None (known once read)."""
        if self.read.est_passages is None:
            return None
        return self.read.est_passages * self.seconds_per_passage

    @property
    def embed_seconds_per_percent(self) -> float:
        """Embedding 1 % of the corpus's passages anew (a snapshot where 1 % changed)."""
        return 0.01 * self.read.passages_now * self.seconds_per_passage

    @property
    def full_build_seconds(self) -> float:
        """Embedding every passage again (what making the corpus anew would cost in embedding)."""
        return self.read.passages_now * self.seconds_per_passage

    @property
    def est_seconds(self) -> float:
        embed = self.embed_seconds
        return self.read.read_seconds + (self.embed_seconds_per_percent if embed is None else embed)

    @property
    def needs_confirmation(self) -> bool:
        return self.est_seconds > NEEDS_CONFIRMATION_S

    def to_dict(self) -> dict:
        embed = self.embed_seconds
        return {**asdict(self), "read": self.read.to_dict(),
                "embed_seconds": None if embed is None else round(embed, 1),
                "embed_seconds_per_percent": round(self.embed_seconds_per_percent, 1),
                "full_build_seconds": round(self.full_build_seconds, 1),
                "est_seconds": round(self.est_seconds, 1), "needs_confirmation": self.needs_confirmation}

    def summary(self) -> str:
        r = self.read
        if r.unit == "files":
            lines = [f"Update of '{r.corpus}' from its folders: {r.to_read:,} files to read "
                     f"({size(r.bytes_to_read)}), {r.removed:,} gone, {r.unchanged:,} unchanged "
                     f"(by size and time); about {duration(self.est_seconds)} on this machine."]
            if self.indexed and r.est_passages:
                lines.append(f"  embedding about {r.est_passages:,} passages: about "
                             f"{duration(self.embed_seconds or 0)}")
        else:
            lines = [f"Update of '{r.corpus}' from {r.source}: reading {size(r.bytes_to_read)}, "
                     f"about {duration(r.read_seconds)}."]
            if self.indexed:
                lines.append(f"  then embedding the changed and new articles only: about "
                             f"{duration(self.embed_seconds_per_percent)} per 1 % of the "
                             f"{r.passages_now:,} passages (all of them: "
                             f"{duration(self.full_build_seconds)})")
        if not self.indexed:
            lines.append("  the corpus has no index yet: passages only")
        elif self.read.passages_now >= _tantivy_from():
            lines.append("  the keyword index (tantivy) is then brought up to date: the changed "
                         "passages' documents replaced, not the whole index rebuilt")
        return "\n".join(lines)


def _tantivy_from() -> int:
    from ..index.bm25.tantivy_index import TANTIVY_FROM_PASSAGES

    return TANTIVY_FROM_PASSAGES


def _indexed(paths: AppPaths, settings: Settings, corpus: str) -> bool:
    from ..corpus.manager import CorpusManager
    from ..index.layout import IndexLayout

    return IndexLayout(CorpusManager(paths, settings).corpus_dir(corpus) / "index").meta_file.exists()


def _up_to_date(paths: AppPaths, settings: Settings, corpus: str, report) -> bool:
    """Nothing changed and the index is ready: no model needs loading (an update at the app's
    start costs a walk). An index a stopped update left behind is not ready, and is built."""
    if report.passages_added or report.passages_removed:
        return False
    from ..index.status import listing_status

    return listing_status(paths, settings, corpus).state == "ready"


def plan_update(paths: AppPaths, settings: Settings, corpus: str, source=None, fmt: str | None = None, *,
                embedder=None, on_event: EventCallback | None = None,
                cancel: CancelToken | None = None) -> UpdatePlan:
    """What ``update_and_index`` will cost here (reads no document, embeds at most a calibration
    batch the first time a model is measured on this machine)."""
    from ..corpus.manager import CorpusManager
    from ..corpus.update import plan_read

    with CorpusManager(paths, settings).open_store(corpus) as store:
        read = plan_read(store, source, fmt)
    if not _indexed(paths, settings, corpus):
        return UpdatePlan(read, False, (), 0.0)
    if read.unit == "files" and not (read.to_read or read.removed):  # nothing to embed: no model
        return UpdatePlan(read, True, (), 0.0)
    from ..index.build.plan import plan_build

    build = plan_build(paths, settings, corpus, embedder=embedder, on_event=on_event, cancel=cancel)
    per = sum(1.0 / m.passages_per_s for m in build.models if m.passages_per_s > 0)
    return UpdatePlan(read, True, tuple(m.model for m in build.models), per, build.graph_seconds)


def update_and_index(paths: AppPaths, settings: Settings, corpus: str, source=None,
                     fmt: str | None = None, *, index: bool | None = None, embedder=None,
                     on_event: EventCallback | None = None, cancel: CancelToken | None = None,
                     workers: int | None = None):
    """Update ``corpus`` (``corpus.update.update_corpus``), then extend its index when it has
    one (``index``: True builds one anyway, False never); ``workers``: processes parsing a
    snapshot that can be split (None: the setting ``corpus.ingest_workers``). Returns the ``UpdateReport`` with
    ``passages_embedded`` and ``index`` filled in. A stop during either step keeps what is done:
    the same call again continues."""
    from ..corpus.manager import CorpusManager
    from ..corpus.update import update_corpus

    report = update_corpus(CorpusManager(paths, settings), corpus, source, fmt, on_event=on_event,
                           cancel=cancel, workers=workers)
    if index is None:
        index = _indexed(paths, settings, corpus) and not _up_to_date(paths, settings, corpus, report)
    if index:
        from ..index.build.builder import build_index

        built = build_index(paths, settings, corpus, embedder=embedder, on_event=on_event, cancel=cancel)
        report.passages_embedded = built.embedded
        report.index = built.to_dict()
    return report
