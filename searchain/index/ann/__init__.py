"""The vector index: compact codes in RAM, exact rescoring from the vectors on disk."""
