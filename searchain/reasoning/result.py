"""What one answered question produces: the tree of reasoning, the verified path, the traced answer.

These types are the contract between the reasoning engine (which builds them), the conversation
store (which saves and reloads them exactly) and the app (which draws them). They hold plain data
only, so that they serialise with ``dataclasses.asdict`` and compare with ``==``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..types import Passage

# How IR treated a node (the badge the app shows).
DECISION_PASS = "verified"  # the reader found an answer in the passage and it agrees with the LLM's
DECISION_NOT_CONFIRMED = "not_confirmed"  # the reader found an answer that does not back the LLM's,
#   but was not confident enough (<= θ) to correct it: the LLM's answer stands, unconfirmed
DECISION_NO_ANSWER = "no_answer"  # the reader found no answer in the passage: the LLM's stands, unchecked
DECISION_NOT_READ = "not_read"  # a yes/no step: a reader copies spans and cannot answer one, so its
#   passage is retrieved (and shown) but not read; the LLM's answer stands, unchecked
DECISION_CORRECTED = "corrected"  # reader confident and disagreed: correction feedback
DECISION_COMPLETED = "completed"  # [Unsolved Query] answered by IR: completion feedback
DECISION_DUPLICATE = "duplicate"  # query already processed in an earlier round: skipped
DECISION_UNCHECKED = "unchecked"  # after this round's feedback, or in modes without IR
# The other strategies (genground.py, geek.py) give their steps these fates.
DECISION_GROUNDED = "grounded"  # GenGround: evidence cited from a batch, answer revised by it
DECISION_EMPTY = "empty"  # GenGround: a batch with nothing to cite ("Empty"); the next is tried
DECISION_UNGROUNDED = "ungrounded"  # no passage could back the step: the model's answer stands
DECISION_EXTRACTED = "extracted"  # GEEK: Retrieve & Extract condensed the passages into a fact
DECISION_SELF_ANSWERED = "self_answered"  # GEEK: SelfAnswer, from the facts so far, no retrieval
DECISIONS = (DECISION_PASS, DECISION_NOT_CONFIRMED, DECISION_NO_ANSWER, DECISION_NOT_READ, DECISION_CORRECTED,
             DECISION_COMPLETED, DECISION_DUPLICATE, DECISION_UNCHECKED,
             DECISION_GROUNDED, DECISION_EMPTY, DECISION_UNGROUNDED, DECISION_EXTRACTED,
             DECISION_SELF_ANSWERED)
# Decisions whose node is backed by its passage: only these may cite it with a [n] mark.
SUPPORTED_DECISIONS = (DECISION_PASS, DECISION_CORRECTED, DECISION_COMPLETED, DECISION_GROUNDED,
                       DECISION_EXTRACTED)
# Decisions whose kept answer is ``reader_answer`` (what IR, grounding or the extractor gave).
_ANSWER_FROM_READER = (DECISION_CORRECTED, DECISION_COMPLETED, DECISION_GROUNDED, DECISION_EXTRACTED,
                       DECISION_SELF_ANSWERED)

# Where the knowledge of a node on the final path came from (paper Table 2: from the LLM and
# verified, from the LLM and unverifiable, corrected by IR, completed by IR).
SOURCE_LLM_VERIFIED = "llm_verified"
SOURCE_LLM_UNVERIFIED = "llm_unverified"
SOURCE_IR_CORRECTED = "ir_corrected"
SOURCE_IR_COMPLETED = "ir_completed"
SOURCES = (SOURCE_LLM_VERIFIED, SOURCE_LLM_UNVERIFIED, SOURCE_IR_CORRECTED, SOURCE_IR_COMPLETED)
# The LLM's own knowledge, verified or not. Runs stored before the split carry this value on
# every LLM node (then "verified" was given even when the reader found nothing): see
# ``honest_decision`` for how such a node is shown. Also the default of a node not yet checked.
SOURCE_LLM = "llm"
SOURCE_IR_GROUNDED = "ir_grounded"  # GenGround: revised by cited evidence
SOURCE_IR_EXTRACTED = "ir_extracted"  # GEEK: extracted from retrieved passages
ALL_SOURCES = SOURCES + (SOURCE_IR_GROUNDED, SOURCE_IR_EXTRACTED)  # SOURCES: SearChain's (eval)


@dataclass
class Node:
    """One [Query]/[Answer] step of a Chain-of-Query, with what IR made of it."""

    round: int  # 1-based round (= branch) that produced it
    position: int  # 0-based index within its chain
    query: str
    llm_answer: str | None  # None for an [Unsolved Query]
    unsolved: bool = False
    reader_answer: str | None = None
    confidence: float | None = None  # on the reader's own scale
    decision: str = DECISION_UNCHECKED
    source: str = SOURCE_LLM
    passage: Passage | None = None  # the top-1 passage IR checked the node against
    span: tuple[int, int] | None = None  # answering span in passage.text (character offsets)

    @property
    def supported(self) -> bool:
        """Whether the node's answer is backed by its passage (it may cite it as a reference)."""
        return self.passage is not None and honest_decision(self) in SUPPORTED_DECISIONS

    @property
    def answer(self) -> str | None:
        """The answer the final path keeps: IR's when it corrected or completed (or grounding,
        extraction or a GEEK self-answer gave one), else the LLM's."""
        if self.decision in _ANSWER_FROM_READER:
            return self.reader_answer
        return self.llm_answer


