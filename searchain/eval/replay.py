"""Replaying only the final step of logged SearChain answers (``searchain eval --replay-final LOG``).

A SearChain question costs about 50 s with a 1.5B model on a 2-core CPU, nearly all of it the
chain; the final answer is one call. To compare final-answer prompts or settings on the same
chains, each logged outcome's path is rebuilt from its compact trace (query, answers, decision,
and the passage, found again in the corpus by id, or by title in logs that predate ids) and only
the final step is asked again under the current settings. The chains being the same, a change in
cover-EM is the final step's alone. With greedy decoding, a replay under the logged settings gives
the logged answers back, which is the check that the path was rebuilt faithfully.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import ConfigError, CorpusError
from ..metrics import cover_em, token_f1
from ..reasoning.parts import locate
from ..reasoning.result import Node
from ..types import Passage
from .compare import pair

PassageLookup = Callable[[dict], "Passage | None"]


def logged_paths(log: Path, mode: str = "searchain") -> list[dict[str, Any]]:
    """The outcomes of ``mode`` in a details log that carry a trace, in log order (a torn last
    line, from a killed run, is skipped)."""
    if not log.is_file():
        raise ConfigError(f"No details log at {log}.", hint="Give the --details file of an earlier `searchain eval`.")
    records = []
    for line in log.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("mode") == mode and isinstance(record.get("trace"), dict):
            records.append(record)
    if not records:
        raise ConfigError(f"{log} holds no {mode} outcome with a trace to replay.",
                          hint=f"Replay a log written by `searchain eval --mode {mode} --details ...`.")
    return records


def store_lookup(store) -> PassageLookup:
    """Find a traced node's passage in ``store`` (a ``PassageStore``): by ``pid`` when the trace
    has it; else by title, preferring the passage that holds the node's answer."""
    def lookup(node: dict) -> Passage | None:
        if node.get("pid"):
            try:
                return store.get(node["pid"])
            except CorpusError:  # a passage deleted since: replayed as unbacked
                return None
        title = node.get("passage")
        if not title:
            return None
        rows = store.conn.execute("SELECT pid FROM passages WHERE title=? LIMIT 20", (title,)).fetchall()
        found = [store.get(pid) for (pid,) in rows]
        answer = (node.get("answer") or "").lower()
        holding = [p for p in found if answer and answer in p.text.lower()]
        return (holding or found or [None])[0]
    return lookup


def rebuild_path(trace: dict, lookup: PassageLookup) -> list[Node]:
    """The verified path of a compact trace, as ``Node``s the final step can read."""
    nodes = []
    for position, item in enumerate(trace.get("path") or []):
        passage = lookup(item)
        answer = item.get("answer") or ""
        nodes.append(Node(
            round=1, position=position, query=item.get("query") or "", llm_answer=item.get("llm"),
            unsolved=item.get("llm") is None, reader_answer=item.get("reader"),
            decision=item.get("decision") or "", source=item.get("source") or "", passage=passage,
            span=locate(answer, passage.text) if passage is not None and answer else None))
    return nodes


def replay_final(records: Iterable[dict], rewrite: Callable[[str, list[Node]], str], *,
                 lookup: PassageLookup, on_progress: Callable[[int, dict], None] | None = None) -> dict[str, Any]:
    """Ask ``rewrite(question, path)`` (the new short answer) for every record; report both sides.

    Returns the logged and replayed cover-EM, the paired split (both right, only one, neither)
    with its exact McNemar p-value, and one row per question."""
    rows = []
    for done, record in enumerate(records, start=1):
        golds = record.get("golds") or []
        prediction = rewrite(record["question"], rebuild_path(record["trace"], lookup))
        rows.append({"id": record.get("id"), "question": record["question"], "golds": golds,
                     "logged": record.get("prediction", ""), "logged_cover_em": float(record.get("cover_em", 0.0)),
                     "prediction": prediction, "cover_em": cover_em(prediction, golds),
                     "f1": token_f1(prediction, golds)})
        if on_progress is not None:
            on_progress(done, rows[-1])
    n = len(rows)
    paired = pair("logged", "replayed", {i: r["logged_cover_em"] >= 1.0 for i, r in enumerate(rows)},
                  {i: r["cover_em"] >= 1.0 for i, r in enumerate(rows)})
    return {
        "questions": n,
        "logged_cover_em": (paired.both_right + paired.only_a_right) / n if n else 0.0,
        "replayed_cover_em": (paired.both_right + paired.only_b_right) / n if n else 0.0,
        "replayed_f1": sum(r["f1"] for r in rows) / n if n else 0.0,
        "both_right": paired.both_right, "only_logged_right": paired.only_a_right,
        "only_replayed_right": paired.only_b_right, "neither_right": paired.neither_right,
        "p_value": paired.p_value,
        "outcomes": rows,
    }
