"""What this machine has: its memory, total and free, and which packages are installed where.
Read from the OS each time, never cached, so a figure is as fresh as the question ("will this
model fit now?")."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def _meminfo(key: str) -> int | None:
    """A ``/proc/meminfo`` figure in bytes (Linux), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                name, _, rest = line.partition(":")
                if name == key:
                    return int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _sysconf_pages(name: str) -> int | None:
    try:
        return os.sysconf(name) * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def total_memory_bytes() -> int | None:
    """Physical RAM in bytes, or None where the OS does not say (memory checks are then skipped)."""
    return _meminfo("MemTotal") or _sysconf_pages("SC_PHYS_PAGES")


def available_memory_bytes() -> int | None:
    """RAM that can be allocated without swapping (``MemAvailable``), or None if unknown."""
    return _meminfo("MemAvailable") or _sysconf_pages("SC_AVPHYS_PAGES")


def package_folders(name: str) -> list[Path]:
    """The folders of installed package ``name``, found without importing it (torch takes
    seconds to import, and what is asked is often only which build it is); [] if not installed."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(folder) for folder in spec.submodule_search_locations]
