"""Answering questions: SearChain's loop (Chain-of-Query verified and completed by IR), the
baselines, and the GenGround and GEEK strategies, all reporting typed events as they go.

- ``engine.SearChainEngine`` answers one question in any mode; ``result.AnswerResult`` is what
  it produces (the tree, the verified path, the traced answer and its references).
- ``parts``: what every strategy is built from; ``chain/``: the Chain-of-Query as text;
  ``strategies/``: GenGround and GEEK.

The names below are what the app uses (see ``searchain.faces``).
"""

from ..faces import face

__all__, __getattr__, __dir__ = face(__name__, {
    "result": ("AnswerResult", "Reference", "Node", "Branch", "honest_decision", "honest_source",
               "DECISION_PASS", "DECISION_NOT_CONFIRMED", "DECISION_NO_ANSWER", "DECISION_NOT_READ",
               "DECISION_CORRECTED",
               "DECISION_COMPLETED", "DECISION_DUPLICATE", "DECISION_UNCHECKED", "DECISION_GROUNDED",
               "DECISION_EMPTY", "DECISION_UNGROUNDED", "DECISION_EXTRACTED", "DECISION_SELF_ANSWERED",
               "SOURCE_LLM_VERIFIED", "SOURCE_LLM_UNVERIFIED", "SOURCE_IR_CORRECTED", "SOURCE_IR_COMPLETED",
               "SOURCE_LLM", "SOURCE_IR_GROUNDED", "SOURCE_IR_EXTRACTED"),
    "events": ("QuestionRewritten", "RoundStarted", "ChainDrafted", "DraftStarted", "ChainGenerated", "ChainUnreadable", "NodeChecked",
               "FeedbackGiven", "TokenGenerated", "Done", "Failed", "PHASE_CHAIN", "PHASE_FINAL", "PHASE_REWRITE",
               "PHASE_DRAFT", "streamed_text_action"),
    "modes": ("MODES", "STRATEGIES", "MODE_SEARCHAIN", "MODE_RAG"),
    "strategies.view": ("describe as describe_strategy", "describe_event as describe_strategy_event"),
})
