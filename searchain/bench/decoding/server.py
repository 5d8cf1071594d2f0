"""``searchain bench server --model PATH [--json]``: the same GGUF answering in this process and
through llama-cpp-python's OpenAI-compatible server on loopback.

The server (``python -m llama_cpp.server``) is started on a free 127.0.0.1 port with the same
context, threads, batch and GPU layers as the in-process backend (``llm.isolation = inprocess``).
Speed: the same chat turn (an essay, so every run reaches the limit), greedy, ``--tokens``
tokens, in rotating order, ``--repeats`` times; the in-process backend and the server streamed
(as the app asks), and the server in one JSON reply (``server_plain``); the prompt stays cached
on both sides, as in a conversation. ``server_vs_inprocess`` is the ratio of tokens per second
(1.0: the server costs nothing; < 1: slower). The loop: each demo question in each ``--modes``
answered by both over the demo corpus (BM25, so both read the same passages), greedily with the
same seed; ``identical`` says whether every answer (final text, nodes, references) came out the
same. Prints ONE JSON object.
"""

from __future__ import annotations

import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

# A chat turn a small model answers at length, so that every run reaches --tokens.
ESSAY = [{"role": "user", "content": "Write a long, detailed essay on the history of Paris, from "
                                     "the Roman town of Lutetia to the present day."}]


def register(sub) -> None:
    p = sub.add_parser("server", help="a GGUF in-process vs through llama-cpp-python's server: "
                                      "tokens/s and the loop's answers")
    p.add_argument("--model", required=True, help="a GGUF file")
    p.add_argument("--json", action="store_true", help="print only the JSON object (default too)")
    p.add_argument("--tokens", type=int, default=128, help="tokens generated per speed run")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per side (after 1 warm-up)")
    p.add_argument("--questions", type=int, default=3, help="demo questions the loop answers")
    p.add_argument("--modes", default="searchain,rag", help="answering modes, comma-separated")
    p.add_argument("--n-ctx", type=int, default=4096)
    p.add_argument("--threads", type=int, default=0, help="0 = llama.cpp's default")
    p.add_argument("--gpu-layers", type=int, default=0, help="for both sides (default 0: the CPU)")
    p.set_defaults(func=run)


def run(ctx, args) -> int:
    print(json.dumps(measure(ctx.paths, ctx.settings, args), indent=2, ensure_ascii=False))
    return 0


def measure(paths, base_settings, args) -> dict:
    from ...llm.llama.llama_cpp_backend import LlamaCppLLM
    from ...llm.loader import load_llm

    llm = replace(base_settings.llm, model_path=str(args.model), backend="llama_cpp",
                  isolation="inprocess", n_ctx=args.n_ctx, n_threads=args.threads,
                  n_gpu_layers=args.gpu_layers, temperature=0.0, seed=0)
    with tempfile.TemporaryDirectory(prefix="searchain-bench-server-") as tmp, \
            _Server(llm, Path(tmp) / "server.log") as url:
        served = replace(llm, backend="openai", server_url=url, server_model="", server_key="",
                         server_grammar="auto", server_family="auto")
        local, remote = LlamaCppLLM(llm), load_llm(served)
        try:
            result = {"model": str(args.model), "server": "llama_cpp.server (llama-cpp-python)",
                      "n_ctx": args.n_ctx, "n_threads": args.threads, "n_gpu_layers": args.gpu_layers}
            result.update(_speed(local, remote, args))
            result["server_family"] = remote.family
            result["server_grammar"] = remote.supports_grammar
            result["loop"] = _loop(paths, base_settings, llm, served, local, remote, args)
        finally:
            local.close()
            remote.close()
    return result


def _speed(local, remote, args) -> dict:
    from ...llm.base import GenerationParams

    params = GenerationParams(max_tokens=args.tokens, temperature=0.0)

    def timed(llm, streamed: bool):
        def go():
            started = time.perf_counter()
            c = llm.chat(ESSAY, params, on_token=(lambda _t: None) if streamed else None)
            return time.perf_counter() - started, c.usage.completion_tokens, c.text, c.finish_reason
        return go

    sides = {"inprocess": timed(local, True), "server": timed(remote, True),
             "server_plain": timed(remote, False)}
    names = list(sides)
    for name in names:  # warm-up: weights paged in, graphs built, the prompt cached on both
        sides[name]()
    runs: dict[str, list] = {name: [] for name in names}
    for i in range(args.repeats):  # rotate the order: no side always goes first
        for name in names[i % len(names):] + names[:i % len(names)]:
            runs[name].append(sides[name]())
    out: dict = {"tokens_per_run": args.tokens, "repeats": args.repeats}
    for name in names:
        seconds = statistics.median(r[0] for r in runs[name])
        # llama-cpp-python's server reports no usage in a stream (it ignores include_usage), and
        # counting text events misses tokens that end mid-character: the same greedy run's count
        # from its one-JSON reply stands in.
        tokens = runs["server_plain" if name == "server" else name][0][1]
        out[f"{name}_tokens"] = tokens
        out[f"{name}_seconds_median"] = round(seconds, 4)
        out[f"{name}_tokens_per_s"] = round(tokens / seconds, 2) if seconds else 0.0
    for name in ("server", "server_plain"):
        out[f"{name}_vs_inprocess"] = round(out[f"{name}_tokens_per_s"] / out["inprocess_tokens_per_s"], 4) \
            if out["inprocess_tokens_per_s"] else 0.0
    out["same_text"] = runs["inprocess"][0][2] == runs["server"][0][2] == runs["server_plain"][0][2]
    out["finish_reasons"] = sorted({r[3] for side in runs.values() for r in side})
    return out


