"""Synthetic Wikipedia-like corpora for ``searchain bench scale``: text, gold passages, vectors.

**Text.** Passages of ~100 words drawn from a Zipfian vocabulary (word of rank r has probability
~ 1/r, as in natural text). The ranks are real English: the words of the MuSiQue and HotpotQA
paragraphs ordered by their frequency there, followed by a synthetic tail (``zq<n>``) up to
``VOCABULARY`` words. So a query term such as "county" or "film" has a posting list as long
as a word of its rank would have in an encyclopedia of that size, which is what decides how
fast BM25 is; the eval sets' real paragraphs (every gold passage of their questions) are
stored too, so the real multi-hop queries find what they ask for.

**Vectors.** The clustered mixture of ``bench/ann/hnsw_bench.py`` (100 topics x 100 sub-centres,
power-law spectrum), generated in blocks with a seed per block, so any block can be made
again without the ones before it: generation resumes after a kill, and the exact search that
gives the ground truth streams over the shards instead of holding them.

Everything is deterministic in ``seed``: the same N gives the same corpus on any machine.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterator

import numpy as np

from ...eval.datasets import SHARED_EVAL_DIR

VOCABULARY = 1_000_000  # distinct words: a Wikipedia-sized vocabulary (real words + tail)
WORDS_PER_PASSAGE = 100
BLOCK = 4096  # passages (and vectors) per generated block; = the builder's shard size
EVAL_FILES = ("musique/dev_200.jsonl", "hotpotqa/dev_500.jsonl")


def eval_dir() -> Path:
    return SHARED_EVAL_DIR


def load_eval_sets(folder: Path | None = None):
    """The MuSiQue and HotpotQA datasets found in ``folder`` (``../shared/eval``)."""
    from ...eval.datasets import load_dataset

    folder = folder or eval_dir()
    return [load_dataset(folder / rel) for rel in EVAL_FILES if (folder / rel).exists()]


def gold_paragraphs(datasets) -> list[tuple[str, str]]:
    """``(title, text)`` of every paragraph of the eval sets, deduplicated."""
    from ...eval.datasets import pooled_paragraphs

    seen, out = set(), []
    for ds in datasets:
        for p in pooled_paragraphs(ds):
            if (p.title, p.text) not in seen:
                seen.add((p.title, p.text))
                out.append((p.title, p.text))
    return out


def multihop_queries(datasets) -> list[str]:
    """The real multi-hop queries: every question, and every MuSiQue decomposition step."""
    out: list[str] = []
    for ds in datasets:
        for q in ds.questions:
            out.append(q.question)
            out += [s.query for s in q.steps if s.query.strip()]
    return list(dict.fromkeys(out))


class ZipfText:
    """Draws passages and titles from the Zipfian vocabulary described in the module docstring."""

    def __init__(self, paragraphs: list[tuple[str, str]], seed: int = 0):
        from ...index.bm25.query import tokenize

        counts = Counter(w for title, text in paragraphs for w in tokenize(f"{title} {text}"))
        real = [w for w, _ in counts.most_common()]
        tail = [f"zq{i}" for i in range(max(0, VOCABULARY - len(real)))]
        self.words = np.array(real + tail, dtype=object)
        weights = 1.0 / np.arange(1, len(self.words) + 1)
        self.cdf = np.cumsum(weights / weights.sum())
        self.seed = seed

    def block(self, index: int, n: int) -> list[tuple[str, str]]:
        """Block ``index`` of ``n`` ``(title, text)`` passages (the same for the same index)."""
        rng = np.random.default_rng([self.seed, 1, index])
        lengths = rng.integers(WORDS_PER_PASSAGE * 3 // 4, WORDS_PER_PASSAGE * 5 // 4, n)
        ranks = np.minimum(np.searchsorted(self.cdf, rng.random(int(lengths.sum()))), len(self.words) - 1)
        words = self.words[ranks]
        title_ranks = rng.integers(100, min(len(self.words), 200_000), (n, 2))
        out, pos = [], 0
        for i, length in enumerate(lengths):
            text = " ".join(words[pos:pos + length])
            pos += length
            title = " ".join(str(w).capitalize() for w in self.words[title_ranks[i]])
            out.append((title, text + "."))
        return out


class ClusteredVectors:
    """Blocks of the clustered synthetic vectors (see the module docstring)."""

    def __init__(self, dim: int = 384, seed: int = 0):
        from ..ann.hnsw_bench import clustered_vectors

        self.dim = dim
        self.seed = seed
        _, self.centres = clustered_vectors(1, dim, np.random.default_rng([seed, 2]))

    def block(self, index: int, n: int) -> np.ndarray:
        from ..ann.hnsw_bench import clustered_vectors

        vectors, _ = clustered_vectors(n, self.dim, np.random.default_rng([self.seed, 3, index]),
                                       centres=self.centres)
        return vectors

    def queries(self, n: int) -> np.ndarray:
        from ..ann.hnsw_bench import clustered_vectors

        vectors, _ = clustered_vectors(n, self.dim, np.random.default_rng([self.seed, 4]),
                                       centres=self.centres)
        return vectors


def exact_top_k_streamed(blocks: Iterator[tuple[np.ndarray, np.ndarray]], queries: np.ndarray,
                         k: int) -> np.ndarray:
    """Exact top-``k`` ids by inner product over ``(ids, vectors)`` blocks, holding one block."""
    best_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_i = np.full((len(queries), k), -1, dtype=np.int64)
    for ids, vectors in blocks:
        sims = queries @ np.asarray(vectors, dtype=np.float32).T
        kk = min(k, sims.shape[1])
        top = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
        cand_s = np.concatenate([best_s, np.take_along_axis(sims, top, 1)], axis=1)
        cand_i = np.concatenate([best_i, ids[top]], axis=1)
        order = np.argsort(-cand_s, axis=1, kind="stable")[:, :k]
        best_s, best_i = np.take_along_axis(cand_s, order, 1), np.take_along_axis(cand_i, order, 1)
    return best_i
