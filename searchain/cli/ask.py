"""Placeholder until the ask commands land."""


def register(sub) -> None:
    pass
