"""``searchain ask "question"``: answer one question, print the traced answer, references and tree.

Progress (rounds, nodes checked, feedback) goes to stderr as it happens; the answer goes to
stdout, as text or (``--json``) one JSON object with ``final_content``, ``answer``,
``references[]`` and ``nodes[]``.

``--server URL`` answers through an OpenAI-compatible server instead of a local GGUF (with
``--server-model`` and ``--server-key``), printing the same JSON.

``--chat ID`` asks inside a saved conversation, as the app does: the question is read with that
conversation's earlier turns (so "When was he born?" works) and the exchange is saved to it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..reasoning.modes import MODES
from ..reasoning.result import honest_decision, honest_source
from ..units import counted


def register(sub) -> None:
    p = sub.add_parser("ask", help="answer a question with SearChain and show its references")
    p.add_argument("question", help="the question to answer")
    p.add_argument("--model", metavar="MODEL", help="a GGUF file, or a name from `models list [--all]` (default: the configured one)")
    p.add_argument("--server", metavar="URL",
                   help="answer through an OpenAI-compatible server (Ollama, LM Studio, llama-server, "
                        "vLLM), e.g. http://127.0.0.1:11434/v1")
    p.add_argument("--server-model", metavar="NAME",
                   help="the model on that server (default: the configured one, else its first)")
    p.add_argument("--server-key", metavar="KEY",
                   help="API key for the server (default: llm.server_key, else $SEARCHAIN_LLM_API_KEY)")
    p.add_argument("--corpus", metavar="NAME[,NAME...]",
                   help="corpus to search, or several separated by commas (wiki,papers) to search "
                        "them together (default: the chat's corpora with --chat, else the active one)")
    p.add_argument("--mode", choices=MODES,
                   help="searchain (default), coq (no IR), direct, rag, genground (generate-then-ground), geek")
    p.add_argument("--task", choices=("auto", "multihop", "yesno", "longform"), default=None,
                   help="CoQ prompt variant (default: guessed from the question)")
    p.add_argument("--no-grammar", action="store_true", help="do not constrain the CoQ with a grammar")
    p.add_argument("--grammar", metavar="FILE", help="a GBNF file to use for the CoQ instead of the built-in one")
    p.add_argument("--chat", metavar="ID", type=int,
                   help="ask as a follow-up in saved conversation ID and save the exchange there")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from ..workspace import Workspace

    settings = ctx.settings
    if args.model:  # for this run only; not saved (nor are the server options)
        from ..llm.models.locate import model_option

        settings.llm.model_path = model_option(args.model, ctx.paths, settings.llm)
        settings.llm.backend = "llama_cpp"
    if args.server:
        if args.server != settings.llm.server_url:  # another server: its own name, family, grammar
            settings.llm.server_model, settings.llm.server_family = "", "auto"
            settings.llm.server_grammar = "auto"
        settings.llm.backend, settings.llm.server_url = "openai", args.server
    if args.server_model:
        settings.llm.server_model = args.server_model
    if args.server_key:
        settings.llm.server_key = args.server_key
    if args.no_grammar:
        settings.llm.use_grammar = False
    grammar = _read_grammar(args.grammar) if args.grammar else None
    workspace = Workspace(ctx.paths, settings)
    _note_starter(workspace)
    try:
        progress = None if args.quiet else _progress
        corpora = _corpora(workspace, args)
        engine = workspace.engine(mode=args.mode, corpus=corpora, on_event=progress)
        engine.chain_grammar = grammar
        if args.chat is None:
            result = engine.answer(args.question, mode=args.mode, task=args.task, on_event=progress)
        else:
            result = _answer_in_chat(workspace, engine, args, progress, corpora)
    finally:
        workspace.close()
    if args.json:
        print(json.dumps(result_to_json(result), ensure_ascii=False, indent=2))
    else:
        print(render_text(result))
    return 0


def _note_starter(workspace) -> None:
    """Say once, on stderr (stdout stays the answer), that the tiny starter model answers."""
    if workspace.resolved_model().starter:
        from ..llm.models.starter import starter_notice

        message, hint = starter_notice()
        print(f"note: no model chosen. {message}\n  {hint}", file=sys.stderr)


def _corpora(workspace, args) -> list[str]:
    """``--corpus`` (saved as the chat's choice with ``--chat``), else the chat's corpora, else
    the active corpus."""
    from ..index.mixed import parse_corpora

    if args.corpus is None:
        return workspace.chat_corpora(args.chat)
    names = parse_corpora(args.corpus)
    if args.chat is not None:
        workspace.conversations().set_corpora(args.chat, names)
    return names


def _answer_in_chat(workspace, engine, args, progress, corpora):
    """Answer as a follow-up in conversation ``args.chat``, saving both messages there. As in the
    app, the text streams into the store as it comes, so an answer that breaks off (a model that
    crashes, a server killed mid-answer) keeps what was written, beside the error and its hint."""
    from ..store.records import RunInfo
    from ..store.streamed import answer_while_saving

    store = workspace.conversations()
    history = store.prior_turns(args.chat, workspace.settings.reasoning.followup_turns)
    store.add_user_message(args.chat, args.question)
    run = RunInfo.from_settings(workspace.settings, mode=args.mode, corpus=",".join(corpora))
    message_id = store.begin_answer(args.chat, run)
    result = answer_while_saving(
        store, message_id, lambda relay: engine.answer(args.question, mode=args.mode, task=args.task,
                                                       history=history, on_event=relay),
        progress)
    if progress is not None:
        print(f"saved to chat {args.chat}", file=sys.stderr)
    return result


def _read_grammar(path: str) -> str:
    from pathlib import Path

    from ..errors import ConfigError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read grammar file {path}: {exc}", hint="Pass a readable GBNF text file.") from exc
    if "root" not in text or "::=" not in text:
        raise ConfigError(f"Grammar file {path} has no `root ::= ...` rule.",
                          hint="A GBNF grammar needs a root rule; see resources/prompts/ or docs/reasoning.md.")
    return text


def _progress(event: Any) -> None:
    from ..corpus.fts_build import FINISH_STAGE
    from ..events import Progress
    from ..index.layout import OPEN_STAGE
    from ..index.retrievers import KeywordOnly
    from ..reasoning.events import (
        ChainUnreadable, DraftStarted, FeedbackGiven, NodeChecked, QuestionRewritten, RoundStarted,
    )
    from ..reasoning.strategies.view import describe_event

    line = describe_event(event)  # GenGround / GEEK steps
    if isinstance(event, Progress) and event.stage == OPEN_STAGE:
        print(f"{event.message}...", file=sys.stderr)
    elif isinstance(event, Progress) and event.stage == FINISH_STAGE:
        done = f" {event.done:,} of {event.total:,}" if event.done and event.total else ""
        print(f"{event.message}...{done}", file=sys.stderr)
    elif isinstance(event, KeywordOnly):
        print(f"note: {event.message} {event.hint}", file=sys.stderr)
    elif line is not None:
        print(f"  {line}", file=sys.stderr)
    elif isinstance(event, QuestionRewritten):
        print(f"read with the conversation as: {event.standalone}", file=sys.stderr)
    elif isinstance(event, RoundStarted):
        print(f"round {event.round}: {event.activity}...", file=sys.stderr)
    elif isinstance(event, DraftStarted):
        print("drafting an answer from the question's passages...", file=sys.stderr)
    elif isinstance(event, NodeChecked):
        node = event.node
        conf = f" (reader {node.confidence:.2f})" if node.confidence is not None else ""
        print(f"  {node.decision:<13} {node.query} -> {node.answer or '?'}{conf}", file=sys.stderr)
    elif isinstance(event, FeedbackGiven):
        print(f"  {event.kind} feedback on: {event.node.query}", file=sys.stderr)
    elif isinstance(event, ChainUnreadable):
        then = "asking again with the format" if event.retrying else "answering with its text, unchecked"
        print(f"  round {event.round}: no [Query]/[Answer] step could be read; {then}", file=sys.stderr)


def result_to_json(result) -> dict:
    """The ``--json`` shape (stable: scripts and the eval harness read it)."""
    nodes = [node for branch in result.branches for node in branch.nodes] or list(result.path)
    return {
        "question": result.question,
        "standalone_question": result.standalone_question,
        "mode": result.mode,
        "final_content": result.final_content,
        "answer": result.answer,
        "stop_reason": result.stop_reason,
        "rounds": result.rounds,
        "references": [
            _reference_json(r) for r in result.references
        ],
        "nodes": [
            {"query": n.query, "llm_answer": n.llm_answer, "reader_answer": n.reader_answer,
             "confidence": n.confidence, "decision": honest_decision(n), "source": honest_source(n), "round": n.round,
             "passage_id": n.passage.pid if n.passage else None}
            for n in nodes
        ],
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "tokens_by_phase": result.tokens_by_phase,
        "seconds": round(result.seconds, 3),
    }


def _reference_json(r) -> dict:
    """A reference names its corpus (several may be searched), and its page and heading path
    where the passage's file has them."""
    out = {"mark": r.mark, "passage_id": r.passage.pid, "corpus": r.passage.corpus,
           "title": r.passage.title, "text": r.passage.text, "span": list(r.span) if r.span else None}
    if r.passage.page is not None:
        out["page"] = r.passage.page
    if r.passage.section:
        out["section"] = r.passage.section
    return out


def highlight(text: str, span: tuple[int, int] | None) -> str:
    if not span or not (0 <= span[0] < span[1] <= len(text)):
        return text
    return f"{text[: span[0]]}**{text[span[0] : span[1]]}**{text[span[1] :]}"


def render_text(result) -> str:
    out = [f"Answered as: {result.standalone_question}", ""] if result.standalone_question else []
    out += [result.final_content or "(no answer)", ""]
    if result.references:
        out.append("References:")
        for ref in result.references:
            p = ref.passage
            where = p.location()
            out.append(f"[{ref.mark}] {p.title} ({p.corpus}:{p.pid}){' - ' + where if where else ''}")
            out.append(f"    {highlight(p.text, ref.span)}")
        out.append("")
    from ..reasoning.strategies.view import describe

    # What made it and how long it took, as the app's footer says it under each answer.
    footer = f"({result.mode} · {counted(result.rounds, 'round')} · {result.seconds:.1f} s)"
    strategy = describe(result)
    if strategy:
        return "\n".join(out + strategy + ["", footer]).rstrip()
    if result.branches:
        out.append(f"Reasoning tree ({result.rounds} round(s), stopped: {result.stop_reason}):")
        for branch in result.branches:
            origin = f"from node {branch.parent[0]}.{branch.parent[1] + 1}" if branch.parent else "from the question"
            out.append(f"  round {branch.round} ({origin})")
            for node in branch.nodes:
                answer = node.answer if node.answer is not None else "[unsolved]"
                out.append(f"    {node.round}.{node.position + 1} [{honest_decision(node)}] {node.query} -> {answer}")
        out.append("")
    return "\n".join(out + [footer]).rstrip()
