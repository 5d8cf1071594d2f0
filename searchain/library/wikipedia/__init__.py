"""A local Wikipedia in one step (``searchain corpus get wikipedia``, *Get Wikipedia…* in the app):
``remote`` names a snapshot's files and checksums (the Hub's parquet or a dumps.wikimedia.org
XML dump), ``download`` fetches and checks them, ``estimate`` says what it will cost here, and
``job`` runs download, ingest and index as one resumable job."""
