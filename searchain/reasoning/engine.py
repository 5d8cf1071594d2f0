"""``SearChainEngine``: one object that answers questions in any mode and reports as it goes.

Modes (see ``modes.py``): ``searchain`` (Algorithm 1 + tracing), ``coq`` (the chain without IR),
``direct`` and ``rag`` (baselines). A question asked after earlier turns (``history``) is first
rewritten to stand on its own (see ``followup.py``), in every mode. ``answer`` blocks and returns
an ``AnswerResult``; ``iter_answer`` runs the same work on a worker thread and yields the events
as they happen, the last one being ``Done(result)``.

Cancellation: triggering the ``CancelToken`` makes the engine raise ``searchain.errors.Cancelled``
at the next check point (between tokens, and around every retrieval and reader call). Nothing
partial is returned. Closing an ``iter_answer`` generator early cancels its run.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from ..config import ReasoningSettings
from ..errors import Cancelled, ConfigError, SearchainError
from ..events import CancelToken, EventCallback, check, emit
from ..llm.base import GenerationParams
from .accounting import metered_reader
from .baselines import answer_direct, answer_rag
from .chain.grammar import DEFAULT_MAX_NODES, coq_grammar, final_content_grammar
from .chain.parser import answer_tail, short_answer, strip_marks
from .chain.prompts import TASKS, PromptBook, detect_task, evidence_excerpt
from .concise import concise_answer, is_sentence, names_both_options, question_options, respan, stated_sentence
from .loop.draft_rules import draft_after_first_step, writes_draft
from .duplicates import DuplicateDetector
from .events import PHASE_DRAFT, PHASE_REWRITE, Done, DraftStarted, Failed, QuestionRewritten
from .followup import PriorTurn, rewrite_followup
from .loop.run import ReasoningRun
from .modes import MODE_DIRECT, MODE_GEEK, MODE_GENGROUND, MODE_RAG, MODE_SEARCHAIN, check_mode, needs_ir
from .parts import Generator
from .polar import is_polar, polar_answer
from .result import AnswerResult, Node
from .loop.stepwise import CHAIN_STEPS, FEEDBACK_STYLES, can_write_stepwise
from .tracing import (FINAL_ANSWERS, FINAL_STEPS, checked_steps, compose_from_path, extract_final_content, finalize,
                      ir_found_otherwise, passage_sources, path_disagrees, renumber_marks)

# Without a grammar, stop the model when it starts inventing a new few-shot example.
_CHAIN_STOPS = ("\n[Question]",)


class SearChainEngine:
    """Answers questions with an LLM, a retriever and a reader (the last two optional per mode)."""

    def __init__(self, llm: Any, retriever: Any, reader: Any, *, settings: ReasoningSettings,
                 embedder: Any = None, use_grammar: bool = True,
                 generation: GenerationParams | None = None, prompts: PromptBook | None = None,
                 max_nodes: int = DEFAULT_MAX_NODES, chain_grammar: str | None = None):
        self.llm = llm
        self.retriever = retriever
        self.reader = reader
        self.settings = settings
        self.embedder = embedder
        self.use_grammar = use_grammar
        self.generation = generation or GenerationParams()
        self.prompts = prompts or PromptBook(settings.prompts_folder or None)
        self.max_nodes = max_nodes
        # A user-supplied GBNF for the CoQ (e.g. tuned for one small model); None = coq_grammar().
        self.chain_grammar = chain_grammar
        # Per mode, keyword options for its run, e.g. {"genground": {"batch_size": 2}, "geek": {"branches": 2}}.
        self.strategy_options: dict[str, dict[str, Any]] = {}

    # -- public API ----------------------------------------------------------------------------

    def answer(self, question: str, *, mode: str | None = None, task: str | None = None,
               history: Sequence[PriorTurn] = (), on_event: EventCallback | None = None,
               cancel: CancelToken | None = None) -> AnswerResult:
        """Answer ``question``; emits events to ``on_event``; raises ``Cancelled`` if cancelled.

        ``history``: the conversation's earlier turns, oldest first; a follow-up is read with them.
        """
        try:
            result = self._answer(question, mode or self.settings.mode, task, tuple(history), on_event, cancel)
        except Cancelled:
            raise
        except Exception as exc:
            emit(on_event, Failed(str(exc)))
            raise
        emit(on_event, Done(result))
        return result

    def iter_answer(self, question: str, *, mode: str | None = None, task: str | None = None,
                    history: Sequence[PriorTurn] = (), cancel: CancelToken | None = None) -> Iterator[Any]:
        """Yield events while answering; the last is ``Done(result)``. Errors re-raise here."""
        token = _LinkedToken(cancel)
        events: queue.Queue = queue.Queue()
        finished = object()
        failure: list[BaseException] = []

        def work() -> None:
            try:
                self.answer(question, mode=mode, task=task, history=history, on_event=events.put, cancel=token)
            except BaseException as exc:  # handed to the consumer thread below
                failure.append(exc)
            finally:
                events.put(finished)

        worker = threading.Thread(target=work, name="searchain-answer", daemon=True)
        worker.start()
        try:
            while True:
                event = events.get()
                if event is finished:
                    break
                yield event
        finally:
            token.cancel()  # no-op after a normal finish; stops the worker if the consumer left
            worker.join()
        if failure:
            raise failure[0]

    # -- internals -----------------------------------------------------------------------------

    def _answer(self, asked: str, mode: str, task: str | None, history: tuple[PriorTurn, ...],
                on_event, cancel) -> AnswerResult:
        started = time.perf_counter()
        if not isinstance(asked, str) or not asked.strip():
            raise SearchainError("The question is empty.", hint="Type a question to answer.")
        check_mode(mode)
        task = task or getattr(self.settings, "task", "auto")
        if task != "auto" and task not in TASKS:
            raise ConfigError(f"Unknown task variant {task!r}.", hint=f"Use auto or one of: {', '.join(TASKS)}.")
        self._require(mode)
        gen = Generator(self.llm, self.generation, self.use_grammar, on_event, cancel, stop=_CHAIN_STOPS)
        question = self._standalone(asked, history, gen, on_event)
        task = detect_task(question) if task == "auto" else task
        result = AnswerResult(question=asked, mode=mode, final_content="", answer="",
                              standalone_question=question if question != asked else None)
        if mode == MODE_DIRECT:
            result.final_content, result.references = answer_direct(question, generator=gen, prompts=self.prompts)
            result.stop_reason = "finish"
        elif mode == MODE_RAG:
            result.final_content, result.references = answer_rag(
                question, generator=gen, prompts=self.prompts, retriever=self.retriever,
                top_k=self.settings.top_k)
            result.stop_reason = "finish"
        elif mode in (MODE_GENGROUND, MODE_GEEK):
            from .strategies.run import run_strategy

            run_strategy(mode, question, task, generator=gen, settings=self.settings, retriever=self.retriever,
                         embedder=self.embedder, result=result, **self.strategy_options.get(mode, {}))
        else:
            self._chain(question, task, mode, gen, result, started)
        result.answer = result.answer or short_answer(result.final_content)
        self._concise(question, result, gen)
        result.prompt_tokens, result.completion_tokens = gen.prompt_tokens, gen.completion_tokens
        result.tokens_by_phase = {phase: list(counts) for phase, counts in gen.tokens_by_phase.items()}
        result.costs_by_phase = {phase: dict(cost) for phase, cost in gen.costs_by_phase.items()}
        result.seconds = time.perf_counter() - started
        return result

    def _concise(self, question: str, result: AnswerResult, gen: Generator) -> None:
        """A stated answer that is a sentence, cut to the words that answer (``concise.py``,
        ``reasoning.concise_answer``), or to yes or no for a yes/no question (``polar.py``); the
        final content is left as written."""
        if not getattr(self.settings, "concise_answer", False) or self.llm is None:
            return
        strategy = result.mode in (MODE_GENGROUND, MODE_GEEK)  # the [Final Answer] field is stated
        if strategy or answer_tail(result.final_content) is not None:  # only a stated answer is read
            polar = polar_answer(question, result.answer or "")
            if polar is not None:  # a yes/no question: yes or no, read from the words (``polar.py``)
                result.answer = polar
                return
        if strategy:  # the strategy's [Final Answer] field
            stated = result.answer if is_sentence(result.answer) else None
        else:
            stated = stated_sentence(result.final_content)
        if stated is None or stated != result.answer or names_both_options(question, stated):
            return
        check(gen.cancel)
        concise = concise_answer(question, stated, self.llm, gen)
        if concise:
            result.references = respan(result.references, stated, concise)
            result.answer = concise

    def _standalone(self, asked: str, history: tuple[PriorTurn, ...], gen: Generator, on_event) -> str:
        turns = self.settings.followup_turns
        if not history or turns <= 0:
            return asked
        question = rewrite_followup(asked, history, generator=gen, prompts=self.prompts,
                                    max_turns=turns, phase=PHASE_REWRITE)
        emit(on_event, QuestionRewritten(asked, question))
        return question

    def _require(self, mode: str) -> None:
        if needs_ir(mode) and self.retriever is None:
            raise ConfigError(f"Mode {mode!r} needs a corpus to search, but no retriever was given.",
                              hint="Build a corpus index (`searchain corpus ...`) or use --mode coq/direct.")
        style = getattr(self.settings, "final_answer", "passages")
        if mode == MODE_SEARCHAIN and style not in FINAL_ANSWERS:
            raise ConfigError(f"Unknown final-answer style {style!r}.", hint=f"Use one of: {', '.join(FINAL_ANSWERS)}.")
        steps = getattr(self.settings, "chain_steps", "stepwise")
        if mode == MODE_SEARCHAIN and steps not in CHAIN_STEPS:
            raise ConfigError(f"Unknown way of writing chains {steps!r}.", hint=f"Use one of: {', '.join(CHAIN_STEPS)}.")
        listed = getattr(self.settings, "final_steps", "off")
        if mode == MODE_SEARCHAIN and listed not in FINAL_STEPS:
            raise ConfigError(f"Unknown final_steps {listed!r}.", hint=f"Use one of: {', '.join(FINAL_STEPS)}.")
        style = getattr(self.settings, "feedback_style", "inline")
        if mode == MODE_SEARCHAIN and style not in FEEDBACK_STYLES:
            raise ConfigError(f"Unknown feedback style {style!r}.", hint=f"Use one of: {', '.join(FEEDBACK_STYLES)}.")
        if mode == MODE_SEARCHAIN and self.reader is None:
            raise ConfigError("Mode 'searchain' needs a reader to verify answers, but none was given.",
                              hint="Set reasoning.reader to auto, dpr or llm.")

    def _chain(self, question: str, task: str, mode: str, gen: Generator, result: AnswerResult,
               started: float) -> None:
        with_ir = mode == MODE_SEARCHAIN
        detector = DuplicateDetector(self.settings.duplicate_threshold, self.embedder if with_ir else None)
        reader = metered_reader(self.reader, gen) if with_ir else None  # its model calls count too
        # A chain is written a step at a time where the model can continue its reply and the
        # grammar is ours to restart mid-chain (stepwise.py); a user's own grammar gets whole chains.
        steps = getattr(self.settings, "chain_steps", "stepwise")
        stepwise = with_ir and self.chain_grammar is None and can_write_stepwise(self.llm) and steps == "stepwise"
        unused_final = with_ir and getattr(self.settings, "final_answer", "passages") == "passages"
        slot = None
        if with_ir:
            slot = _DraftSlot(lambda: self._draft(question, gen, result, started), result, started,
                              after_first_step=draft_after_first_step(self.settings, stepwise=stepwise))
        run = ReasoningRun(question, task, generator=gen, prompts=self.prompts, settings=self.settings,
                           retriever=self.retriever, reader=reader, detector=detector,
                           grammar=self.chain_grammar or coq_grammar(self.max_nodes),
                           stepwise_nodes=self.max_nodes if stepwise else 0,
                           stop_before_final=unused_final and steps == "whole_no_final",
                           before_first_check=slot.first_step if slot else None)
        if slot is not None and not slot.after_first_step:
            slot.write()
        outcome = run.run(with_ir=with_ir)
        draft = slot.write() if slot is not None else None  # no-op once written
        result.branches, result.rounds, result.stop_reason = outcome.branches, outcome.rounds, outcome.stop_reason
        if not with_ir:
            # CoQ without IR: the chain is the path; no passages, so no marks can be kept.
            last = outcome.branches[-1]
            result.path = list(last.nodes)
            content = strip_marks(last.final_content or "")
            if not content and not last.nodes:
                content = strip_marks(extract_final_content(last.raw_text))  # an unreadable chain
            result.final_content = content or strip_marks(compose_from_path(result.path))
            return
        result.path = outcome.path
        result.final_content, result.references = self._write_final(question, outcome.path, outcome.branches, gen,
                                                                     draft)

    def rewrite_final(self, question: str, path: Sequence[Node]) -> AnswerResult:
        """Only the final step, over a given verified path (``searchain eval --replay-final``:
        final-answer prompts compared on the same chains at a fraction of a whole run's cost)."""
        gen = Generator(self.llm, self.generation, self.use_grammar, None, None, stop=_CHAIN_STOPS)
        result = AnswerResult(question=question, mode=MODE_SEARCHAIN, final_content="", answer="")
        result.path = list(path)
        result.final_content, result.references = self._write_final(question, result.path, [], gen)
        result.answer = short_answer(result.final_content)
        result.prompt_tokens, result.completion_tokens = gen.prompt_tokens, gen.completion_tokens
        return result

    def _draft(self, question: str, gen: Generator, result: AnswerResult, started: float) -> _Draft | None:
        """Plain RAG's answer over the question's passages, written first and streamed as a draft
        (``reasoning.draft_answer``, the ``passages`` final answer only: its prompt is exactly
        the final answer's when the path adds no passage, and the beginning of it otherwise)."""
        if not writes_draft(self.settings) or self.retriever is None:
            return None
        passages = self._question_passages(question)
        if not passages:
            return None
        messages = [{"role": "user", "content": self.prompts.rag(question, passages)}]
        emit(gen.on_event, DraftStarted())
        text = gen.chat(messages, PHASE_DRAFT, None).text
        result.first_answer_seconds = time.perf_counter() - started
        return _Draft(passages, text)

    def _write_final(self, question: str, path: Sequence[Node], branches, gen: Generator,
                     draft: _Draft | None = None) -> tuple[str, list]:
        """The final content over the verified path, each mark resolved to a stored passage.

        ``passages`` (the default): the model answers as in plain RAG, from the question's own
        top passages followed by the passages the path verified that are not among them, so the
        final answer reads everything RAG reads and what the chain found. Free text, no grammar:
        a 1.5B model reasons over several lines before "So the final answer is ...", and a
        one-line grammar cut it after "let's analyze step by step:" (BENCHMARKS.md).
        ``tracing``: the paper's prompt over the path's pairs and their evidence.
        With a ``draft`` (RAG's answer over the same question passages, written first) the
        final answer is the draft when the path adds no passage (the same prompt, so the same
        greedy answer), and otherwise its prompt begins as the draft's did, whose KV state the
        backend kept aside (``llm/llama/prefix_states.py``): only the path's passages and the question
        are evaluated again. ``reasoning.final_steps`` lists the path's checked steps after the
        passages, and may ask again where the draft stands as it is (``tracing.path_disagrees``,
        or only where IR answered the last step: ``tracing.ir_found_otherwise``).
        """
        style = getattr(self.settings, "final_answer", "passages")
        # With nothing verified and no closing line of the model's own to fall back on (a chain
        # written step by step has none), answer from the question's passages as plain RAG does.
        from_question = (not path and any(b.nodes for b in branches or ()) and not branches[-1].final_content
                         and self.retriever is not None and int(getattr(self.settings, "question_passages", 0)) > 0)
        if (style == "passages" and path) or from_question:
            # RAG's own view first, path passages among them included: passage_sources skips
            # them when it appends the path's.
            extra = draft.passages if draft is not None else self._question_passages(question)
            sources, marks = passage_sources(path, extra)
            listed = getattr(self.settings, "final_steps", "off")
            # "found": the steps only where IR answered the last step, the draft lacks it, and the
            # question asks for a thing (a yes/no or a choice question ends on one side's fact)
            found = (listed == "found" and draft is not None and not is_polar(question)
                     and not question_options(question) and ir_found_otherwise(draft.text, path))
            steps = checked_steps(path, sources) if listed in ("disagree", "always") or found else []
            ask_again = bool(steps) and (listed == "always" or draft is None or found
                                         or path_disagrees(draft.text, path))
            if draft is not None and len(sources) == len(extra) and not ask_again:
                model_text = draft.text  # the final prompt would be the draft's own
            else:
                messages = [{"role": "user", "content": self.prompts.rag(question, sources, steps)}]
                model_text = gen.chat(messages, "final", None).text
            return finalize(renumber_marks(model_text, marks), path, extra, question)
        if path:
            pairs = [(n.query, n.answer or "") for n in path]
            evidence = [evidence_excerpt(n.passage.title, n.passage.text, n.span) if n.passage is not None else ""
                        for n in path]
            extra = self._question_passages(question, path)
            messages = [{"role": "user", "content": self.prompts.tracing(
                question, pairs, evidence, [evidence_excerpt(p.title, p.text, None) for p in extra])}]
            grammar = final_content_grammar(min(9, len(pairs) + len(extra)))
            model_text = gen.chat(messages, "final", grammar).text
        else:
            # Nothing verified: fall back on what the model itself concluded last.
            extra = []
            model_text = extract_final_content(branches[-1].raw_text) if branches else ""
        return finalize(model_text, path, extra, question)

    def _question_passages(self, question: str, path: Sequence[Node] = ()) -> list:
        """The top ``question_passages`` passages for the question itself, skipping any on ``path``:
        the final answer reads what plain RAG would, besides the verified chain."""
        wanted = int(getattr(self.settings, "question_passages", 0) or 0)
        if wanted <= 0 or self.retriever is None:
            return []
        on_path = {n.passage.pid for n in path if n.passage is not None}
        hits = self.retriever.search(question, k=wanted + len(on_path))
        return [h.passage for h in hits if h.passage.pid not in on_path][:wanted]


@dataclass(frozen=True)
class _Draft:
    passages: list  # the question's own passages, as RAG reads them
    text: str  # the model's answer over them


class _DraftSlot:
    """When SearChain's draft is written: before the chain, or (``reasoning.draft_after_first_step``,
    for a chain written step by step) once the chain's first step is written and before IR checks
    it, so the tree's first node shows within the time of one chain step while the draft is
    written. A chain written whole (a server) streams its first node anyway and would hold the
    draft back until its end, so its draft comes first. Either way the draft is written once, and
    at the latest before the final answer (a chain with no step to check).
    ``result.first_node_seconds``: when the first step was ready to check (a chain written whole
    showed it earlier, while it streamed)."""

    def __init__(self, draft: Callable[[], _Draft | None], result: AnswerResult, started: float, *,
                 after_first_step: bool):
        self._draft, self.result, self.started = draft, result, started
        self.after_first_step = bool(after_first_step)
        self.written = False
        self.draft: _Draft | None = None

    def first_step(self) -> None:
        """The loop's hook: the first step is on screen, IR is about to check it."""
        if self.result.first_node_seconds is None:
            self.result.first_node_seconds = time.perf_counter() - self.started
        if self.after_first_step:
            self.write()

    def write(self) -> _Draft | None:
        if not self.written:
            self.written = True
            self.draft = self._draft()
        return self.draft


class _LinkedToken(CancelToken):
    """A token cancelled by itself or by the caller's token (so closing a generator never
    cancels the caller's token, yet the caller can still cancel the run)."""

    def __init__(self, outer: CancelToken | None):
        super().__init__()
        self._outer = outer

    @property
    def cancelled(self) -> bool:
        return super().cancelled or (self._outer is not None and self._outer.cancelled)

    def raise_if_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled()
