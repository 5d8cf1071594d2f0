"""The pooled evaluation corpus: every paragraph of a benchmark file, ingested and indexed once.

The corpus is named after the file's content hash (``eval-musique-<hash>``), so a changed file
gets a new corpus and an unchanged one is reused as is; an interrupted ingest or index build
continues where it stopped (both steps are resumable in their own subsystems).
"""

from __future__ import annotations

from ..config import AppPaths, Settings
from ..events import CancelToken, EventCallback, check
from .datasets import EvalDataset


def ensure_eval_corpus(
    paths: AppPaths,
    settings: Settings,
    dataset: EvalDataset,
    *,
    name: str | None = None,
    on_event: EventCallback | None = None,
    cancel: CancelToken | None = None,
) -> str:
    """Make sure the pooled corpus of ``dataset`` exists and is indexed; returns its name."""
    from ..corpus.manager import READY, CorpusManager
    from ..index.build.builder import build_index
    from ..index.status import index_status, wanted_embedders

    name = name or dataset.corpus_name
    manager = CorpusManager(paths, settings)
    if not manager.exists(name) or manager.info(name).state != READY:
        # The whole file, whatever --limit says: the other questions' paragraphs are distractors.
        manager.add(name, dataset.path, format=dataset.kind, on_event=on_event, cancel=cancel)
    check(cancel)
    first, second = wanted_embedders(settings, paths.models_dir)
    status = index_status(paths, name, embedder_id=first, second_embedder_id=second,
                          verify_checksum=False)
    if status.state != "ready":
        build_index(paths, settings, name, on_event=on_event, cancel=cancel)
    return name
