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


# What a second hardware thread of a core adds to CPU-bound work such as parsing: ~15 %. The lent
# 16-vCPU machine (BENCHMARKS.md, "Ingest on 16 vCPUs") ran 16 copies of a loop 1.7-1.8x slower
# than one, i.e. ~9 cores' worth, as 8 cores of 2 threads with this yield would.
SMT_YIELD = 0.15


def cpu_cores(root: Path = Path("/sys/devices/system/cpu")) -> tuple[int, int]:
    """(logical CPUs, physical cores): the cores are the distinct ``thread_siblings_list`` sets of
    the CPUs (Linux sysfs); where those cannot be read, both are the logical count."""
    logical = max(1, os.cpu_count() or 1)
    siblings = set()
    for cpu in range(logical):
        try:
            siblings.add((root / f"cpu{cpu}" / "topology" / "thread_siblings_list").read_text().strip())
        except OSError:
            return logical, logical
    return logical, max(1, min(logical, len(siblings)))


def cpu_capacity(root: Path = Path("/sys/devices/system/cpu")) -> float:
    """How many cores' worth of CPU-bound work the machine does at once: its physical cores plus
    ``SMT_YIELD`` of each extra hardware thread (a plan's time estimates; not a worker count)."""
    logical, physical = cpu_cores(root)
    return physical + SMT_YIELD * (logical - physical)
