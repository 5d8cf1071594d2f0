"""Measure the LLM reader on MuSiQue's single-hop steps: does it return a short span of the passage
that holds the gold answer, and is its confidence above θ only when it does? (issue #23 item 2)

Each MuSiQue decomposition step is a one-hop question (``#1`` replaced by the earlier step's gold
answer) with its supporting paragraph and gold answer: exactly what SearChain's reader sees for a
node. Usage (a real GGUF; nothing is downloaded):

    python -m searchain.bench.reader_spans --model PATH.gguf [--steps 40] [--baseline OLD.py]

``--baseline`` loads another version of ``searchain/reader/llm_reader.py`` (e.g. from
``git show REV:searchain/reader/llm_reader.py``) and measures it on the same steps, same model.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

from ..eval.datasets import SHARED_EVAL_DIR

DEFAULT_DATA = SHARED_EVAL_DIR / "musique" / "dev_200.jsonl"


def musique_steps(path: Path, limit: int) -> list[tuple[str, str, str, list[str]]]:
    """(question, title, passage, gold answers) for the first ``limit`` answerable steps."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            golds = [s["answer"] for s in record["question_decomposition"]]
            for step in record["question_decomposition"]:
                support = step.get("paragraph_support_idx")
                if support is None:
                    continue
                question = step["question"]
                for k, answer in enumerate(golds, start=1):
                    question = question.replace(f"#{k}", answer)
                question = question.replace(" >> ", " ")
                para = record["paragraphs"][support]
                out.append((question, para["title"], para["paragraph_text"], [step["answer"]]))
                if len(out) >= limit:
                    return out
    return out


def load_reader_module(source: Path | None):
    if source is None:
        from searchain.reader import llm_reader

        return llm_reader
    spec = importlib.util.spec_from_file_location("searchain.reader._baseline_llm_reader", source)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "searchain.reader"
    spec.loader.exec_module(module)
    return module


class _Counted:
    """The model, with the prompt tokens of its calls added up (sent / evaluated)."""

    def __init__(self, llm):
        self.llm, self.prompt, self.evaluated = llm, 0, 0

    def chat(self, *args, **kwargs):
        out = self.llm.chat(*args, **kwargs)
        self.prompt += out.usage.prompt_tokens
        self.evaluated += out.usage.prompt_tokens_evaluated
        return out

    def __getattr__(self, name):
        return getattr(self.llm, name)


def measure(reader, steps, threshold: float) -> dict:
    from searchain.metrics import cover_em, token_f1

    counted = reader.llm = _Counted(reader.llm)
    rows = []
    for question, title, passage, golds in steps:
        started = time.perf_counter()
        result = reader.read(question, title, passage)
        seconds = time.perf_counter() - started
        assert result.answer == passage[result.start:result.end]
        rows.append({"answer": result.answer, "confidence": result.confidence, "seconds": seconds,
                     "cover": cover_em(result.answer, golds) if result.answer else 0.0,
                     "f1": token_f1(result.answer, golds) if result.answer else 0.0,
                     "gold": golds[0], "question": question})
    n = len(rows)
    above = [r for r in rows if r["confidence"] > threshold]
    answered = [r for r in rows if r["answer"]]
    return {
        "steps": n,
        "answered": len(answered) / n,
        "gold_in_span": sum(r["cover"] for r in rows) / n,
        "f1": sum(r["f1"] for r in rows) / n,
        "median_span_words": statistics.median([len(r["answer"].split()) for r in answered]) if answered else 0,
        "above_theta": len(above) / n,
        "above_theta_correct": (sum(r["cover"] for r in above) / len(above)) if above else 0.0,
        "median_seconds": statistics.median(r["seconds"] for r in rows),
        "prompt_tokens_per_step": counted.prompt / n,
        "evaluated_tokens_per_step": counted.evaluated / n,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--baseline", default=None, help="another llm_reader.py to compare")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sentences", type=int, default=0,
                        help="the current reader reads only this many sentences of each passage (0: all)")
    parser.add_argument("--out", default=None, help="write per-step rows as JSON here")
    args = parser.parse_args(argv)

    from searchain.config import LLMSettings
    from searchain.llm.llama.llama_cpp_backend import LlamaCppLLM

    steps = musique_steps(Path(args.data), args.steps)
    llm = LlamaCppLLM(LLMSettings(model_path=args.model, n_ctx=2048, n_threads=args.threads,
                                  n_batch=512, n_gpu_layers=0))
    report = {}
    versions = [("baseline", Path(args.baseline))] if args.baseline else []
    for name, source in versions + [("current", None)]:
        module = load_reader_module(source)
        extra = {"sentences": args.sentences} if source is None and args.sentences else {}
        reader = module.LLMReader(llm, threshold=0.5, **extra)
        report[name] = measure(reader, steps, 0.5)
        summary = {k: (round(v, 3) if isinstance(v, float) else v)
                   for k, v in report[name].items() if k != "rows"}
        print(name, json.dumps(summary), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
    llm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
