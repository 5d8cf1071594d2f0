"""``searchain bench documents``: document ingest throughput against bare PDF extraction, and
the measurements behind the choice of document libraries (docs/corpus.md)."""
