"""Embedding, HNSW index and retrievers (dense, BM25, hybrid)."""
