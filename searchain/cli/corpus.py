"""Placeholder until the corpus commands land."""


def register(sub) -> None:
    pass
