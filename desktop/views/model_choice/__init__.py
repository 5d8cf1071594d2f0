"""Choosing a chat model: the models on disk, the download catalogue and the PyPI catalogue."""
