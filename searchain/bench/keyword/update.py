"""``searchain bench keyword-update``: the tantivy keyword index after a corpus update, extended
(``index/bm25/tantivy_update.extend``) against built anew over the same passages, in the same run.

A store of generated Wikipedia-like articles (``bench.ingest.articles``) gets its index; then a
share of the articles is replaced (their passages deleted, new passages added, as ``corpus
update`` does with changed articles) and the index is brought up to date both ways. Reported:
seconds of each (wall and CPU), and how far the extended index's answers are from the fresh
one's on queries of two to four of the corpus's words: top-10 overlap, the share of the fresh
index's hits scoring clearly (1 % of the best) above its 10th that the extended one also returns,
and the largest score change as a share of the query's best score.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("keyword-update", help="tantivy keyword index after an update: extended vs "
                       "rebuilt, same run")
    p.add_argument("--articles", type=int, default=20_000, help="generated articles (default 20000)")
    p.add_argument("--changed-share", type=float, default=0.01,
                   help="share of the articles replaced (default 0.01)")
    p.add_argument("--queries", type=int, default=200, help="queries compared (default 200)")
    p.add_argument("--work", metavar="DIR", help="keep the store here (default: a temp folder)")
    p.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from ..workdir import in_work_folder

    print(json.dumps(in_work_folder(args.work, "searchain-bench-kwupdate-",
                                    lambda work: measure(work, args)), indent=2))
    return 0


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> dict:
    wall, cpu = _clock()
    return {"wall_s": round(wall - start[0], 3), "cpu_s": round(cpu - start[1], 3)}


def measure(work: Path, args) -> dict:
    from ...corpus.ingest import ingest_source
    from ...corpus.store import PassageStore
    from ...index.bm25 import tantivy_index as tv
    from ...types import Passage
    from ..ingest.articles import make_parquet

    rng = random.Random(5)
    source = make_parquet(work / "articles.parquet", args.articles, seed=3)
    store = PassageStore.open(work / "c" / "passages.db", create=True, corpus="bench")
    ingest_source(store, source, "parquet")
    path = tv.index_dir(store.path)
    start = _clock()
    tv.build(store.conn, path)
    first = _since(start)
    docs = [r[0] for r in store.conn.execute("SELECT DISTINCT doc_id FROM passages")]
    changed = rng.sample(docs, max(1, int(len(docs) * args.changed_share)))
    old = {}
    for doc in changed:
        old[doc] = store.document(doc)
    store.delete(p.pid for doc in changed for p in old[doc])
    store.add([Passage("bench", p.pid, p.title, p.text + " revised", p.source, p.doc_id, p.start, p.end)
               for doc in changed for p in old[doc]])
    start = _clock()
    stamp = tv.ensure_current(store, 2.0, min_passages=0)
    extended = _since(start)
    fresh = work / "fresh.tantivy"
    start = _clock()
    tv.build(store.conn, fresh)
    rebuilt = _since(start)
    words = [w for (t,) in store.conn.execute("SELECT text FROM passages ORDER BY random() LIMIT ?",
                                              (args.queries,)) for w in [t.split()]]
    queries = [rng.sample(ws, min(len(ws), rng.randint(2, 4))) for ws in words if ws]
    a, b = tv.TantivySearcher(path), tv.TantivySearcher(fresh)
    overlap, clear, drift = [], [], 0.0
    for q in queries:
        x, y = a.scores(q, 10, idf_power=1.0), b.scores(q, 10, idf_power=1.0)
        if not y:
            continue
        got = {i for i, _ in x}
        overlap.append(len(got & {i for i, _ in y}) / len(y))
        # hits scoring clearly above the 10th (ties at the cut are ordered by segment address,
        # which differs between the two indexes)
        cut = y[-1][1] + 0.01 * y[0][1]
        above = [i for i, s in y if s > cut]
        clear.extend(i in got for i in above)
        by_id = {i: s for i, s in a.scores(q, 1000, idf_power=1.0)}
        drift = max([drift] + [abs(by_id[i] - s) / y[0][1] for i, s in y if i in by_id and y[0][1] > 0])
    return {"benchmark": "keyword-update", "passages": store.count(), "articles": len(docs),
            "articles_changed": len(changed), "passages_replaced": sum(len(v) for v in old.values()),
            "extended_not_rebuilt": "built_with" in (stamp or {}), "first_build": first,
            "extend": extended, "rebuild": rebuilt,
            "extend_vs_rebuild_wall": round(extended["wall_s"] / rebuilt["wall_s"], 3),
            "queries": len(overlap), "top10_overlap_mean": round(sum(overlap) / max(1, len(overlap)), 4),
            "top10_identical_share": round(sum(o == 1.0 for o in overlap) / max(1, len(overlap)), 4),
            "clear_hits_kept": round(sum(clear) / max(1, len(clear)), 4), "clear_hits": len(clear),
            "max_score_change_of_top": round(drift, 4)}
