"""How worker processes (``parallel``) are started: forks of a fork server.

A worker is never a fork of the ingest's own process, which may hold Qt, SQLite or reader
threads (a fork copies their locks mid-use). Where the platform has it, the worker comes from
``multiprocessing``'s ``forkserver``: a clean interpreter started once (with ``spawn``'s safe
``fork_exec``) that imports the readers (``PRELOAD``: PDFium and the folder source, ~0.1 s) and
then forks each worker on request, single-threaded, in a few milliseconds. ``spawn``, where
there is no fork server (Windows), starts and imports a whole interpreter per worker
(0.15-0.2 s each on the 2-core VM; BENCHMARKS.md #34).

The server is started at the first pool, or earlier by ``warm_up_workers()`` (it returns at
once; the server loads in the background; the app calls it when a folder is picked), and
lives while this process does: one idle process of about 27 MB resident (14 MB of it its
own). It exits when this process dies, and a worker exits when the process that asked for it
dies (``parallel``), not when the server does.
"""

from __future__ import annotations

import multiprocessing
import os

START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
PRELOAD = ["searchain.corpus.parallel", "searchain.corpus.sources.folder",
           "searchain.corpus.sources.documents.pdf", "pypdfium2"]


def worker_context():
    """The ``multiprocessing`` context worker pools are made with."""
    ctx = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver":
        ctx.set_forkserver_preload(PRELOAD)  # read when the server starts; a no-op after
    return ctx


def warm_up_workers() -> None:
    """Start the fork server now, if it is not running, without waiting for it to load: call
    it when workers are likely soon (a folder was picked), so that the first pool finds it
    ready. Cheap (one ``fork_exec``); nothing for ``spawn``."""
    if START_METHOD == "forkserver":
        worker_context()
        from multiprocessing import forkserver

        forkserver.ensure_running()


def stop_fork_server() -> None:
    """Stop the fork server (benchmarks measure a first use with it; the next pool starts a new
    one). Uses ``multiprocessing``'s private stop, the one its own tests use."""
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)
    if stop is not None:
        stop()


def workers_cpu_seconds() -> float:
    """CPU seconds (user + system) of this process's finished child processes and of the
    running fork server with its finished children (the workers): what benchmarks add to the
    parent's own CPU time. The fork server's part is read from /proc (Linux; 0 elsewhere)."""
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = kids.ru_utime + kids.ru_stime
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if pid:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(") ", 1)[1].split()
            total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total
