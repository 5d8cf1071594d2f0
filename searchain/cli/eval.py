"""Placeholder until the eval commands land."""


def register(sub) -> None:
    pass
