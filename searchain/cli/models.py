"""Placeholder until the models commands land."""


def register(sub) -> None:
    pass
