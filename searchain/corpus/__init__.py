"""Corpora: sources, chunking and the passage store (SQLite + FTS5).

- ``store.PassageStore``: one corpus's passages (``passages`` table + ``passages_fts``).
- ``manager.CorpusManager``: add / list / info / remove / rebuild / active corpus.
- ``demo.ensure_demo_corpus``: the shipped demo corpus, ingested and indexed on first run.
- ``ids.passage_pid``: the content-derived pid of a (title, text) pair (multi-hop sets).
- ``sources``: one module per input format; ``chunking``: DPR-style ~100-word passages.
"""
