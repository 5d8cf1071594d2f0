"""Placeholder until the search commands land."""


def register(sub) -> None:
    pass
