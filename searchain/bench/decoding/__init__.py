"""Benchmarks of the model runtime: backend speed (``llm``), grammar decoding (``grammar``), a
server against in-process (``server``), drafts (``lookup``) and what a batch costs (``batch``)."""
