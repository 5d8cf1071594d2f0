"""``searchain bench ...``: each benchmark module under ``searchain.bench`` registers itself."""

from __future__ import annotations

import importlib

BENCH_MODULES = ("retrieval", "index", "ingest", "llm", "grammar", "engine", "store", "embed", "cluster",
                 "bundle", "scale", "strategies")


def register(sub) -> None:
    parser = sub.add_parser("bench", help="run a benchmark and print one JSON object")
    bench_sub = parser.add_subparsers(dest="bench", metavar="BENCHMARK")
    for name in BENCH_MODULES:
        module = importlib.import_module(f"searchain.bench.{name}")
        module.register(bench_sub)
