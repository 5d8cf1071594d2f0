"""What state a corpus's index is in, without loading the model or the graph.

States: ``missing`` (never built), ``partial`` (a build stopped before finishing; running
it again continues), ``ready``, ``stale`` (the corpus has passages the index lacks, or lost
some it has, or the codes predate the refining tier: search works, building again brings it up
to date), ``mismatch`` (built with another embedder or passage format), ``outdated``
(made by an earlier version in a format search no longer reads: building again converts it
from the saved embeddings, re-embedding nothing), ``damaged`` (metadata unreadable, an
index file missing, not the size recorded when it was built, or its checksum does not match)
and ``unreadable`` (its files cannot be read right now: a full disk, an I/O error, a
permission; they are most likely intact, so nothing is to be rebuilt or removed).

With a second embedding model in use (``index.second``), the second model's index (``index/second``) counts too:
while it is missing, unfinished, stale, built by another model or damaged, a usable first index
reads as ``stale`` (search works, without the second model) and building again completes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import AppPaths, Settings
from ..errors import TRANSIENT_IO_HINT, IndexError_, is_transient_io
from ..files import file_sha256
from .ann.compact import unrefined
from .embed.embedder import model_id_for
from .layout import DOC_FORMAT, IndexLayout, IndexMeta, build_hint, rebuild_hint, repair_hint

MISSING, PARTIAL, READY, STALE, MISMATCH, DAMAGED, OUTDATED, UNREADABLE = (
    "missing", "partial", "ready", "stale", "mismatch", "damaged", "outdated", "unreadable")


@dataclass(frozen=True)
class IndexStatus:
    state: str
    message: str
    meta: IndexMeta | None = None
    indexed: int = 0  # vectors in the graph
    corpus_passages: int = 0
    hint: str | None = None

    @property
    def usable(self) -> bool:
        """Searchable as is (a stale index still answers, it just lacks the newest passages)."""
        return self.state in (READY, STALE)


def wanted_embedders(settings: Settings, models_dir: Path | None = None, *,
                     passages: int | None = None) -> tuple[str, str]:
    """Model ids of the configured embedder and second embedder ("" when off; ``auto`` resolved,
    looking for an unpacked copy in ``models_dir``, for a corpus of ``passages`` when given)."""
    from .embed.second import second_embedder_name

    r = settings.retrieval
    second = second_embedder_name(r, models_dir, passages=passages)
    return model_id_for(r.embedder), model_id_for(second) if second else ""


# What a corpus without a finished vector index still does (``retrievers.KeywordOnly``).
MEANWHILE = "Until it is built, hybrid search of it uses keywords alone."


def index_status(paths: AppPaths, corpus_name: str, *, embedder_id: str | None = None,
                 second_embedder_id: str = "", verify_checksum: bool = True) -> IndexStatus:
    """The state of ``corpus_name``'s index.

    ``embedder_id`` and ``second_embedder_id`` are the models the caller wants; without
    ``embedder_id`` both come from the saved settings. ``verify_checksum=False`` skips hashing
    the graph files (fast for very large indexes).
    """
    from ..corpus import fts_build
    from ..corpus.manager import CorpusManager

    # Read the settings only when needed: callers passing the embedder (listings, `doctor`) must
    # work even when the settings file holds a bad value.
    manager = CorpusManager(paths, Settings())
    layout = IndexLayout(manager.corpus_dir(corpus_name) / "index")
    with manager.open_store(corpus_name) as store:
        corpus_count, corpus_max = store.count(), store.max_id()
        store_path = store.path
        fts_left = fts_build.left_to_tantivy(store.conn, corpus_count)
    if embedder_id:
        wanted, wanted_second = embedder_id, second_embedder_id
    else:
        wanted, wanted_second = wanted_embedders(Settings.load(paths), paths.models_dir,
                                                 passages=corpus_count)
    to_build = build_hint(corpus_name)

    if not layout.meta_file.exists():
        if layout.shard_files():
            return IndexStatus(PARTIAL, f"The index of '{corpus_name}' was not finished; building "
                               f"again continues where it stopped. {MEANWHILE}",
                               corpus_passages=corpus_count, hint=to_build)
        return IndexStatus(MISSING, f"Corpus '{corpus_name}' has no index yet. {MEANWHILE}",
                           corpus_passages=corpus_count, hint=to_build)
    try:
        meta = IndexMeta.read(layout.meta_file, corpus_name)
    except IndexError_ as exc:
        if is_transient_io(exc):
            return _unreadable(corpus_name, exc, corpus_passages=corpus_count)
        return IndexStatus(DAMAGED, exc.message, corpus_passages=corpus_count,
                           hint=repair_hint(corpus_name))
    base = dict(meta=meta, indexed=meta.count, corpus_passages=corpus_count)
    if meta.embedder != wanted or meta.doc_format != DOC_FORMAT:
        return IndexStatus(MISMATCH, mismatch_message(corpus_name, meta.embedder, wanted), **base,
                           hint=rebuild_hint(corpus_name))
    if meta.outdated:
        from .ann.vector_index import UPGRADE_HINT, outdated_message

        return IndexStatus(OUTDATED, outdated_message(corpus_name, meta), **base,
                           hint=UPGRADE_HINT.format(name=corpus_name))
    try:
        problem = graph_problem(layout, meta, verify_checksum)
    except OSError as exc:
        return _unreadable(corpus_name, exc, **base)
    if problem:
        return IndexStatus(DAMAGED, f"The index of '{corpus_name}' is damaged: {problem}.", **base,
                           hint=repair_hint(corpus_name))
    if unrefined(meta.spec):
        return IndexStatus(STALE, older_codes_message(corpus_name), **base, hint=to_build)
    if corpus_max > meta.max_id or corpus_count != meta.count:
        return IndexStatus(STALE, f"The index of '{corpus_name}' holds {meta.count} passages, the "
                           f"corpus {corpus_count}; building again adds only the new ones.",
                           **base, hint=to_build)
    if wanted_second:
        lag = _second_index_problem(layout.second, corpus_name, wanted_second, corpus_count,
                                    corpus_max, verify_checksum)
        if lag:
            return IndexStatus(STALE, f"The index of '{corpus_name}' is usable, but {lag}.", **base,
                               hint=to_build)
    from .bm25.tantivy_index import index_problem

    keyword_lag = index_problem(store_path, corpus_count, corpus_max, fts_left=fts_left)
    if keyword_lag:
        return IndexStatus(STALE, f"The index of '{corpus_name}' is usable, but {keyword_lag}.", **base,
                           hint=to_build)
    return IndexStatus(READY, f"The index of '{corpus_name}' is ready ({meta.count} passages).", **base)


def _unreadable(corpus_name: str, exc: BaseException, **facts) -> IndexStatus:
    return IndexStatus(UNREADABLE, f"The index of '{corpus_name}' cannot be read right now: "
                       f"{getattr(exc, 'message', exc)}", hint=TRANSIENT_IO_HINT, **facts)


def _second_index_problem(layout: IndexLayout, corpus_name: str, wanted: str, corpus_count: int,
                          corpus_max: int, verify_checksum: bool) -> str | None:
    """Why the second embedder's index is not complete, or None."""
    without = "; search runs without the second model until it is built"
    if not layout.meta_file.exists():
        return f"the second embedding model ({wanted}) has not indexed it yet" + without
    unreadable = "the second embedding model's index cannot be read right now" + without
    try:
        meta = IndexMeta.read(layout.meta_file, corpus_name)
    except IndexError_ as exc:
        return (unreadable if is_transient_io(exc) else
                "the second embedding model's index is damaged" + without)
    if meta.embedder != wanted or meta.doc_format != DOC_FORMAT:
        return f"its second index was made by {meta.embedder}, not the configured {wanted}" + without
    if meta.outdated:
        return "the second embedding model's index is in an older format" + without
    try:
        if graph_problem(layout, meta, verify_checksum):
            return "the second embedding model's index is damaged" + without
    except OSError:
        return unreadable
    if unrefined(meta.spec):
        return ("the second embedding model's codes were made without the refining tier; building "
                "again retrains them from its saved embeddings")
    if corpus_max > meta.max_id or corpus_count != meta.count:
        return (f"the second embedding model has indexed {meta.count} of its {corpus_count} "
                "passages; building again adds only the new ones")
    return None


