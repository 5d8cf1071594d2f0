"""``searchain bench ingest``: corpus ingestion speed."""
