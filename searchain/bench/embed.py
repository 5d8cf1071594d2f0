"""``searchain bench embed``: embedding throughput of the index build, against bare
``SentenceTransformer.encode`` in the same run, on the CPU or a CUDA GPU.

For each ``--model`` (default: the configured embedder and second embedder, or both packaged
ones), on ``--device`` (``retrieval.embed_device`` by default):

- ``bare_passages_per_s``: ``SentenceTransformer.encode`` of the texts on the same loaded model
  (same weights, same precision, same batch size: the baseline the issue sets);
- ``embedder_passages_per_s``: ``Embedder.encode`` (on a GPU: tokenising ahead on a helper thread);
- ``build_passages_per_s`` (``--build``): the index build's whole embedding stage, passages read
  from a corpus store and checkpoints written (``build_index``'s ``embed_s``);
- ratios of each to bare (1.0 = as fast; > 1 faster), from medians of interleaved repeats;
- ``cosine_vs_fp32_min/mean``: under fp16/bf16, how close the vectors stay to float32 ones.

Texts are Wikipedia-like passages of ``--words`` words (DPR's ``psgs_w100`` split is 100), cut
from the paragraphs of a HotpotQA/MuSiQue file (``--dataset``) or the demo corpus, repeated to
``--passages``. ``--random-weights`` swaps the model's weights for random ones of the same shapes
(its config and tokenizer kept): throughput is the same, and no weights need to travel to a GPU
machine. Prints ONE JSON object.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("embed", help="embedding throughput (CPU or GPU) vs bare SentenceTransformer.encode")
    p.add_argument("--model", action="append", default=[],
                   help="an embedding model name or folder (repeatable; default: the configured ones)")
    p.add_argument("--device", default=None, help="auto | cpu | cuda (default: retrieval.embed_device)")
    p.add_argument("--precision", default=None, help="auto | fp32 | bf16 | fp16 (default: the setting)")
    p.add_argument("--batch-size", type=int, default=0,
                   help="passages per forward pass (default: the device's, see retrieval.*batch_size)")
    p.add_argument("--batch-sweep", default="", help="also time Embedder.encode at these batch sizes, e.g. 64,256,512")
    p.add_argument("--passages", type=int, default=2048)
    p.add_argument("--words", type=int, default=100, help="words per passage")
    p.add_argument("--dataset", default=None, help="a HotpotQA/MuSiQue .jsonl to cut passages from")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--build", action="store_true", help="also time the index build's embedding stage")
    p.add_argument("--random-weights", action="store_true",
                   help="random weights of the same shapes (for throughput where the weights are not)")
    p.add_argument("--json", action="store_true", help="print only the JSON object (default too)")
    p.set_defaults(func=run)


def run(ctx, args) -> int:
    result = measure(ctx, args)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


# -- texts --------------------------------------------------------------------------------------
def wiki_like_texts(n: int, words: int, dataset: str | None) -> list[str]:
    """``n`` passages of ``words`` words, ``title\\ntext`` as the index embeds them, cut in order
    from the source's paragraphs (each article's text split into ``words``-word windows)."""
    articles = _articles(dataset)
    out: list[str] = []
    while len(out) < n:
        for title, text in articles:
            tokens = text.split()
            for start in range(0, max(1, len(tokens)), words):
                out.append(f"{title}\n{' '.join(tokens[start:start + words])}")
                if len(out) == n:
                    return out
    return out


def _articles(dataset: str | None) -> list[tuple[str, str]]:
    if dataset:
        from ..eval.datasets import load_dataset

        from ..eval.datasets import pooled_paragraphs

        arts = [(p.title, p.text) for p in pooled_paragraphs(load_dataset(dataset))]
        # Consecutive paragraphs of one title form one article, as in a Wikipedia dump.
        merged: dict[str, list[str]] = {}
        for title, text in arts:
            merged.setdefault(title, []).append(text)
        return [(t, " ".join(ps)) for t, ps in merged.items()]
    from ..library.demo import demo_articles_dir

    return [(f.stem.replace("_", " "), f.read_text(encoding="utf-8"))
            for f in sorted(demo_articles_dir().rglob("*.md"))]


# -- models -------------------------------------------------------------------------------------
def default_models(ctx) -> list[str]:
    from ..index.embed.second import second_embedder_name

    r = ctx.settings.retrieval
    second = second_embedder_name(r, ctx.paths.models_dir)
    return [r.embedder] + ([second] if second else [])


def random_weight_copy(model_dir: str, dst: Path, seed: int = 0) -> Path:
    """A copy of the sentence-transformers folder ``model_dir`` whose transformer weights are
    random (same config, tokenizer and pooling): same shapes, so the same speed."""
    import shutil

    import torch
    from transformers import AutoConfig, AutoModel

    src = Path(model_dir)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.safetensors", "*.bin", "*.onnx",
                                                             "onnx", "openvino", "*.h5", "*.msgpack"))
    torch.manual_seed(seed)
    model = AutoModel.from_config(AutoConfig.from_pretrained(src))
    model.save_pretrained(dst, safe_serialization=True)
    return dst


def measure(ctx, args) -> dict:
    from ..index.embed.device import cuda_status, resolve_device
    from ..index.embed.embedder import Embedder, resolve_model_path

    r = ctx.settings.retrieval
    device = resolve_device(args.device or r.embed_device)
    texts = wiki_like_texts(args.passages, args.words, args.dataset)
    usable, gpu = cuda_status()
    import torch

    result = {
        "benchmark": "embed", "device": device, "gpu": gpu if usable else None,
        "cpu": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
        "torch": torch.__version__, "passages": len(texts), "words_per_passage": args.words,
        "repeats": args.repeats, "random_weights": bool(args.random_weights), "models": [],
    }
    with tempfile.TemporaryDirectory(prefix="searchain-embed-") as tmp:
        for i, name in enumerate(args.model or default_models(ctx)):
            path = resolve_model_path(name, models_dir=ctx.paths.models_dir)
            if args.random_weights:
                path = str(random_weight_copy(path, Path(tmp) / f"model-{i}"))
            embedder = Embedder(path, device, models_dir=ctx.paths.models_dir,
                                precision=args.precision or r.embed_precision,
                                batch_size=args.batch_size or r.batch_size,
                                gpu_batch_size=args.batch_size or r.gpu_batch_size)
            row = _measure_model(embedder, texts, args, ctx, Path(tmp) / f"home-{i}")
            row["model"] = name
            result["models"].append(row)
            del embedder
            if device.startswith("cuda"):
                torch.cuda.empty_cache()
    return result


def _measure_model(embedder, texts: list[str], args, ctx, home: Path) -> dict:
    model, batch = embedder.model, embedder.batch_size
    from ..index.embed.precision import precision_context

    precision, device = embedder.effective_precision, embedder.effective_device

    def bare() -> float:
        t = time.perf_counter()
        with precision_context(precision, device):
            model.encode(texts, batch_size=batch, convert_to_numpy=True,
                         normalize_embeddings=True, show_progress_bar=False)
        return time.perf_counter() - t

    def ours() -> float:
        t = time.perf_counter()
        embedder.encode(texts)
        return time.perf_counter() - t

    warm = texts[: batch * 2]
    embedder.encode(warm)
    with precision_context(precision, device):
        model.encode(warm, batch_size=batch)
    bare_s, ours_s, build_s = [], [], []
    build = _build_runner(embedder, texts, ctx, home) if args.build else None
    for i in range(max(1, args.repeats)):  # A B, B A, ...: neither side always goes first
        pair = (bare, ours) if i % 2 == 0 else (ours, bare)
        for fn in pair:
            (bare_s if fn is bare else ours_s).append(fn())
        if build is not None:
            build_s.append(build())
    n = len(texts)
    b, o = statistics.median(bare_s), statistics.median(ours_s)
    row = {"dim": embedder.dim, "precision": precision, "batch_size": batch,
           "bare_passages_per_s": round(n / b, 1), "embedder_passages_per_s": round(n / o, 1),
           "embedder_vs_bare": round(b / o, 3)}
    if build_s:
        s = statistics.median(build_s)
        row.update(build_passages_per_s=round(n / s, 1), build_vs_bare=round(b / s, 3))
    if args.batch_sweep:
        sweep = {}
        for size in (int(x) for x in args.batch_sweep.split(",") if x.strip()):
            t = time.perf_counter()
            embedder.encode(texts, batch_size=size)
            sweep[str(size)] = round(n / (time.perf_counter() - t), 1)
        row["batch_sweep_passages_per_s"] = sweep
    if precision != "fp32":
        row.update(_fidelity(embedder, texts[:512]))
    return row


def _build_runner(embedder, texts: list[str], ctx, home: Path):
    """A callable timing ``build_index``'s embedding stage over a corpus holding ``texts``."""
    from dataclasses import replace

    from ..config import AppPaths
    from ..corpus.manager import CorpusManager
    from ..corpus.store import PassageStore
    from ..index.build.builder import build_index
    from ..types import Passage

    paths = AppPaths.resolve(home).ensure()
    settings = replace(ctx.settings, retrieval=replace(ctx.settings.retrieval, second_embedder=""))
    folder = CorpusManager(paths, settings).corpus_dir("bench")
    with PassageStore.open(folder / "passages.db", create=True, corpus="bench") as store:
        store.add(Passage("bench", str(i), t.partition("\n")[0], t.partition("\n")[2])
                  for i, t in enumerate(texts))

    def build() -> float:
        return build_index(paths, settings, "bench", rebuild=True, embedder=embedder).embed_s

    return build


def _fidelity(embedder, texts: list[str]) -> dict:
    """Cosine of the reduced-precision vectors with float32 ones from the same weights."""
    import copy

    import numpy as np

    low = embedder.encode(texts)
    reference = copy.deepcopy(embedder.model).float()
    ref = reference.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True,
                           show_progress_bar=False)
    del reference
    cos = (low * ref).sum(axis=1) / np.linalg.norm(ref, axis=1)
    return {"cosine_vs_fp32_min": round(float(cos.min()), 6), "cosine_vs_fp32_mean": round(float(cos.mean()), 6)}
