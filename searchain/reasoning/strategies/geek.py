"""GEEK (Gradually Excavating External Knowledge) as an answering strategy, prompted only.

The local chat model plays the paper's fine-tuned core model and extractor. Each step of a branch:

- with no open sub-question, the core model picks *FinalAnswer* or *AddDecomp* (a branch with no
  facts yet always starts with AddDecomp; one with ``r_max`` sub-questions must conclude);
- *AddDecomp* writes the next sub-question with a pseudo-answer (a guess that tells the extractor
  what kind of fact is wanted). One the line has asked already (the engine's duplicate
  detector) is dropped; with nothing new the line concludes, as it would at ``r_max``.
  Strategy exploration: while a line has branched fewer than ``fork_depth`` times and there are
  fewer than ``max_leaves`` branches, the model may write up to ``branches`` alternative
  sub-questions; each extra one starts a new branch from the same state;
- with an open sub-question it picks *Retrieve* (Retrieve & Extract: ``extract_k`` passages, and
  the model, as extractor, writes a short fact citing one of them) or *SelfAnswer* (a fact by
  logic from the facts so far, no retrieval);
- *FinalAnswer* summarises the facts and concludes (yes or no for implicit questions).

Every branch is solved to its end before the next queued one starts. The majority of the
branches' final answers wins; on a tie, the answer whose branches hold the most passage-backed
facts, then the earliest branch. The winner's line (its ancestors' nodes up to the fork, then its
own) is the path; its final answer is the answer. Each branch is one ``Branch`` of the result, its
``parent`` the node it forked after, its ``final_content`` its own answer and its ``feedback`` the
plain-text log of its actions.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from ...config import ReasoningSettings
from ...events import check, emit
from ...metrics import normalize_answer
from ..duplicates import DuplicateDetector
from ..events import ChainGenerated, RoundStarted
from ..parts import Generator, Retriever, locate
from ..result import (
    DECISION_EXTRACTED, DECISION_SELF_ANSWERED, DECISION_UNGROUNDED, SOURCE_IR_EXTRACTED, SOURCE_LLM, Branch, Node,
)
from .base import StrategyOutcome, StrategyRun
from .events import (
    ACTION_ADD_DECOMP, ACTION_BRANCH, ACTION_FINAL, ACTION_RETRIEVE, ACTION_SELF_ANSWER, PHASE_ACTION, PHASE_STEP,
    StrategyStep, VotesCounted,
)
from .grammar import (
    REASONING_CHARS, action_grammar, conclude_grammar, decomp_grammar, extract_grammar, fact_grammar,
)
from .parse import Option, parse_action, parse_conclusion, parse_fact, parse_options, yes_no
from .prompts import StrategyPrompts

# Alternatives per AddDecomp: ``reasoning.geek_branches`` (2; the paper's n = 4 took ~2.5x as long for as
# many right answers, BENCHMARKS.md "GEEK with fewer alternatives") ...
GEEK_MAX_LEAVES = 16  # ... at most 16 leaves ...
GEEK_FORK_DEPTH = 2  # ... so branching happens at the first two decompositions of a line
GEEK_EXTRACT_K = 3  # passages the extractor reads (the paper's fine-tuned FiD read 10)


@dataclass
class _Line:
    """One branch being solved: its own Branch, what it inherited, what it has learned."""

    branch: Branch
    prefix: list[Node]  # ancestors' nodes up to the fork (shared objects, on the path if it wins)
    facts: list[tuple[str, str]]  # (sub-question, fact) along the whole line
    decomps: int = 0
    forks: int = 0
    answer: str = ""
    hit_r_max: bool = False
    log: list[str] = field(default_factory=list)

    @property
    def nodes(self) -> list[Node]:
        return self.prefix + self.branch.nodes

    @property
    def evidence(self) -> int:
        return sum(1 for n in self.nodes if n.passage is not None)


class GeekRun(StrategyRun):
    """One question answered by GEEK."""

    def __init__(self, question: str, *, generator: Generator, prompts: StrategyPrompts,
                 settings: ReasoningSettings, retriever: Retriever, detector: DuplicateDetector | None = None,
                 yes_no: bool = False, branches: int | None = None, max_leaves: int = GEEK_MAX_LEAVES,
                 fork_depth: int = GEEK_FORK_DEPTH, extract_k: int | None = None, field_chars: int | None = None):
        # The alternatives per decomposition: the caller's, else ``reasoning.geek_branches``.
        branches = int(branches if branches is not None else settings.geek_branches)
        if not 1 <= branches <= 9:
            raise ValueError(f"branches must be 1..9, got {branches}")
        super().__init__(question, generator=generator, prompts=prompts, settings=settings,
                         retriever=retriever, detector=detector, yes_no=yes_no, field_chars=field_chars)
        self.branches = branches
        self.max_leaves = max(1, int(max_leaves))
        self.fork_depth = max(0, int(fork_depth))
        self.extract_k = min(9, max(1, int(extract_k or max(GEEK_EXTRACT_K, settings.top_k))))
        self.r_max = max(1, int(settings.r_max))
        self.lines: list[_Line] = []

    def run(self) -> StrategyOutcome:
        queue: deque[tuple[_Line, Option | None]] = deque([(self._new_line(None, [], [], 0, 0), None)])
        while queue:
            line, pending = queue.popleft()
            emit(self.gen.on_event, RoundStarted(line.branch.round, "choosing the next action"))
            self._solve(line, pending, queue)
            line.branch.final_content = line.answer
            line.branch.feedback = "\n".join(line.log)
            emit(self.gen.on_event, ChainGenerated(line.branch.round, line.branch))
        winner = self._vote()
        return StrategyOutcome([ln.branch for ln in self.lines], list(winner.nodes),
                               "r_max" if winner.hit_r_max else "finish", len(self.lines),
                               final_answer=winner.answer)

    # -- one branch ---------------------------------------------------------------------------
    def _new_line(self, parent: tuple[int, int] | None, prefix, facts, decomps: int, forks: int) -> _Line:
        line = _Line(Branch(round=len(self.lines) + 1, raw_text="", parent=parent), list(prefix), list(facts),
                     decomps, forks)
        self.lines.append(line)
        return line

    def _step(self, line: _Line, action: str, detail: str, node: Node | None = None) -> None:
        line.log.append(f"{action}: {detail}")
        emit(self.gen.on_event, StrategyStep(line.branch.round, action, detail, node))

    def _ask(self, line: _Line, prompt: str, phase: str, grammar: str) -> str:
        text = self.gen.chat([{"role": "user", "content": prompt}], phase, grammar).text
        line.branch.raw_text = (line.branch.raw_text + "\n\n" + text.strip()).strip()
        return text

    def _solve(self, line: _Line, pending: Option | None, queue: deque) -> None:
        while True:
            if pending is None:
                if line.decomps >= self.r_max:
                    line.hit_r_max = True
                    return self._conclude(line)
                if line.facts and self._choose(line, (ACTION_ADD_DECOMP, ACTION_FINAL), None) == ACTION_FINAL:
                    return self._conclude(line)
                options = self._decomp(line)
                if not options:  # nothing usable or new written: conclude with what is known
                    return self._conclude(line)
                for option in options[1:]:
                    self._fork(line, option, queue)
                if len(options) > 1:
                    line.forks += 1  # this line took one of the alternatives: it has branched too
                pending = options[0]
                line.decomps += 1
                continue
            action = self._choose(line, (ACTION_RETRIEVE, ACTION_SELF_ANSWER), pending)
            node = self._retrieve(line, pending) if action == ACTION_RETRIEVE else self._self_answer(line, pending)
            line.branch.nodes.append(node)
            line.facts.append((node.query, node.answer or "unknown"))
            pending = None

    def _choose(self, line: _Line, actions: tuple[str, str], pending: Option | None) -> str:
        if pending is None:
            prompt = self.prompts.action_next(self.question, line.facts)
        else:
            prompt = self.prompts.action_pending(self.question, line.facts, pending.sub_question)
        text = self._ask(line, prompt, PHASE_ACTION, action_grammar(actions))
        # An unreadable choice takes the first action (more knowledge / look it up): never a guess.
        return parse_action(text, actions) or actions[0]

    def _decomp(self, line: _Line) -> list[Option]:
        can_fork = line.forks < self.fork_depth and len(self.lines) < self.max_leaves
        want = self.branches if can_fork else 1
        prompt = self.prompts.decomp(self.question, line.facts, want)
        text = self._ask(line, prompt, PHASE_STEP, decomp_grammar(want, **self.caps))
        options, seen, repeats = [], set(), []
        asked = self._asked(line)
        for option in parse_options(text, want):
            key = normalize_answer(option.sub_question)
            if not key or key in seen:
                continue
            seen.add(key)
            if asked.is_duplicate(option.sub_question):
                repeats.append(option.sub_question)
            else:
                options.append(option)
        options = options[: 1 + max(0, self.max_leaves - len(self.lines))]
        if options:
            shown = " | ".join(f"{o.sub_question} (guess: {o.pseudo_answer or '?'})" for o in options)
            self._step(line, ACTION_ADD_DECOMP, shown)
        elif repeats:  # a small model going round in circles: asking again would change nothing
            self._step(line, ACTION_ADD_DECOMP, f"asked already: {repeats[0]}; concluding")
        return options

    def _asked(self, line: _Line) -> DuplicateDetector:
        """The sub-questions this line has asked, as a detector of repeats (the engine's
        threshold and embedder; exact text alone without one)."""
        template = self.detector or DuplicateDetector(1.0)
        asked = DuplicateDetector(template.threshold, template.embedder)
        for sub_question, _ in line.facts:
            asked.add(sub_question)
        return asked

    def _fork(self, line: _Line, option: Option, queue: deque) -> None:
        """Queue a new branch that copies ``line``'s state and takes ``option`` instead."""
        nodes = line.nodes
        parent = (nodes[-1].round, nodes[-1].position) if nodes else None
        child = self._new_line(parent, nodes, line.facts, line.decomps + 1, line.forks + 1)
        self._step(line, ACTION_BRANCH, f"branch {child.branch.round} explores: {option.sub_question}")
        queue.append((child, option))

    def _node(self, line: _Line, option: Option) -> Node:
        return Node(round=line.branch.round, position=len(line.branch.nodes), query=option.sub_question,
                    llm_answer=option.pseudo_answer or None, unsolved=not option.pseudo_answer)

    def _retrieve(self, line: _Line, option: Option) -> Node:
        node = self._node(line, option)
        hits = self.retriever.search(option.sub_question, k=self.extract_k)
        check(self.gen.cancel)
        passages = [h.passage for h in hits]
        number, fact = None, None
        if passages:
            prompt = self.prompts.extract(option.sub_question, option.pseudo_answer, passages)
            text = self._ask(line, prompt, PHASE_STEP, extract_grammar(len(passages), **self.caps))
            number, fact = parse_fact(text, len(passages))
        if fact is None:
            node.decision, node.source = DECISION_UNGROUNDED, SOURCE_LLM
            self._step(line, ACTION_RETRIEVE, f"nothing found for: {option.sub_question}; the guess stands", node)
            return node
        node.reader_answer, node.decision, node.source = fact, DECISION_EXTRACTED, SOURCE_IR_EXTRACTED
        if number is not None:
            node.passage = passages[number - 1]
            node.span = locate(fact, node.passage.text) or locate(option.pseudo_answer, node.passage.text)
        source = f" (from {node.passage.title})" if node.passage else " (no document named)"
        self._step(line, ACTION_RETRIEVE, f"{option.sub_question} -> {fact}{source}", node)
        return node

    def _self_answer(self, line: _Line, option: Option) -> Node:
        node = self._node(line, option)
        prompt = self.prompts.self_answer(self.question, line.facts, option.sub_question)
        _, fact = parse_fact(self._ask(line, prompt, PHASE_STEP, fact_grammar(**self.caps)), 0)
        node.reader_answer = fact or option.pseudo_answer or "unknown"
        node.decision, node.source = DECISION_SELF_ANSWERED, SOURCE_LLM
        self._step(line, ACTION_SELF_ANSWER, f"{option.sub_question} -> {node.reader_answer}", node)
        return node

    def _conclude_caps(self) -> dict:
        """The FinalAnswer's caps: its reasoning at most ``reasoning.geek_reasoning_chars``
        (most of GEEK's decoding, one per branch: BENCHMARKS.md, "GEEK against SearChain now")."""
        reasoning = int(getattr(self.settings, "geek_reasoning_chars", REASONING_CHARS))
        if self.caps:
            reasoning = min(reasoning, self.caps["chars"])
        return {**self.caps, "reasoning_chars": reasoning}

    def _conclude(self, line: _Line) -> None:
        prompt = self.prompts.final(self.question, line.facts, yes_no=self.yes_no)
        grammar = conclude_grammar(yes_no=self.yes_no, **self._conclude_caps())
        reasoning, answer = parse_conclusion(self._ask(line, prompt, PHASE_STEP, grammar))
        if self.yes_no:
            answer = yes_no(answer) or answer
        line.answer = answer
        forced = " (r_max reached)" if line.hit_r_max else ""
        because = " ".join((reasoning or "").split())  # the action log keeps one line per action
        self._step(line, ACTION_FINAL, f"{answer}{forced}" + (f"; because {because}" if because else ""))

    # -- the vote -----------------------------------------------------------------------------
    def _vote(self) -> _Line:
        keyed = [(normalize_answer(ln.answer), ln) for ln in self.lines]
        voting = [(k, ln) for k, ln in keyed if k] or keyed
        counts = Counter(k for k, _ in voting)
        top = max(counts.values())
        leaders = [k for k, c in counts.items() if c == top]
        # Tie-break: the answer its branches back with the most passages, then the earliest branch.
        evidence = {k: sum(ln.evidence for kk, ln in voting if kk == k) for k in leaders}
        first = {k: min(ln.branch.round for kk, ln in voting if kk == k) for k in leaders}
        best = max(leaders, key=lambda k: (evidence[k], -first[k]))
        winner = max((ln for k, ln in voting if k == best), key=lambda ln: (ln.evidence, -ln.branch.round))
        shown = {}
        for k, ln in voting:
            shown.setdefault(k, ln.answer)
        votes = tuple(sorted(((shown[k], c) for k, c in counts.items()), key=lambda v: -v[1]))
        emit(self.gen.on_event, VotesCounted(votes, winner.answer, len(leaders) > 1))
        return winner
