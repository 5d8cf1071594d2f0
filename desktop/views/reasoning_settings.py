"""The settings dialog's Reasoning group: the answering mode, the reader and SearChain's knobs
(θ, α, r_max, top-k, how chains are written and IR's corrections reach them, yes/no steps, the final answer and
the checked steps in it, the draft, the short answer, passages for the whole question, follow-ups, GEEK's
alternatives). It reads and writes one
``ReasoningSettings``."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QSpinBox, QWidget

from searchain.config import ReasoningSettings

MODE_LABELS = {
    "searchain": "SearChain (CoQ + IR verification and completion)",
    "coq": "Chain-of-Query without IR",
    "direct": "Baseline: direct answer",
    "rag": "Baseline: retrieve then read",
    "genground": "GenGround (generate, then ground in passages)",
    "geek": "GEEK (actions, extraction, branch vote; yes/no questions)",
}
READER_LABELS = {"auto": "Automatic", "dpr": "DPR reader", "llm": "The LLM as reader"}
FINAL_ANSWER_LABELS = {"passages": "Read like RAG: the question's passages, then the chain's (best measured)",
                       "tracing": "The paper's tracing: the chain's query-answer pairs"}
CHAIN_STEPS_LABELS = {"stepwise": "Step by step, each checked before the next (fastest)",
                      "whole": "Whole chains, then checked (the paper's)",
                      "whole_no_final": "Whole chains without their closing line"}
FINAL_STEPS_LABELS = {"off": "Not listed: the final answer reads the passages (best measured)",
                      "found": "Listed where IR answered the last step and the draft lacks it",
                      "disagree": "Listed; asked again where the draft lacks the last checked answer",
                      "always": "Listed; asked again after any checked step"}
FEEDBACK_STYLE_LABELS = {"turn": "Sent back with the passage; the model writes a new chain (the paper's)",
                         "inline": "Written into the chain in place of the model's answer; the chain goes on"}


def spin_box(parent: QWidget, low: int, high: int, value: int, name: str, step: int = 1,
             special: str = "") -> QSpinBox:
    box = QSpinBox(parent)
    box.setObjectName(name)
    box.setRange(low, high)
    box.setSingleStep(step)
    if special:
        box.setSpecialValueText(special)
    box.setValue(int(value))
    return box


def double_box(parent: QWidget, low: float, high: float, value: float, name: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox(parent)
    box.setObjectName(name)
    box.setRange(low, high)
    box.setDecimals(2)
    box.setSingleStep(0.05)
    box.setValue(float(value))
    return box


def combo_box(parent: QWidget, labels: dict[str, str], value: str, name: str) -> QComboBox:
    box = QComboBox(parent)
    box.setObjectName(name)
    for key, label in labels.items():
        box.addItem(label, key)
    select(box, value)
    return box


def select(box: QComboBox, value: str) -> None:
    box.setCurrentIndex(max(0, box.findData(value)))


class ReasoningBox(QGroupBox):
    """The Reasoning group; ``load`` fills it from settings, ``apply_to`` writes them back."""

    def __init__(self, reasoning: ReasoningSettings, parent: QWidget | None = None):
        super().__init__("Reasoning", parent)
        self.mode = combo_box(self, MODE_LABELS, reasoning.mode, "mode")
        self.reader = combo_box(self, READER_LABELS, reasoning.reader, "reader")
        self.theta = double_box(self, 0.0, 100.0, reasoning.theta, "theta")
        self.alpha = double_box(self, 0.0, 1.0, reasoning.alpha, "alpha")
        self.r_max = spin_box(self, 1, 20, reasoning.r_max, "rMax")
        self.top_k = spin_box(self, 1, 20, reasoning.top_k, "topK")
        self.final_answer = combo_box(self, FINAL_ANSWER_LABELS, reasoning.final_answer, "finalAnswer")
        self.chain_steps = combo_box(self, CHAIN_STEPS_LABELS, reasoning.chain_steps, "chainSteps")
        self.chain_steps.setToolTip("How SearChain's model writes each round's chain of queries. Step by step "
                                    "writes nothing that a correction would throw away (models run here only; "
                                    "a server gets whole chains).")
        self.feedback_style = combo_box(self, FEEDBACK_STYLE_LABELS, reasoning.feedback_style, "feedbackStyle")
        self.feedback_style.setToolTip("How a step IR corrects or completes reaches the model when chains are "
                                       "written step by step. In place (the default), the model reads no whole "
                                       "passage again and writes no settled step again: answers took 2.6x plain "
                                       "RAG's time instead of 3.6x, about as many right (8 lost, 6 won of 200 "
                                       "HotpotQA questions).")
        self.final_steps = combo_box(self, FINAL_STEPS_LABELS, reasoning.final_steps, "finalSteps")
        self.final_steps.setToolTip("Whether the final answer also sees the chain's checked steps (\"Where was "
                                    "Teodor Vance born? Lisk [2]\"). Listing them where IR found the last "
                                    "answer lost 4 and won none of HotpotQA's first 25 questions, and took "
                                    "longer, so the default leaves them out.")
        self.read_yes_no_steps = QCheckBox("Read the passage of a yes/no step too", self)
        self.read_yes_no_steps.setObjectName("readYesNoSteps")
        self.read_yes_no_steps.setToolTip("A reader copies an answer out of a passage and cannot say yes or no: "
                                          "it found nothing for 33 of 36 such steps measured. Off, their passage "
                                          "is retrieved and shown but not read, a reader call fewer each.")
        self.draft_answer = QCheckBox("Show plain RAG's answer as a draft while SearChain checks it", self)
        self.draft_answer.setObjectName("draftAnswer")
        self.draft_after_first_step = QCheckBox("Show the chain's first step before writing the draft", self)
        self.draft_after_first_step.setObjectName("draftAfterFirstStep")
        self.draft_after_first_step.setToolTip("The tree's first step shows within one chain step of asking "
                                               "and the draft follows it; off, the draft comes first and the "
                                               "first step after it. The whole answer takes as long either way. "
                                               "A server's chains, written whole, always get the draft first.")
        self.draft_answer.toggled.connect(self.draft_after_first_step.setEnabled)
        self.concise_answer = QCheckBox("Cut an answer stated as a sentence to the words that answer", self)
        self.concise_answer.setObjectName("conciseAnswer")
        self.concise_answer.setToolTip("\"So the final answer is Kate Millett attended Oxford University\" gives "
                                       "the short answer \"Oxford\", highlighted in the cited passages; the answer "
                                       "text stays as written. One short model call when it applies.")
        self.question_passages = spin_box(self, 0, 10, reasoning.question_passages, "questionPassages",
                                          special="none: the chain's passages only")
        self.question_passages.setToolTip("Passages retrieved for the whole question that the final answer "
                                          "also reads and may cite, besides those the chain verified.")
        self.followup_turns = spin_box(self, 0, 10, reasoning.followup_turns, "followupTurns",
                                       special="off: take every question as typed")
        self.followup_turns.setToolTip("A question asked after earlier ones is first rewritten to stand "
                                       "alone (\"when was he born?\" names who), using this many earlier turns.")
        self.geek_branches = spin_box(self, 1, 9, reasoning.geek_branches, "geekBranches")
        self.geek_branches.setToolTip("GEEK: how many different sub-questions the model may try at each of a "
                                      "line's first two steps; each becomes a branch, and the branches vote. "
                                      "2 got as many answers right as the paper's 4 in less than half the "
                                      "time; 1 lost answers.")
        self.load(reasoning)
        form = QFormLayout(self)
        form.addRow("Mode:", self.mode)
        form.addRow("Reader:", self.reader)
        form.addRow("θ (reader confidence to correct):", self.theta)
        form.addRow("α (ROUGE-L consistency):", self.alpha)
        form.addRow("r_max (rounds):", self.r_max)
        form.addRow("Passages per query (top-k):", self.top_k)
        form.addRow("Chains written:", self.chain_steps)
        form.addRow("IR's corrections:", self.feedback_style)
        form.addRow("Yes/no steps:", self.read_yes_no_steps)
        form.addRow("Final answer:", self.final_answer)
        form.addRow("Checked steps in it:", self.final_steps)
        form.addRow("First answer:", self.draft_answer)
        form.addRow("", self.draft_after_first_step)
        form.addRow("Short answer:", self.concise_answer)
        form.addRow("Passages for the whole question:", self.question_passages)
        form.addRow("Follow-ups read with (earlier turns):", self.followup_turns)
        form.addRow("GEEK alternatives per step:", self.geek_branches)

    def load(self, reasoning: ReasoningSettings) -> None:
        """Every field from ``reasoning`` (the saved settings, or the defaults)."""
        for box, value in ((self.theta, reasoning.theta), (self.alpha, reasoning.alpha),
                           (self.r_max, reasoning.r_max), (self.top_k, reasoning.top_k),
                           (self.question_passages, reasoning.question_passages),
                           (self.followup_turns, reasoning.followup_turns),
                           (self.geek_branches, reasoning.geek_branches)):
            box.setValue(value)
        for combo, value in ((self.mode, reasoning.mode), (self.reader, reasoning.reader),
                             (self.final_answer, reasoning.final_answer), (self.chain_steps, reasoning.chain_steps),
                             (self.feedback_style, reasoning.feedback_style), (self.final_steps, reasoning.final_steps)):
            select(combo, value)
        self.draft_answer.setChecked(reasoning.draft_answer)
        self.draft_after_first_step.setChecked(reasoning.draft_after_first_step)
        self.draft_after_first_step.setEnabled(reasoning.draft_answer)
        self.concise_answer.setChecked(reasoning.concise_answer)
        self.read_yes_no_steps.setChecked(reasoning.read_yes_no_steps)

    def apply_to(self, reasoning: ReasoningSettings) -> None:
        reasoning.mode = self.mode.currentData()
        reasoning.reader = self.reader.currentData()
        reasoning.theta = self.theta.value()
        reasoning.alpha = self.alpha.value()
        reasoning.r_max = self.r_max.value()
        reasoning.top_k = self.top_k.value()
        reasoning.final_answer = self.final_answer.currentData()
        reasoning.chain_steps = self.chain_steps.currentData()
        reasoning.feedback_style = self.feedback_style.currentData()
        reasoning.final_steps = self.final_steps.currentData()
        reasoning.read_yes_no_steps = self.read_yes_no_steps.isChecked()
        reasoning.question_passages = self.question_passages.value()
        reasoning.draft_answer = self.draft_answer.isChecked()
        reasoning.draft_after_first_step = self.draft_after_first_step.isChecked()
        reasoning.concise_answer = self.concise_answer.isChecked()
        reasoning.followup_turns = self.followup_turns.value()
        reasoning.geek_branches = self.geek_branches.value()
