"""Asking before a destructive CLI action (delete a chat, remove a corpus)."""

from __future__ import annotations

import sys

from ..errors import SearchainError


def confirm(question: str, assume_yes: bool) -> bool:
    """True if the user agrees (or passed --yes). Without a terminal to ask on, refuse clearly
    rather than guess: scripts must say --yes."""
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        raise SearchainError(f"Refusing without confirmation: {question}",
                             hint="Add --yes to confirm when not running interactively.")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