def _loop(paths, base_settings, llm_local, llm_served, local, remote, args) -> dict:
    """Each demo question in each mode through both models; the answers compared whole."""
    from ...library import DEMO_NAME, demo_questions
    from ...workspace import Workspace

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    questions = demo_questions(limit=args.questions)
    settings = replace(base_settings, active_corpus=DEMO_NAME,
                       retrieval=replace(base_settings.retrieval, retriever="bm25"),
                       # A server's chat API cannot continue a reply, so its chains are written
                       # whole; the in-process side writes them whole too, to compare like with like.
                       reasoning=replace(base_settings.reasoning, reader="llm", chain_steps="whole"))
    workspaces = {}
    for name, llm_settings, model in (("inprocess", llm_local, local), ("server", llm_served, remote)):
        workspace = Workspace(paths, replace(settings, llm=llm_settings))
        workspace._llm = model  # the model already loaded for the speed runs: no second copy
        workspaces[name] = workspace
    for workspace in workspaces.values():  # the demo corpus and the embedder, before timing
        workspace.retriever(DEMO_NAME)
        workspace.embedder()
    compared, differences, seconds = 0, [], {"inprocess": 0.0, "server": 0.0}
    for mode in modes:
        for question in questions:
            answers = {}
            for name, workspace in workspaces.items():
                started = time.perf_counter()
                answers[name] = _comparable(workspace.answer(question, mode=mode))
                seconds[name] += time.perf_counter() - started
            compared += 1
            if answers["inprocess"] != answers["server"]:
                differences.append({"mode": mode, "question": question,
                                    "fields": sorted(k for k in answers["inprocess"]
                                                     if answers["inprocess"][k] != answers["server"].get(k)),
                                    "inprocess": answers["inprocess"]["final_content"],
                                    "server": answers["server"]["final_content"]})
    return {"modes": modes, "questions": len(questions), "answers_compared": compared,
            "identical": not differences, "identical_count": compared - len(differences),
            "inprocess_seconds": round(seconds["inprocess"], 2), "server_seconds": round(seconds["server"], 2),
            "differences": differences}


def _comparable(result) -> dict:
    """What an answer says, without its timing; confidences rounded (they cross HTTP as decimals)."""
    nodes = [node for branch in result.branches for node in branch.nodes] or list(result.path)
    return {
        "final_content": result.final_content, "answer": result.answer,
        "stop_reason": result.stop_reason, "rounds": result.rounds,
        "nodes": [(n.query, n.llm_answer, n.reader_answer, n.decision,
                   None if n.confidence is None else round(n.confidence, 4)) for n in nodes],
        "references": [(r.mark, r.passage.pid, r.span) for r in result.references],
        "completion_tokens": result.completion_tokens,
    }


class _Server:
    """``python -m llama_cpp.server`` on a free loopback port, for the run's duration."""

    def __init__(self, llm, log: Path):
        self.llm, self.log = llm, log

    def __enter__(self) -> str:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        args = [sys.executable, "-m", "llama_cpp.server", "--model", self.llm.model_path,
                "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(self.llm.n_ctx),
                "--n_batch", str(self.llm.n_batch), "--n_gpu_layers", str(self.llm.n_gpu_layers)]
        if self.llm.n_threads:
            args += ["--n_threads", str(self.llm.n_threads)]
        self._log = self.log.open("wb")
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._log.close()
                from ...errors import ModelError

                raise ModelError(f"llama_cpp.server exited with {self.proc.returncode}: "
                                 f"{self.log.read_text(errors='replace')[-500:]}",
                                 hint="Is llama-cpp-python[server] installed (fastapi, uvicorn)?")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return f"http://127.0.0.1:{port}/v1"
            except OSError:
                time.sleep(0.1)
        self.__exit__()
        raise TimeoutError("llama_cpp.server did not start listening within 300 s")

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
