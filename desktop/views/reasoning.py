"""The reasoning panel: the Tree-of-Reasoning, one branch per CoQ round, drawn live.

Each node row shows its query, the LLM's answer, the reader's answer and confidence, and a badge
for its fate (verified / not confirmed / no answer in passage / corrected by IR / completed by IR /
skipped as duplicate). Text is set
with ``setText`` (plain text; Qt item views never interpret it as HTML).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from searchain.reasoning import (
    SOURCE_IR_COMPLETED, SOURCE_IR_CORRECTED, SOURCE_LLM_UNVERIFIED, SOURCE_LLM_VERIFIED, AnswerResult, Branch, Node,
    honest_decision, honest_source,
)
from searchain.units import counted

from ..colours import colours_for
from ..render import BADGE_EXPLANATIONS, COLUMN_TIPS, badge, format_confidence, node_summary, plain_tooltip
from .strategy import StrategyLog

# The fate (verified, corrected by IR, ...) second: at the panel's default width the query and
# what became of it are in view, and the answers and confidence behind them scroll.
COLUMNS = ("Query", "Fate", "LLM answer", "Reader answer", "Confidence")
COL_QUERY, COL_FATE, COL_LLM, COL_READER, COL_CONF = range(len(COLUMNS))
NODE_ROLE = Qt.ItemDataRole.UserRole + 1
# Stop reasons that need words to be understood (the rest read as they are).
_STOP_WORDS = {
    "unparseable": "unparseable (the model wrote no [Query]/[Answer] step that could be read; "
                   "the answer is its own text, unchecked)",
    "stalled": "stalled (the model did not act on IR's feedback)",
    "repeated_chain": "repeated chain (the model repeated itself after the same feedback)",
}
# How the summary line names each knowledge source of the final path (paper Table 2).
_SOURCE_WORDS = {
    SOURCE_LLM_VERIFIED: "from the LLM, verified",
    SOURCE_LLM_UNVERIFIED: "from the LLM, not confirmed",
    SOURCE_IR_CORRECTED: "corrected by IR",
    SOURCE_IR_COMPLETED: "completed by IR",
}


class ReasoningPanel(QWidget):
    """Tree of rounds and nodes. ``node_activated(Node)`` fires on double-click of a node."""

    node_activated = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("reasoningTree")
        self.tree.setAccessibleName("Reasoning tree")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        for col, name in enumerate(COLUMNS):
            self.tree.headerItem().setToolTip(col, COLUMN_TIPS.get(name, ""))
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setWordWrap(False)
        header = self.tree.header()
        # The query gets the most room; the rest scroll horizontally when the panel is narrow.
        for col, width in ((COL_QUERY, 220), (COL_FATE, 160), (COL_LLM, 110), (COL_READER, 110), (COL_CONF, 70)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(col, width)
        header.setStretchLastSection(True)
        self.tree.itemDoubleClicked.connect(self._on_double_click)

        self.summary = QLabel("The reasoning tree appears here while an answer is built.", self)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.summary.setObjectName("reasoningSummary")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.strategy_log = StrategyLog(self)  # GenGround / GEEK steps; hidden for SearChain
        layout.addWidget(self.summary)
        layout.addWidget(self.strategy_log)
        layout.addWidget(self.tree, 1)
        self._rounds: dict[int, QTreeWidgetItem] = {}
        self._nodes: dict[tuple[int, int], QTreeWidgetItem] = {}

    # -- building the tree -------------------------------------------------------------------
    def clear(self, message: str = "") -> None:
        self.tree.clear()
        self.strategy_log.clear_log()
        self._rounds.clear()
        self._nodes.clear()
        self.summary.setText(message or "The reasoning tree appears here while an answer is built.")

    def start_round(self, round_number: int) -> QTreeWidgetItem:
        item = self._rounds.get(round_number)
        if item is None:
            item = QTreeWidgetItem([f"Round {round_number}", "", "", "", ""])
            font = item.font(COL_QUERY)
            font.setBold(True)
            item.setFont(COL_QUERY, font)
            item.setFirstColumnSpanned(False)
            self.tree.addTopLevelItem(item)
            self._rounds[round_number] = item
            item.setExpanded(True)
        self.summary.setText(f"Round {round_number}: the model is writing its chain of queries…")
        return item

    def add_branch(self, branch: Branch) -> None:
        """Show a round's chain (its nodes start unchecked); replaces any earlier copy of it."""
        parent = self.start_round(branch.round)
        parent.takeChildren()
        for node in branch.nodes:
            self._nodes.pop((node.round, node.position), None)
        if branch.parent is not None:
            parent.setText(COL_FATE, f"grows from round {branch.parent[0]}, node {branch.parent[1] + 1}")
        for node in branch.nodes:
            item = QTreeWidgetItem()
            parent.addChild(item)
            self._nodes[(node.round, node.position)] = item
            self._fill(item, node)
        self.summary.setText(f"Round {branch.round}: checking {counted(len(branch.nodes), 'node')} against the corpus…")

    def update_node(self, node: Node) -> None:
        """Refresh one node after IR checked it (adds it if its branch was not shown yet)."""
        item = self._nodes.get((node.round, node.position))
        if item is None:
            parent = self.start_round(node.round)
            item = QTreeWidgetItem()
            parent.addChild(item)
            self._nodes[(node.round, node.position)] = item
        self._fill(item, node)
        self.tree.scrollToItem(item)

    def note_feedback(self, round_number: int, text: str) -> None:
        item = self._rounds.get(round_number)
        if item is not None:
            item.setToolTip(COL_QUERY, plain_tooltip(text))
        self.summary.setText(f"Round {round_number}: IR sent feedback; the model is revising its chain…")

    def show_result(self, result: AnswerResult) -> None:
        """Draw the whole tree of a finished answer (also used when reopening a conversation)."""
        from searchain.reasoning import describe_strategy

        self.clear()
        for branch in result.branches:
            self.add_branch(branch)
        self.strategy_log.show_lines(describe_strategy(result))
        sources: dict[str, int] = {}
        for node in result.path:
            source = honest_source(node)
            sources[source] = sources.get(source, 0) + 1
        known = ", ".join(f"{count} {_SOURCE_WORDS.get(src, src)}" for src, count in sorted(sources.items()))
        stopped = _STOP_WORDS.get(result.stop_reason, result.stop_reason)
        self.summary.setText(
            f"{counted(result.rounds, 'round')}, stopped: {stopped}. "
            f"Final path: {counted(len(result.path), 'node')}{' — ' + known if known else ''}."
        )

    def note_strategy(self, line: str) -> None:
        """One live GenGround / GEEK step (plain text)."""
        self.strategy_log.add_line(line)
        self.summary.setText(line)

    def set_collapsed(self, collapsed: bool) -> None:
        for item in self._rounds.values():
            item.setExpanded(not collapsed)

    # -- helpers -----------------------------------------------------------------------------
    def node_item(self, round_number: int, position: int) -> QTreeWidgetItem | None:
        return self._nodes.get((round_number, position))

    def round_count(self) -> int:
        return self.tree.topLevelItemCount()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_nodes"):
            colours = colours_for(self.palette())  # light/dark theme switched: recolour badges
            for item in self._nodes.values():
                node = item.data(COL_QUERY, NODE_ROLE)
                if node is not None:
                    item.setForeground(COL_FATE, QBrush(QColor(badge(honest_decision(node), colours)[1])))

    def _fill(self, item: QTreeWidgetItem, node: Node) -> None:
        # A run stored before unconfirmed answers were told apart is judged again, honestly.
        decision = honest_decision(node)
        label, colour = badge(decision, colours_for(self.palette()))
        item.setText(COL_QUERY, f"{node.position + 1}. {node.query}")
        item.setText(COL_LLM, "[unsolved]" if node.unsolved else (node.llm_answer or ""))
        item.setText(COL_READER, node.reader_answer or "")
        item.setText(COL_CONF, format_confidence(node.confidence))
        item.setText(COL_FATE, label)
        item.setForeground(COL_FATE, QBrush(QColor(colour)))
        font = item.font(COL_FATE)
        font.setBold(True)
        item.setFont(COL_FATE, font)
        item.setToolTip(COL_QUERY, plain_tooltip(node_summary(node)))  # the model's text
        item.setToolTip(COL_FATE, BADGE_EXPLANATIONS.get(decision, ""))
        item.setData(COL_QUERY, NODE_ROLE, node)

    def _on_double_click(self, item: QTreeWidgetItem, _column: int) -> None:
        node = item.data(COL_QUERY, NODE_ROLE)
        if node is not None and node.passage is not None:
            self.node_activated.emit(node)