@dataclass
class Branch:
    """One round's Chain-of-Query: a branch of the Tree-of-Reasoning.

    ``parent`` is (round, position) of the node that received feedback and that this branch grows
    from; None for the first branch, which grows from the root (the question).
    """

    round: int
    raw_text: str  # what the model wrote, verbatim
    nodes: list[Node] = field(default_factory=list)
    parent: tuple[int, int] | None = None
    feedback: str | None = None  # the feedback prompt sent after this branch, if any
    final_content: str | None = None  # the [Final Content] the model wrote in this round


@dataclass
class Reference:
    """A ``[mark]`` in the final content, resolved to the passage that backs it."""

    mark: int
    passage: Passage
    span: tuple[int, int] | None  # answering span within passage.text
    query: str  # the node's query
    answer: str  # the node's answer on the final path

    @property
    def span_text(self) -> str:
        if self.span is None:
            return ""
        return self.passage.text[self.span[0] : self.span[1]]


@dataclass
class AnswerResult:
    question: str
    mode: str  # searchain | coq | direct | rag | genground | geek
    final_content: str  # answer text with [n] marks; every mark resolves to a Reference
    answer: str  # the short answer (final content without marks)
    references: list[Reference] = field(default_factory=list)
    path: list[Node] = field(default_factory=list)  # the correct reasoning path R, in order
    branches: list[Branch] = field(default_factory=list)  # the Tree-of-Reasoning
    rounds: int = 0
    # finish | r_max | repeated_chain | stalled | unparseable | cancelled | no_ir
    stop_reason: str = "finish"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    # When a first answer was on screen (a SearChain draft, ``reasoning.draft_answer``), in
    # seconds from the start; None without one. Bookkeeping of this run, like ``seconds``.
    first_answer_seconds: float | None = field(default=None, compare=False)
    # When the tree's first step showed (SearChain), seconds from the start; None without one.
    first_node_seconds: float | None = field(default=None, compare=False)
    # The follow-up as rewritten from the conversation and answered, when it differs from
    # ``question`` (what the user typed); None when the question was answered as typed.
    standalone_question: str | None = None
    # Tokens per phase, every model call counted: {"chain" | "final" | "reader" | "rewrite":
    # [prompt, completion]}; they add up to prompt_tokens / completion_tokens. Bookkeeping, not
    # part of the answer: left out of ==, and not kept by the conversation database (the totals
    # are); JSON exports carry it.
    tokens_by_phase: dict[str, list[int]] = field(default_factory=dict, compare=False)
    # What each phase's calls cost: {phase: {prompt, evaluated, completion, seconds,
    # prompt_seconds, calls}} (``parts.add_cost``), for `searchain bench loop`. Bookkeeping of
    # this run only: left out of ==, not kept by the conversation database nor read back.
    costs_by_phase: dict[str, dict[str, float]] = field(default_factory=dict, compare=False)

    @property
    def searched_question(self) -> str:
        """The question the chain, retrieval and tracing actually worked on."""
        return self.standalone_question or self.question


def judge_agreement(llm_answer: str | None, reader_answer: str | None, query: str, passage_text: str) -> str:
    """The decision for an LLM answer the reader did not (or could not) correct.

    ``verified`` needs all three: the reader found an answer (a non-empty span), it agrees with
    the LLM's (NotEqual is false), and the passage says what the LLM's answer says (its words
    beyond the query's own are in the passage) -- a reader span "Magazine" agrees with
    "Arthur's Magazine", but a passage about another magazine does not back it.
    Otherwise ``no_answer`` (no span) or ``not_confirmed``.
    """
    from ..metrics import not_equal

    if not (reader_answer or "").strip():
        return DECISION_NO_ANSWER
    if not_equal(reader_answer, llm_answer) or not answer_in_passage(llm_answer, query, passage_text):
        return DECISION_NOT_CONFIRMED
    return DECISION_PASS


def answer_in_passage(answer: str | None, query: str, passage_text: str) -> bool:
    """Whether every content word of ``answer`` that ``query`` does not already contain occurs in
    ``passage_text`` (so "The father of X is Peter Schmeichel." needs only "Peter Schmeichel")."""
    from .inmemory import content_words

    words = set(content_words(answer or "")) - set(content_words(query))
    if not words:
        return False  # an answer that only restates the query says nothing the passage could back
    return words <= set(content_words(passage_text))


def honest_decision(node: Node) -> str:
    """The decision to show for ``node``: its own, except for a node stored before unconfirmed
    answers were told apart (decision "verified" with the old plain "llm" source), which is
    judged again from the reader answer and passage it kept."""
    if node.decision != DECISION_PASS or node.source != SOURCE_LLM:
        return node.decision
    if node.passage is None:
        return DECISION_NO_ANSWER
    return judge_agreement(node.llm_answer, node.reader_answer, node.query, node.passage.text)


def honest_source(node: Node) -> str:
    """The knowledge source of a node on the path, one of ``SOURCES`` (legacy "llm" judged again)."""
    if node.source != SOURCE_LLM:
        return node.source
    # A GenGround step whose cited evidence confirmed the model's answer keeps the "llm" source
    # with a supported decision: that is verified too.
    return SOURCE_LLM_VERIFIED if honest_decision(node) in SUPPORTED_DECISIONS else SOURCE_LLM_UNVERIFIED
