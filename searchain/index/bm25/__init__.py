"""Keyword search: BM25 over SQLite FTS5 for ordinary corpora, tantivy at Wikipedia scale."""
