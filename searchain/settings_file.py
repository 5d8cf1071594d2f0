"""What a settings file holds: only what the user changed, so that better defaults reach them.

A settings file names ``settings_version`` and holds the values that differ from the defaults;
everything else is read as the default of the version that reads it. Files written before
(version 1, no ``settings_version`` key) held every value, so a default improved since (say
``reasoning.feedback_style`` "turn" -> "inline") stayed pinned at the old one for everyone who
had ever saved a setting. Reading such a file, a value that was the default when the file was last
written (its modification time) is taken as never chosen, and the new default is used, with a
note naming it; ``FORMER_DEFAULTS`` is that history (from ``git log -p searchain/config.py``). A
value the user had changed, or set to a former default after it changed, is kept. The next save
writes the short form.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

SETTINGS_VERSION = 2
VERSION_KEY = "settings_version"

# Every default changed while files held every value: key -> (former default, the time it stopped
# being the default: the commit that changed it, UTC). A file last written before that time held
# the value because it was the default; one written after held it because the user chose it
# (the app would have written the new default otherwise), and keeps it.
FORMER_DEFAULTS: dict[str, tuple[tuple[Any, str], ...]] = {
    "retrieval.hybrid_method": (("score", "2026-11-21T05:55:30+00:00"),),
    "retrieval.second_embedder": (("", "2026-11-21T11:34:52+00:00"),),
    "retrieval.batch_size": ((64, "2026-11-21T11:34:52+00:00"),),
    "reasoning.question_passages": ((0, "2026-11-23T17:58:46+00:00"), (2, "2026-11-23T20:13:18+00:00")),
    "reasoning.draft_answer": ((False, "2026-11-27T08:59:41+00:00"),),
    "reasoning.geek_branches": ((4, "2026-11-27T13:57:17+00:00"),),
    "reasoning.feedback_style": (("turn", "2026-11-27T19:47:03+00:00"),),
    # "off" again since session 31 ("found" was the default for an hour of session 30)
    "reasoning.final_steps": (("found", "2026-11-28T08:00:00+00:00"),),
}
# The top-level keys every version-1 file had (the app wrote them all): a file without a version
# that lacks one was written by hand, holds only what its writer chose, and is taken as it is.
_FULL_FILE_KEYS = frozenset({"active_corpus", "retrieval", "llm", "reasoning", "ui"})


def saved_form(settings) -> dict[str, Any]:
    """The JSON document ``settings`` is saved as: its version and the values not at their default."""
    return {VERSION_KEY: SETTINGS_VERSION, **_changed(asdict(settings), asdict(type(settings)()))}


def _changed(values: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        default = defaults.get(key)
        if isinstance(value, dict) and isinstance(default, dict):
            inner = _changed(value, default)
            if inner:
                out[key] = inner
        elif value != default or key not in defaults:
            out[key] = value
    return out


def is_full_file(data: dict[str, Any]) -> bool:
    """Whether ``data`` is a version-1 file, written with every value by the app."""
    return VERSION_KEY not in data and _FULL_FILE_KEYS <= data.keys()


def adopt_changed_defaults(data: dict[str, Any], defaults, written_at: float) -> list[str]:
    """In a version-1 document last written at ``written_at`` (a Unix time: the file's
    modification time), drop every value that was the default of its key then and no longer is
    (so the current default is read instead); returns one note per value dropped. ``defaults``:
    the current ``Settings()``. A version-2 or hand-written document is left as it is."""
    if not is_full_file(data):
        return []
    from datetime import datetime

    from .settings_schema import flatten

    current = flatten(defaults)
    notes = []
    for key, history in FORMER_DEFAULTS.items():
        section, _, name = key.rpartition(".")
        holder = data.get(section) if section else data
        if not isinstance(holder, dict) or name not in holder:
            continue
        value = holder[name]
        pinned = any(value == old and type(value) is type(old)
                     and written_at < datetime.fromisoformat(until).timestamp() for old, until in history)
        if pinned and value != current[key]:
            del holder[name]
            notes.append(f"{key} is now {_shown(current[key])} by default (your settings file, written when "
                         f"every value was saved, held the old default {_shown(value)}); to keep the old one: "
                         f"`searchain config set {key} {_shown(value)}`.")
    return notes


def _shown(value: Any) -> str:
    """A value as `searchain config set` takes it: JSON (true, 64, "off"; "" for an empty string)."""
    import json

    return json.dumps(value)
