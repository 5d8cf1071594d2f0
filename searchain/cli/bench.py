"""``searchain bench ...``: each benchmark module under ``searchain.bench`` registers itself."""

from __future__ import annotations

import importlib

# Modules under ``searchain.bench``, each with ``register(sub)``; a benchmark with helper modules
# of its own has a folder, and its command module is named here.
BENCH_MODULES = ("retrieval", "ann.hnsw_bench", "ingest.command", "decoding.llm", "decoding.grammar", "engine",
                 "store", "embed", "discovery", "cluster", "bundle", "scale.command", "strategies", "wikitext",
                 "documents.command", "decoding.server", "update", "loop", "decoding.lookup", "keyword.update",
                 "warmup", "decoding.batch", "keyword.build", "keyword.left")


def register(sub) -> None:
    parser = sub.add_parser("bench", help="run a benchmark and print one JSON object")
    bench_sub = parser.add_subparsers(dest="bench", metavar="BENCHMARK")
    for name in BENCH_MODULES:
        module = importlib.import_module(f"searchain.bench.{name}")
        module.register(bench_sub)
