"""Corpora: sources, chunking and the passage store (SQLite + FTS5)."""
