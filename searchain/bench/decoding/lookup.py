"""``searchain bench lookup``: decode speed with prompt-lookup drafts against plain decoding.

    searchain bench lookup --model M.gguf --dataset ../shared/eval/hotpotqa/dev_500.jsonl --limit 3 --drafts 0,4,8

For each of the first N questions, the two calls that copy from passages: the final answer (RAG's
prompt over the question's supporting paragraphs, free text) and the LLM reader (the first
supporting paragraph, span grammar, log-probabilities); with ``--draft-model``, also the chain's
first round (the CoQ prompt and grammar), decoded by a second instance of the model with that
draft model. Each call runs once per ``--drafts`` value (and draft model), interleaved, on one in-process model with its prompt already in the KV cache (a
one-token call first), so the seconds are decoding only. Reports per call kind and draft size:
completion tokens, decode seconds and tokens/s, tokens drafted and accepted, the speed-up over
``0`` (plain decoding), and whether every output was token for token the same as plain decoding's.
"""

from __future__ import annotations

import json

from ...errors import ConfigError


def register(sub) -> None:
    p = sub.add_parser("lookup", help="decode tokens/s with prompt-lookup drafts vs plain (reader, final answer)")
    p.add_argument("--dataset", required=True, help="HotpotQA JSON-lines file (../shared/eval/hotpotqa/...)")
    p.add_argument("--model", metavar="MODEL", help="a GGUF file, or a name from `models list [--all]` (default: the configured one)")
    p.add_argument("--limit", type=int, default=3, help="first N questions (default 3)")
    p.add_argument("--drafts", default="0,4,8", help="draft sizes to compare, 0 first (default 0,4,8)")
    p.add_argument("--draft-model", metavar="PATH",
                   help="also decode with this draft model (same family; its own model instance), "
                        "and add the chain's first round (CoQ grammar) to the calls")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="llama.cpp threads (default: llm.n_threads); on a busy shared CPU 1 decodes fastest")
    p.add_argument("--json", action="store_true", help="(always JSON; accepted for symmetry)")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    if args.model:
        from ...llm.models.locate import model_option

        args.model = model_option(args.model, ctx.paths, ctx.settings.llm)
    print(json.dumps(run(ctx.settings, args), indent=2))
    return 0


def _passages(record: dict):
    from ...types import Passage

    contexts = [c for c in record["contexts"] if c.get("is_supporting")] or record["contexts"][:1]
    return [Passage(pid=str(i), corpus="bench", title=c["title"], text=c["paragraph_text"])
            for i, c in enumerate(contexts[:3])]


def run(settings, args) -> dict:
    import dataclasses
    import time

    from ...llm.base import GenerationParams
    from ...llm.llama.llama_cpp_backend import LlamaCppLLM
    from ...reader.llm_reader import LLMReader
    from ...reasoning.chain.grammar import coq_grammar
    from ...reasoning.chain.prompts import PromptBook, detect_task

    drafts = [int(d) for d in args.drafts.split(",") if d.strip()]
    if not drafts or drafts[0] != 0 or any(d < 0 for d in drafts):
        raise ConfigError("--drafts must start with 0 (plain decoding, the baseline), e.g. 0,4,8.")
    if args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}.")
    llm_settings = dataclasses.replace(settings.llm, model_path=args.model or settings.llm.model_path)
    if args.threads is not None:
        llm_settings = dataclasses.replace(llm_settings, n_threads=max(0, args.threads))
    with open(args.dataset, encoding="utf-8") as handle:
        records = [json.loads(line) for _, line in zip(range(args.limit), handle)]
    llm = LlamaCppLLM(llm_settings)
    drafting = None
    if getattr(args, "draft_model", None):
        drafting = LlamaCppLLM(dataclasses.replace(llm_settings, draft_model=args.draft_model))
        if drafting.draft_model is None:
            why = drafting.warnings[0].message if drafting.warnings else "it was not loaded"
            drafting.close()
            llm.close()
            raise ConfigError(why)
    variants = [(str(k), llm, k) for k in drafts] + ([("draft-model", drafting, 0)] if drafting else [])
    book, reader = PromptBook(), LLMReader(llm)
    totals: dict[str, dict[str, dict[str, float]]] = {}
    identical = {"final": True, "reader": True, **({"chain": True} if drafting else {})}
    differences: list[dict] = []  # calls whose output differs from plain decoding's, and where
    try:
        for record in records:
            question, passages = record["question_text"], _passages(record)
            calls = [("final", [{"role": "user", "content": book.rag(question, passages)}],
                      GenerationParams(max_tokens=200)),
                     ("reader", reader.messages(question, passages[0].title, passages[0].text),
                      reader.params(passages[0].text))]
            if drafting:
                calls.append(("chain", [{"role": "user", "content": book.coq(question, detect_task(question))}],
                              GenerationParams(max_tokens=llm_settings.max_tokens, grammar=coq_grammar())))
            for kind, messages, params in calls:
                outputs = {}
                for name, model, k in variants:
                    model.prompt_lookup = k
                    model.chat(messages, GenerationParams(max_tokens=1))  # the prompt into the cache
                    started = time.perf_counter()
                    completion = model.chat(messages, params)
                    decode = completion.seconds - completion.prompt_seconds
                    outputs[name] = model.last_generated_tokens()
                    row = totals.setdefault(kind, {}).setdefault(name, dict.fromkeys(
                        ("tokens", "decode_seconds", "drafted", "accepted", "wall_seconds"), 0.0))
                    row["tokens"] += completion.usage.completion_tokens
                    row["decode_seconds"] += decode
                    row["drafted"] += model.drafted
                    row["accepted"] += model.draft_accepted
                    row["wall_seconds"] += time.perf_counter() - started
                identical[kind] &= all(out == outputs["0"] for out in outputs.values())
                for name, out in outputs.items():
                    if out != outputs["0"]:
                        at = next((i for i, (a, b) in enumerate(zip(out, outputs["0"])) if a != b),
                                  min(len(out), len(outputs["0"])))
                        differences.append({"question": record.get("question_id", ""), "call": kind,
                                            "variant": name, "first_different_token": at,
                                            "tokens": len(out), "plain_tokens": len(outputs["0"])})
    finally:
        llm.close()
        if drafting:
            drafting.close()
    report = {}
    for kind, rows in totals.items():
        base = rows["0"]["tokens"] / rows["0"]["decode_seconds"] if rows["0"]["decode_seconds"] else 0.0
        report[kind] = {k: {**{key: round(v, 3) for key, v in row.items()},
                                 "tokens_per_s": round(row["tokens"] / row["decode_seconds"], 3)
                                 if row["decode_seconds"] else 0.0,
                                 "speedup": round(row["tokens"] / row["decode_seconds"] / base, 3)
                                 if row["decode_seconds"] and base else 0.0}
                        for k, row in rows.items()}
    return {"benchmark": "lookup", "model": str(llm_settings.model_path), "questions": len(records),
            "n_threads": llm_settings.n_threads, "identical_to_plain": identical, "differences": differences, "calls": report}
