"""``searchain bench bundle [--size-mb N]``: corpus export and import against a plain copy.

A scratch corpus (the demo articles) gets an extra index member of ``--size-mb`` random bytes,
standing in for the graph or checkpoints of a large corpus (the bundle code packs whatever the
index folder holds). In the same run it is then copied with ``shutil.copyfile`` and fsynced (the
baseline: the disk's own speed), exported to one file and imported back. Reported: seconds and MB/s of
each, their ratio to the copy, and the process's peak memory before and after (the bundle code
streams in 4 MiB chunks, so the peak must not grow with the member's size).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import tempfile
import time

CHUNK = 4 * 1024 * 1024


def register(sub) -> None:
    p = sub.add_parser("bundle", help="corpus export/import throughput and memory vs a plain copy")
    p.add_argument("--size-mb", type=int, default=1024, help="size of the stand-in index member (default 1024)")
    p.add_argument("--json", action="store_true", help="print only the JSON object (default too)")
    p.set_defaults(func=run)


def run(ctx, args) -> int:
    from ..config import AppPaths
    from ..library.bundle_export import export_corpus
    from ..library.bundle_import import import_corpus
    from ..library.demo import demo_articles_dir
    from ..corpus.manager import CorpusManager

    size = args.size_mb * 1024 * 1024
    with tempfile.TemporaryDirectory(prefix="searchain-bundle-bench-", dir=ctx.paths.cache_dir) as tmp:
        paths = AppPaths.resolve(tmp).ensure()
        settings = ctx.settings
        CorpusManager(paths, settings).add("big", demo_articles_dir(), "folder")
        member = paths.corpora_dir / "big" / "index" / "vectors.bin"
        member.parent.mkdir(parents=True)
        with open(member, "wb") as fh:
            for _ in range(0, size, CHUNK):
                fh.write(os.urandom(CHUNK))
        total = sum(f.stat().st_size for f in (paths.corpora_dir / "big").rglob("*") if f.is_file())
        peak_before = _peak_mb()

        t = time.perf_counter()
        shutil.copyfile(member, f"{tmp}/copy.bin")
        with open(f"{tmp}/copy.bin", "rb+") as fh:
            os.fsync(fh.fileno())  # export and import fsync what they write: so does the baseline
        copy_s = time.perf_counter() - t
        os.remove(f"{tmp}/copy.bin")

        t = time.perf_counter()
        export_corpus(paths, settings, "big", f"{tmp}/big.searchain-corpus")
        export_s = time.perf_counter() - t
        t = time.perf_counter()
        import_corpus(paths, settings, f"{tmp}/big.searchain-corpus", as_name="again")
        import_s = time.perf_counter() - t
        peak_after = _peak_mb()
    mb = total / 1e6
    print(json.dumps({
        "benchmark": "bundle", "bytes": total,
        "copy": {"seconds": round(copy_s, 2), "mb_per_s": round(mb / copy_s, 1)},
        "export": {"seconds": round(export_s, 2), "mb_per_s": round(mb / export_s, 1),
                   "vs_copy": round(export_s / copy_s, 2)},
        "import": {"seconds": round(import_s, 2), "mb_per_s": round(mb / import_s, 1),
                   "vs_copy": round(import_s / copy_s, 2)},
        "peak_rss_mb_before": peak_before, "peak_rss_mb_after": peak_after,
    }, indent=2))
    return 0


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
