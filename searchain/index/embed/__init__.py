"""Embedding models: loading them offline, where they run (CPU or GPU), in what precision, and
the second model hybrid search may add."""
