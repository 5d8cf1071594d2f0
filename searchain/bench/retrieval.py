"""Placeholder until the retrieval benchmark lands."""


def register(sub) -> None:
    pass
