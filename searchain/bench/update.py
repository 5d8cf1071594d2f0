"""``searchain bench update``: a corpus update against making the corpus anew, in the same run
(#34: re-sync of a 1,000-file folder with 10 files changed; #33: a snapshot where 1 % of the
articles changed; goal for both: <= 5 % of a full ingest and index).

Both sides use the same loaded embedding model (the configured one, MiniLM by default, with no
second model), so the model's load is in neither figure and the embedding cost is real. The
update side is timed from the plan to the extended index: scan or read, compare, store, embed,
index.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import replace
from pathlib import Path

GOAL = 0.05
_WORDS = ("river mountain city music physics bread violin comet glacier harbour orchard lantern "
          "falcon meadow copper saffron engine village treaty island market bridge castle "
          "painter novel station garden forest desert ocean valley railway temple festival").split()


def register(sub) -> None:
    p = sub.add_parser("update", help="corpus update (folder re-sync, newer snapshot) vs making "
                       "the corpus anew, same run")
    p.add_argument("--case", choices=("folder", "snapshot", "both"), default="both")
    p.add_argument("--files", type=int, default=1000, help="files in the folder (default 1000)")
    p.add_argument("--changed-files", type=int, default=10, help="files changed (default 10)")
    p.add_argument("--articles", type=int, default=2000, help="articles in the dump (default 2000)")
    p.add_argument("--changed-share", type=float, default=0.01,
                   help="share of articles changed in the newer dump (default 0.01)")
    p.add_argument("--words", type=int, default=250, help="words per file or article (default 250)")
    p.add_argument("--work", metavar="DIR", help="keep the corpora here (default: a temp folder)")
    p.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from ..index.embed.embedder import Embedder
    from .workdir import in_work_folder

    settings = replace(ctx.settings, retrieval=replace(ctx.settings.retrieval, second_embedder=""))
    embedder = Embedder.for_settings(settings.retrieval, models_dir=ctx.paths.models_dir)
    _ = embedder.dim  # loaded before any clock starts

    def measure(work: Path) -> dict:
        out = {"benchmark": "update", "embedder": embedder.model_id,
               "device": embedder.effective_device, "precision": embedder.effective_precision,
               "goal_ratio": GOAL}
        if args.case in ("folder", "both"):
            out["folder"] = _folder_case(work / "folder", settings, embedder, args)
        if args.case in ("snapshot", "both"):
            out["snapshot"] = _snapshot_case(work / "snapshot", settings, embedder, args)
        return out

    print(json.dumps(in_work_folder(args.work, "searchain-bench-update-", measure), indent=2))
    return 0


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _home(folder: Path):
    from ..config import AppPaths

    return AppPaths.resolve(folder / "home").ensure()


def _full(paths, settings, name: str, source: Path, embedder) -> tuple[float, int]:
    from ..corpus.manager import CorpusManager
    from ..index.build.builder import build_index

    started = time.perf_counter()
    CorpusManager(paths, settings).add(name, source)
    built = build_index(paths, settings, name, embedder=embedder)
    return time.perf_counter() - started, built.total


def _update(paths, settings, name: str, source, embedder) -> tuple[float, object]:
    from ..library.update import plan_update, update_and_index

    started = time.perf_counter()
    plan_update(paths, settings, name, source, embedder=embedder)
    report = update_and_index(paths, settings, name, source, embedder=embedder)
    return time.perf_counter() - started, report


def _row(full_s: float, passages: int, update_s: float, report) -> dict:
    return {"passages": passages, "full_s": round(full_s, 2), "update_s": round(update_s, 3),
            "ratio": round(update_s / full_s, 4), "met": update_s / full_s <= GOAL,
            "unchanged": report.unchanged, "changed": report.changed, "added": report.added,
            "removed": report.removed, "passages_embedded": report.passages_embedded,
            "passages_kept": report.passages_kept, "update_corpus_s": round(report.seconds, 3),
            "update_index_s": round(report.index.get("total_s", 0.0), 3)}


def _folder_case(folder: Path, settings, embedder, args) -> dict:
    rng = random.Random(34)
    docs = folder / "docs"
    for i in range(args.files):
        sub = docs / f"part{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note{i:04d}.md").write_text(f"# Note {i}\n\n{_text(rng, args.words)}\n", encoding="utf-8")
    paths = _home(folder)
    full_s, passages = _full(paths, settings, "docs", docs, embedder)
    changed = rng.sample(range(args.files), args.changed_files)
    for i in changed:
        (docs / f"part{i % 10}" / f"note{i:04d}.md").write_text(
            f"# Note {i}, revised\n\n{_text(rng, args.words)}\n", encoding="utf-8")
    update_s, report = _update(paths, settings, "docs", None, embedder)
    return {"files": args.files, "changed_files": args.changed_files,
            "reread_only_changed": report.changed == args.changed_files and report.added == 0,
            **_row(full_s, passages, update_s, report)}


def _snapshot_case(folder: Path, settings, embedder, args) -> dict:
    from xml.sax.saxutils import escape

    rng = random.Random(33)
    folder.mkdir(parents=True, exist_ok=True)
    bodies = {i: _text(rng, args.words) for i in range(1, args.articles + 1)}

    def write(path: Path, bodies: dict[int, str]) -> Path:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n')
            for i, body in bodies.items():
                text = (f"'''Article {i}''' is a [[thing|topic]] of {body[:60]}.{{{{cite web|url=x}}}}\n\n"
                        f"== History ==\n{body}\n\n== References ==\n* A book. ISBN 0\n")
                fh.write(f"<page><title>Article {i}</title><ns>0</ns><id>{i}</id><revision><id>9{i}"
                         f"</id><text xml:space=\"preserve\">{escape(text)}</text></revision></page>\n")
            fh.write("</mediawiki>\n")
        return path

    paths = _home(folder)
    full_s, passages = _full(paths, settings, "wiki", write(folder / "dump-1.xml", bodies), embedder)
    changed = rng.sample(sorted(bodies), max(1, round(args.changed_share * args.articles)))
    for i in changed:
        bodies[i] = _text(rng, args.words)
    update_s, report = _update(paths, settings, "wiki", write(folder / "dump-2.xml", bodies), embedder)
    return {"articles": args.articles, "changed_articles": len(changed),
            **_row(full_s, passages, update_s, report)}
