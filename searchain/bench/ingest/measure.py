"""Ingest throughput: ``python -m searchain.bench.ingest.measure [--passages N] [--repeats R]``.

``--rss-sizes 20000,100000,400000`` measures instead the peak RSS of ingesting a generated
MediaWiki dump of each size into a new corpus, each in a fresh process (the figure that must
stay flat as N grows).

Prints one JSON object. For each source it times parsing alone (the baseline: reading and
chunking, nothing stored) and the full ingest (parse + SQLite insert + FTS5 index), taking
the median over ``repeats`` runs, so ``store_overhead`` = ingest time / parse time.
Sources: a generated DPR-style TSV, a generated MediaWiki dump (.xml.bz2), and the real
MuSiQue and HotpotQA pools from ../shared/eval when present.
"""

from __future__ import annotations

import argparse
import bz2
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import escape

from ...config import source_root

from ...corpus.problems import ProblemLog
from ...corpus.sources import open_source
from ...corpus.store import PassageStore

from ...eval.datasets import SHARED_EVAL_DIR

EVAL = SHARED_EVAL_DIR


def _words(rng: random.Random, n: int) -> str:
    vocab = ["river", "valley", "bridge", "heron", "salt", "city", "music", "comet", "apple", "stone",
             "harbour", "market", "engineer", "novel", "marsh", "lake", "hall", "orchard", "wool", "light"]
    return " ".join(rng.choice(vocab) + ("." if i % 15 == 14 else "") for i in range(n))


def make_tsv(path: Path, n: int, rng: random.Random) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id\ttext\ttitle\n")
        for i in range(n):
            fh.write(f"{i}\t{_words(rng, 100)}\tTitle {i // 5}\n")
    return path


def make_dump(path: Path, n_pages: int, rng: random.Random) -> Path:
    with bz2.open(path, "wt", encoding="utf-8") as fh:
        fh.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">\n')
        for i in range(n_pages):
            body = "\n\n".join(f"'''Page {i}''' [[link|{_words(rng, 3)}]] {{{{cite|x}}}} {_words(rng, 95)}"
                               for _ in range(5))
            fh.write(f"<page><title>Page {i}</title><ns>0</ns><id>{i + 1}</id><revision>"
                     f"<text>{escape(body)}</text></revision></page>\n")
        fh.write("</mediawiki>\n")
    return path


def _time_parse(path: Path, fmt: str) -> tuple[float, int]:
    t = time.perf_counter()
    n = sum(1 for _ in open_source(path, fmt, "bench", ProblemLog()).passages())
    return time.perf_counter() - t, n


def _time_ingest(path: Path, fmt: str, work: Path, run: int) -> tuple[float, int]:
    from ...corpus.ingest import ingest_source

    with PassageStore.open(work / f"run{run}-{fmt}" / "passages.db", create=True) as store:
        t = time.perf_counter()
        report = ingest_source(store, path, fmt)
        return time.perf_counter() - t, report.added


def measure(path: Path, fmt: str, work: Path, repeats: int) -> dict:
    parse = [_time_parse(path, fmt) for _ in range(repeats)]
    ingest = [_time_ingest(path, fmt, work, r) for r in range(repeats)]
    parse_s = statistics.median(t for t, _ in parse)
    ingest_s = statistics.median(t for t, _ in ingest)
    passages = ingest[0][1]
    return {"format": fmt, "passages": passages, "parse_s": round(parse_s, 3), "ingest_s": round(ingest_s, 3),
            "parse_passages_per_s": round(parse[0][1] / parse_s), "ingest_passages_per_s": round(passages / ingest_s),
            "store_overhead": round(ingest_s / parse_s, 2)}


_RSS_CHILD = """
import sys
from searchain.config import AppPaths, Settings
from searchain.corpus.manager import CorpusManager
# one process (no parsing workers), so that its own peak is the ingest's
report = CorpusManager(AppPaths.resolve(sys.argv[1]).ensure(), Settings()).add("w", sys.argv[2], "mediawiki",
                                                                          workers=1)
peak = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(report.added, peak)
"""


def measure_rss(sizes: list[int], work: Path) -> list[dict]:
    """Peak RSS of ingesting a generated dump of each size, in a fresh process each."""
    import os
    import subprocess
    import sys

    out = []
    repo = str(source_root())
    for n in sizes:
        dump = make_dump(work / f"w{n}.xml.bz2", max(1, n // 5), random.Random(n))
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(work / f"home{n}"), str(dump)],
                              capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": repo})
        added, peak = (int(x) for x in done.stdout.split()[-2:])
        out.append({"passages": added, "peak_rss_bytes": peak, "seconds": round(time.perf_counter() - t, 1),
                    "dump_bytes": dump.stat().st_size})
        dump.unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rss-sizes", default="", help="e.g. 20000,100000,400000 (see above)")
    args = parser.parse_args(argv)
    if args.rss_sizes:
        with tempfile.TemporaryDirectory() as tmp:
            sizes = [int(x) for x in args.rss_sizes.split(",") if x.strip()]
            print(json.dumps({"benchmark": "ingest-rss", "results": measure_rss(sizes, Path(tmp))}))
        return 0
    rng = random.Random(0)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results["tsv"] = measure(make_tsv(work / "p.tsv", args.passages, rng), "tsv", work, args.repeats)
        dump = make_dump(work / "w.xml.bz2", max(1, args.passages // 5), rng)
        results["mediawiki"] = measure(dump, "mediawiki", work, args.repeats)
        for fmt, rel in (("musique", "musique/dev_200.jsonl"), ("hotpotqa", "hotpotqa/dev_500.jsonl")):
            if (EVAL / rel).exists():
                results[fmt] = measure(EVAL / rel, fmt, work, args.repeats)
    print(json.dumps({"benchmark": "corpus-ingest", "repeats": args.repeats, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
