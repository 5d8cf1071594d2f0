"""Sizes, durations and counts as people read them: every message, table and dialog uses these.

One convention for sizes: **decimal units**, 1 kB = 1,000 bytes and 1 GB = 10^9 bytes, as disk
makers, macOS and GNOME's file manager count them, so a corpus shows the same "2.0 GB" in
``corpus list``, in the build plan and in the app. (The few memory figures labelled GiB, a
model's RAM or VRAM need, are binary and say so.)

    >>> size(1_949_000_000), size(12_345), size(999)
    ('1.9 GB', '12.3 kB', '999 B')
    >>> duration(75), duration(600), duration(7200), duration(3 * 86400)
    ('75 s', '10 min', '2 h 00 min', '3.0 days')
    >>> clock(75), clock(3725)
    ('1:15', '1:02:05')
    >>> count(12_300), count(2e9)
    ('12.3k', '2.0G')
"""

from __future__ import annotations

from datetime import datetime, timezone

_SIZE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3))


def size(n_bytes: float | None, unknown: str = "?") -> str:
    """A byte count in decimal units with one decimal ("1.9 GB"); ``unknown`` for None."""
    if n_bytes is None:
        return unknown
    for unit, scale in _SIZE_UNITS:
        if abs(n_bytes) >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes:.0f} B"


def duration(seconds: float) -> str:
    """An estimate of time, as precise as an estimate deserves: "45 s", "12 min", "2 h 05 min",
    "3.5 days"."""
    seconds = max(0.0, seconds)
    if 0 < seconds < 1:  # work that takes any time at all is never "about 0 s"
        seconds = 1.0
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        hours, minutes = divmod(round(seconds / 60), 60)
        return f"{hours} h {minutes:02d} min"
    return f"{seconds / 86400:.1f} days"


def clock(seconds: float) -> str:
    """Time as a clock reads it, for a progress bar's ETA that ticks down: "1:15", "1:02:05"."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def count(value: float) -> str:
    """A short count: 950, 12.3k, 4.1M, 2.0G."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{value:.0f}" if float(value).is_integer() or abs(value) >= 10 else f"{value:.1f}"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """A number with its noun, as a person writes it: "1 round", "3 rounds", "2 problems"
    (``plural`` where adding an s is wrong: "1 passage", "2 passages"; "1 entry", "2 entries")."""
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def timestamp(timespec: str = "seconds") -> str:
    """The time now, UTC, ISO 8601, as every record on disk writes it (it sorts as text);
    ``timespec="microseconds"`` where two quick writes must still differ (saved messages)."""
    return datetime.now(timezone.utc).isoformat(timespec=timespec)
