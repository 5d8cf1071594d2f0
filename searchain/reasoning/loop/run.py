"""Algorithm 1 of SearChain: rounds of Chain-of-Query, each verified and completed by IR.

One ``ReasoningRun`` answers one question. Each round the LLM writes a CoQ (a new branch of the
Tree-of-Reasoning, growing from the node that received the last feedback; the feedback lists the
steps settled so far, so the new chain asks the next step rather than the same ones); the IR side then
walks the chain node by node: duplicates of processed queries are skipped, an ``[Unsolved
Query]`` is always completed from the top passage, an answer the reader confidently contradicts is
corrected, anything else passes. With ``reasoning.feedback_style = "turn"`` (the paper's) the
first node that needs feedback ends the round (one feedback per round); with ``"inline"`` (the
default) a stepwise round goes on instead, IR's answer written into the model's reply in place
of its own (``_answer_in_place``). The loop stops when a chain passes completely, after
``r_max`` rounds, or when the model repeats an identical chain and would get identical feedback
again, or as ``stalled`` when a round after feedback checks no new step and ignores IR's answer.
A chain with no readable step is asked for once more with a reminder of the format; if the
model still writes none, the run stops as ``unparseable`` (never as ``finish``: nothing was
verified).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ...config import ReasoningSettings
from ...events import EventCallback, check, emit
from ...llm.base import ChatMessage
from ...metrics import normalize_answer, not_equal
from ...types import Passage
from ..chain.parser import ParsedChain, parse_chain
from ..chain.prompts import EVIDENCE_CHARS, PASSAGE_PROMPT_CHARS, PromptBook, evidence_excerpt
from ..duplicates import DuplicateDetector
from ..events import (
    FEEDBACK_CORRECTION, ChainDrafted, ChainGenerated, ChainUnreadable, FeedbackGiven, NodeChecked,
    RoundStarted,
)
from ..parts import Generator, LoopOutcome, Retriever
from ..result import DECISION_DUPLICATE, DECISION_UNCHECKED, Branch, Node
from .node_check import NodeChecker
from .stepwise import FINAL_STOP, StepWriter


# Stop reasons beyond r_max | repeated_chain | no_ir.
STOP_FINISH = "finish"  # the last chain passed, or took the last feedback and needed no more
STOP_STALLED = "stalled"  # after feedback, the model's chain checked nothing new and ignored it
STOP_UNPARSEABLE = "unparseable"  # the model's last chain had no [Query]/[Answer] step to check
# How often a chain with no readable step is asked for again, with a reminder of the format.
MAX_FORMAT_RETRIES = 1


# A round whose nodes are still to be checked (the chain was written whole).
_NOT_CHECKED = object()


@dataclass
class Feedback:
    node: Node
    kind: str  # correction | completion
    text: str


def _took_feedback(branch: Branch, feedback: Feedback) -> bool:
    """Whether a round after ``feedback`` moved: it checked a new step, or it took IR's answer
    (a step whose answer now agrees with the one IR gave)."""
    if any(n.decision not in (DECISION_DUPLICATE, DECISION_UNCHECKED) for n in branch.nodes):
        return True
    given = feedback.node.reader_answer or ""
    return any(n.llm_answer and not not_equal(given, n.llm_answer) for n in branch.nodes)


def _one_line(text: str) -> str:
    """A step's text as one line of a chain (a reader's span may hold a line break)."""
    return " ".join(text.split())


def to_branch(round_: int, raw_text: str, chain: ParsedChain, parent: tuple[int, int] | None) -> Branch:
    nodes = [
        Node(round=round_, position=i, query=s.query, llm_answer=s.answer, unsolved=s.unsolved)
        for i, s in enumerate(chain.steps)
    ]
    return Branch(round=round_, raw_text=raw_text, nodes=nodes, parent=parent,
                  final_content=chain.final_content)


class StepDrafts:
    """Watches a chain as it streams and emits ``ChainDrafted`` each time a step is finished
    (its answer line ended, or the next step began), so the first node shows before the chain
    is whole. Parsing is redone at each line end only: a few dozen times per chain."""

    def __init__(self, round_: int, parent: tuple[int, int] | None, on_event: EventCallback | None):
        self.round, self.parent, self.on_event = round_, parent, on_event
        self.text = ""
        self.shown = 0

    def feed(self, piece: str) -> None:
        self.text += piece
        if "\n" not in piece or self.on_event is None:
            return
        written = self.text[:self.text.rfind("\n") + 1]
        parsed = parse_chain(written)
        steps = list(parsed.steps)
        if steps and steps[-1].answer is None and not parsed.final_content:
            steps.pop()  # its answer line may still come
        if len(steps) > self.shown:
            self.shown = len(steps)
            emit(self.on_event, ChainDrafted(self.round, to_branch(
                self.round, written, ParsedChain(steps=steps, final_content=None), self.parent)))


def chain_key(branch: Branch) -> tuple:
    """What makes two chains "identical": the same queries with the same answers."""
    return tuple((normalize_answer(n.query), normalize_answer(n.llm_answer or ""), n.unsolved)
                 for n in branch.nodes)


class ReasoningRun:
    """State of Algorithm 1 for one question: M (detector), R (path), T (branches)."""

    def __init__(self, question: str, task: str, *, generator: Generator, prompts: PromptBook,
                 settings: ReasoningSettings, retriever: Retriever | None, reader: Any,
                 detector: DuplicateDetector, grammar: str | None, stepwise_nodes: int = 0,
                 stop_before_final: bool = False, before_first_check: Callable[[], None] | None = None):
        """``stepwise_nodes`` > 0: write each round's chain a step at a time, each step checked
        before the next is written (``stepwise.StepWriter``; the grammar is then
        ``coq_grammar(stepwise_nodes, start=...)`` in place of ``grammar``).
        ``stop_before_final``: a chain written whole ends where its ``[Final Content]`` would
        begin (the final answer is written apart, from passages).
        ``before_first_check``: called once, when the first step is written and before IR checks
        it (the engine notes the time and may write its draft there)."""
        self.question = question
        self.task = task
        self.gen = generator
        self.prompts = prompts
        self.settings = settings
        self.retriever = retriever
        self.reader = reader
        self.detector = detector
        self.grammar = grammar
        self.stepwise_nodes = stepwise_nodes
        self.stop_at = (FINAL_STOP,) if stop_before_final else ()
        self.before_first_check = before_first_check
        self.branches: list[Branch] = []
        self.path: list[Node] = []
        self.examples = prompts.example_guard(task)  # copies of the few-shot examples are no answers
        self.checker = NodeChecker(task, settings, retriever, reader, cancel=generator.cancel)

    @property
    def _on_event(self) -> EventCallback | None:
        return self.gen.on_event

    def run(self, *, with_ir: bool = True) -> LoopOutcome:
        messages: list[ChatMessage] = [{"role": "user", "content": self.prompts.coq(self.question, self.task)}]
        parent: tuple[int, int] | None = None
        previous: tuple | None = None  # (chain, feedback) of the last round
        r_max = max(1, int(self.settings.r_max))
        stop_reason = "r_max"
        format_retries = MAX_FORMAT_RETRIES
        last_feedback: Feedback | None = None  # the feedback the current round answers
        for round_ in range(1, r_max + 1):
            emit(self._on_event, RoundStarted(round_))
            if with_ir and self.stepwise_nodes > 0:
                branch, feedback, concluded = self._write_and_check(round_, messages, parent)
            else:
                drafts = StepDrafts(round_, parent, self._on_event)
                completion = self.gen.chat(messages, "chain", self.grammar, on_piece=drafts.feed,
                                           stop_at=self.stop_at)
                parsed = self.examples.clean(parse_chain(completion.text), self.question)
                raw = completion.text.rstrip("\n") if completion.stopped_at == FINAL_STOP else completion.text
                branch = to_branch(round_, raw, parsed, parent)
                feedback = _NOT_CHECKED
                concluded = bool(branch.final_content) or completion.stopped_at == FINAL_STOP
            self.branches.append(branch)
            emit(self._on_event, ChainGenerated(round_, branch))
            if not branch.nodes:
                if last_feedback is not None and concluded and with_ir:
                    # After feedback the model may conclude from the settled steps alone.
                    stop_reason = STOP_FINISH
                    break
                # Nothing to verify: say so, never "finish" as if the chain had passed.
                retrying = format_retries > 0 and round_ < r_max
                emit(self._on_event, ChainUnreadable(round_, branch.raw_text, retrying))
                stop_reason = STOP_UNPARSEABLE
                if not retrying:
                    break
                format_retries -= 1
                branch.feedback = self.prompts.format_reminder(self.question)
                messages += [{"role": "assistant", "content": branch.raw_text},
                             {"role": "user", "content": branch.feedback}]
                continue
            stop_reason = "r_max"  # a readable chain: an earlier unreadable one no longer decides
            if not with_ir:
                stop_reason = "no_ir"
                break
            if feedback is _NOT_CHECKED:
                feedback = self._traverse(branch)
            if feedback is None:
                # A chain that only repeats processed steps and ignores the last feedback did
                # not move: report it as stalled, not as a chain that passed.
                moved = last_feedback is None or _took_feedback(branch, last_feedback)
                stop_reason = STOP_FINISH if moved else STOP_STALLED
                break
            branch.feedback = feedback.text
            emit(self._on_event, FeedbackGiven(round_, feedback.kind, feedback.node, feedback.text))
            # The settled steps listed in the feedback grow every round, so compare its gist.
            current = (chain_key(branch), feedback.kind, normalize_answer(feedback.node.query),
                       normalize_answer(feedback.node.reader_answer or ""))
            if current == previous:
                # Same chain, same feedback as last round: the model ignores it; asking again
                # would replay the same exchange until r_max.
                stop_reason = "repeated_chain"
                break
            previous = current
            last_feedback = feedback
            messages += [{"role": "assistant", "content": branch.raw_text},
                         {"role": "user", "content": feedback.text}]
            parent = (round_, feedback.node.position)
        return LoopOutcome(self.branches, self.path, stop_reason, len(self.branches))

    def _traverse(self, branch: Branch) -> Feedback | None:
        """Check the chain's nodes in order; return the first feedback, or None (FINISH)."""
        for node in branch.nodes:
            feedback = self._visit(branch.round, node)
            if feedback is not None:
                return feedback
        return None

    def _visit(self, round_: int, node: Node) -> Feedback | None:
        """Check one node (a duplicate of a processed query is only marked so)."""
        check(self.gen.cancel)
        if self.detector.is_duplicate(node.query):
            node.decision = DECISION_DUPLICATE
            emit(self._on_event, NodeChecked(round_, node))
            return None
        if self.before_first_check is not None:
            hook, self.before_first_check = self.before_first_check, None
            hook()
            check(self.gen.cancel)
        feedback = self._check_node(node)
        self.detector.add(node.query)
        emit(self._on_event, NodeChecked(round_, node))
        return feedback

    def _write_and_check(self, round_: int, messages: list[ChatMessage],
                         parent: tuple[int, int] | None) -> tuple[Branch, Feedback | None, bool]:
        """A round written a step at a time: each new step is checked before the model writes
        the next, and the round ends at the first feedback. Returns the branch (its raw text is
        the reply up to there), the feedback (None when the chain passed) and whether the model
        reached its final line."""
        # The loop writes an [Unsolved Query]'s copy of its query with inline feedback (measured
        # with it); with turns the model still writes its own (7 % of them differ from the query).
        writer = StepWriter(self.gen, messages, self.stepwise_nodes, copy_unsolved=self._inline)
        branch = Branch(round=round_, raw_text="", nodes=[], parent=parent, final_content=None)
        if parent is not None and getattr(self.settings, "prefill_settled", False):
            self._prefill_settled(writer, branch)
        while not writer.done:
            steps = writer.write()
            branch.raw_text = writer.text.rstrip("\n")
            cleaned = self.examples.clean(ParsedChain(steps=steps, final_content=None), self.question).steps
            new = [Node(round=round_, position=len(branch.nodes) + i, query=s.query, llm_answer=s.answer,
                        unsolved=s.unsolved) for i, s in enumerate(cleaned[len(branch.nodes):])]
            if not new:
                continue
            branch.nodes.extend(new)
            emit(self._on_event, ChainDrafted(round_, branch))
            for node in new:
                feedback = self._visit(round_, node)
                if feedback is None and self._inline and node.decision == DECISION_DUPLICATE:
                    # The whole chain is in the model's view: asking a step again is going round
                    # in circles, not a new step (turns start a new chain, where it is not).
                    writer.done = True
                    break
                if feedback is None:
                    continue
                if not (self._inline and node is new[0] and self._answer_in_place(writer, branch, node, feedback)):
                    return branch, feedback, False
                break  # the steps written after the node went with its answer
        return branch, None, writer.reached_final

    @property
    def _inline(self) -> bool:
        return getattr(self.settings, "feedback_style", "inline") == "inline"

    def _answer_in_place(self, writer: StepWriter, branch: Branch, node: Node, feedback: Feedback) -> bool:
        """Inline feedback: IR's answer replaces the model's in its reply, and the chain goes on
        from there in the same round (the node keeps the model's answer and IR's decision)."""
        # The passage goes with IR's answer, as in a feedback turn but cut to the answer's
        # surroundings: without it the model's next steps lost what the passage says beyond the
        # answer (3 of 51 HotpotQA answers lost; BENCHMARKS.md, Lever 9).
        chars = int(getattr(self.settings, "reference_chars", EVIDENCE_CHARS))
        reference = evidence_excerpt(node.passage.title, node.passage.text, node.span, chars) if node.passage else ""
        if not writer.answer_in_place(_one_line(node.reader_answer or ""), reference):
            return False
        del branch.nodes[node.position + 1:]
        branch.raw_text = writer.text.rstrip("\n")
        # Nothing is sent: the note says, for the tree, what was written into the chain.
        verb = "corrected to" if feedback.kind == FEEDBACK_CORRECTION else "completed with"
        title = node.passage.title if node.passage else ""
        note = f'IR: "{node.query}" {verb} "{node.reader_answer or ""}" ({title}); the chain went on.'
        branch.feedback = "\n".join(filter(None, (branch.feedback, note)))
        emit(self._on_event, FeedbackGiven(branch.round, feedback.kind, node, note))
        emit(self._on_event, ChainDrafted(branch.round, branch))
        return True

    def _prefill_settled(self, writer: StepWriter, branch: Branch) -> None:
        """Begin the round's reply with the steps settled so far, written as the chain writes
        them: the model continues after them (a prefill is evaluated, ~3x cheaper a token than
        decoding here) instead of copying them out again. They are the branch's first nodes,
        already processed, so they are marked duplicates and not checked again."""
        settled = self._settled()[:max(0, self.stepwise_nodes - 1)]
        if not settled:
            return
        lines = [f"[Query {n}]: {_one_line(q)}\n[Answer {n}]: {_one_line(a)}" for n, (q, a) in enumerate(settled, 1)]
        writer.text = "\n".join(lines) + "\n"
        writer.written = len(settled)
        for position, (query, answer) in enumerate(settled):
            node = Node(round=branch.round, position=position, query=_one_line(query),
                        llm_answer=_one_line(answer), unsolved=False)
            node.decision = DECISION_DUPLICATE
            branch.nodes.append(node)
        branch.raw_text = writer.text.rstrip("\n")
        emit(self._on_event, ChainDrafted(branch.round, branch))
        for node in branch.nodes:
            emit(self._on_event, NodeChecked(branch.round, node))

    def _check_node(self, node: Node) -> Feedback | None:
        """IR(q_i, a_i) of Algorithm 1 (``node_check``): the node joins the path R where it is
        checked, and a completion or correction is fed back."""
        kind, on_path = self.checker.check(node)
        if on_path:
            self.path.append(node)
        return self._feedback(node, kind, node.passage) if kind else None

    def _feedback(self, node: Node, kind: str, passage: Passage) -> Feedback:
        text = self.prompts.feedback(kind, question=self.question, query=node.query,
                                     answer=node.reader_answer or "", passage=passage,
                                     settled=self._settled(), span=node.span,
                                     chars=int(getattr(self.settings, "feedback_chars", PASSAGE_PROMPT_CHARS)))
        return Feedback(node, kind, text)

    def _settled(self) -> list[tuple[str, str]]:
        """The path so far as (query, answer), once per query: steps the next round builds on
        instead of asking again (the node that just got feedback carries IR's answer)."""
        seen: dict[str, tuple[str, str]] = {}
        for node in self.path:
            if node.answer:
                seen[normalize_answer(node.query)] = (node.query, node.answer)
        return list(seen.values())
