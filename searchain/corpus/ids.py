"""Stable passage ids derived from content, for sources that have no ids of their own."""

from __future__ import annotations

import hashlib


def passage_pid(title: str, text: str) -> str:
    """Short stable id for a (title, text) pair, e.g. ``"p3f9c0a1b2d4e5f60"``.

    The multi-hop sets (HotpotQA, MuSiQue) have no global paragraph ids; benchmarks compute
    the pid of a gold paragraph with this function to find it in the pooled corpus. Both
    parts are used verbatim, so the same pair always maps to the same id.
    """
    digest = hashlib.sha1(f"{title}\x1f{text}".encode("utf-8")).hexdigest()
    return "p" + digest[:16]
