"""Placeholder until the chats commands land."""


def register(sub) -> None:
    pass
