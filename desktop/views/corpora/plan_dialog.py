"""The plan of *Get Wikipedia…* shown before anything is downloaded: what the job will fetch and
store, and how long each stage takes on this machine, as a table the user can read at a glance
(the CLI prints the same plan as text: ``GetPlan.summary``), then Start or Not now.

Every cell is plain text: names and addresses in a plan come from the network."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTableWidgetItem, QVBoxLayout, QWidget

from searchain.units import counted, duration, size

from ...render import plain_tooltip
from ..tables import read_only_table

COLUMNS = ("Stage", "Time", "Download", "Disk", "Memory", "Notes")
STAGE_NAMES = {"download": "Download", "ingest": "Read the articles", "embed": "Embed",
               "embed-second": "Embed (second model)", "index": "Build the index"}


class PlanDialog(QDialog):
    """``exec()`` is Accepted when the user starts the job."""

    def __init__(self, plan, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Get Wikipedia: the plan")
        self.resize(860, 380)
        long = " This will take over an hour." if plan.needs_confirmation else ""
        self.heading = _label(
            f"Wikipedia ({plan.lang}, snapshot {plan.snapshot}, from {plan.where}) as the corpus "
            f"'{plan.corpus}': {counted(plan.files, 'file')}, {size(plan.download_bytes)}, about "
            f"{plan.passages:,} passages. About {duration(plan.est_seconds)} on this machine.{long}", self)
        self.table = read_only_table(self, "planStages", COLUMNS, stretch=len(COLUMNS) - 1)
        self.table.setSelectionMode(self.table.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a table to read, not to pick from
        for stage in plan.stages:
            self._row(STAGE_NAMES.get(stage.name, stage.name), duration(stage.seconds),
                      size(stage.download_bytes) if stage.download_bytes else "",
                      f"+{size(stage.disk_bytes)}", size(stage.ram_bytes), stage.note)
        free = f"{size(plan.free_disk_bytes)} free" if plan.free_disk_bytes is not None else ""
        self._row("In all", duration(plan.est_seconds), size(plan.download_bytes),
                  f"+{size(plan.disk_bytes)}", "", free, bold=True)
        notes = []
        if not plan.enough_disk:
            notes.append(f"Not enough disk: this needs about {size(plan.disk_bytes)} and "
                         f"{size(plan.free_disk_bytes)} is free. Free some space first, or keep "
                         "SearChain's data on a larger disk: start the app with $SEARCHAIN_HOME "
                         "set to a folder there.")
        notes += [f"Faster: {advice}" for advice in plan.advice]
        notes.append("It can be cancelled, and continues later from where it stopped.")
        self.notes = _label("\n".join(notes), self)
        buttons = QDialogButtonBox(self)
        self.start_button = buttons.addButton("Start", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton("Not now", QDialogButtonBox.ButtonRole.RejectRole)
        self.start_button.setDefault(plan.enough_disk)  # Enter does not start what cannot finish
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.notes)
        layout.addWidget(buttons)

    def _row(self, *cells: str, bold: bool = False) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip(plain_tooltip(text))  # a long note is cut in its cell, whole here
            if bold:
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            if 1 <= col <= 4:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, col, item)

    def cells(self) -> list[list[str]]:
        """The table as text, row by row (tests, and anyone reading the dialog programmatically)."""
        return [[self.table.item(r, c).text() for c in range(self.table.columnCount())]
                for r in range(self.table.rowCount())]


def _label(text: str, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label