def listing_status(paths: AppPaths, settings: Settings, corpus_name: str) -> IndexStatus:
    """``index_status`` for a listing: the embedder of the given (in-memory) settings, and no
    hashing of the graph, so it stays cheap for every corpus on every refresh."""
    first, second = wanted_embedders(settings, paths.models_dir,
                                     passages=corpus_passages(paths, corpus_name))
    return index_status(paths, corpus_name, verify_checksum=False, embedder_id=first,
                        second_embedder_id=second)


def corpus_passages(paths: AppPaths, corpus_name: str) -> int:
    """How many passages ``corpus_name`` holds (``auto``'s second-model choice depends on it)."""
    from ..corpus.manager import CorpusManager

    with CorpusManager(paths, Settings()).open_store(corpus_name) as store:
        return store.count()


def older_codes_message(corpus_name: str) -> str:
    return (f"The index of '{corpus_name}' is usable, but its codes were made by an earlier version "
            "without the refining tier, which misses neighbours in large corpora (recall@10 0.76 "
            "instead of 0.999 at 21M passages); building again retrains them from the saved "
            "embeddings, re-embedding nothing.")


def mismatch_message(corpus_name: str, built_with: str, wanted: str) -> str:
    return (f"The index of corpus '{corpus_name}' was built with embedding model '{built_with}', "
            f"but the configured model is '{wanted}'; vectors of different models cannot be mixed.")


def graph_problem(layout: IndexLayout, meta: IndexMeta, verify_checksum: bool) -> str | None:
    """Why the index files cannot be trusted, or None (the shards are checked when opened).

    Sizes are compared always (a stat each), the checksum only with ``verify_checksum``. An
    ``OSError`` reading them propagates: the caller reports it as unreadable, not damaged."""
    sizes = meta.file_sizes if isinstance(meta.file_sizes, dict) else {}
    for path in (layout.compact_file, layout.rows_file, layout.shard_table_file):
        if not path.is_file():
            return f"{path} is missing"
        recorded, actual = sizes.get(path.name), path.stat().st_size
        if isinstance(recorded, int) and actual != recorded:
            return (f"{path} holds {actual:,} bytes, not the {recorded:,} it had when the index "
                    "was built (truncated or overwritten)")
    path = layout.compact_file
    if verify_checksum and file_sha256(path) != meta.checksum:
        return f"the checksum of {path} does not match (truncated or overwritten)"
    return None
