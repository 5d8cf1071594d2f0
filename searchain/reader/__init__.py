"""Readers: extract the answer span for a query from a passage, with a confidence."""
