"""Corpora: sources, chunking and the passage store (SQLite + FTS5).

- ``store.PassageStore``: one corpus's passages (``passages`` table + ``passages_fts``).
- ``manager.CorpusManager``: add / list / info / remove / rebuild / active corpus.
- ``ingest.ingest_source``: one source into a store, batched, with progress and cancellation.
- ``ids.passage_pid``: the content-derived pid of a (title, text) pair (multi-hop sets).
- ``open_at.open_target``: the command or URL that opens a cited document at its page.
- ``processes.warm_up_workers``: start the worker processes' fork server ahead of an ingest.
- ``sources/``: one module per input format; ``chunking``: DPR-style ~100-word passages.

The shipped demo corpus and corpus files (export/import) build indexes too, so they live a layer
up, in ``searchain.library``.
"""

from ..faces import face

__all__, __getattr__, __dir__ = face(__name__, {
    "manager": ("CorpusManager",),
    "store": ("PassageStore",),
    "fts_build": ("FINISH_STAGE",),
    "sources": ("FORMATS", "open_source"),
    "open_at": ("OpenTarget", "open_target", "default_pdf_app"),
    "processes": ("warm_up_workers",),
})
