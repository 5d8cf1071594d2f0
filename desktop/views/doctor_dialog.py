"""Help > Check set-up: the installation's health (``searchain.doctor``), each finding with its fix.

The dialog only shows what it is given and asks for more through signals: the main window runs
the checks on a worker (they read files and import llama.cpp) and calls ``show_checks``. "Copy
report" puts the whole plain-text report (checks, system, last log lines) on the clipboard for
a problem report. Every finding is data (paths, file contents in error messages): escaped.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from searchain.reasoning import DECISION_PASS
from searchain.units import counted

from ..colours import colours_for

STATUS_LABELS = {"ok": "OK", "warn": "Warning", "fail": "Problem"}
# Where in the app a finding of each area is fixed: a link under it emits fix_requested(area).
FIX_LINKS = {"settings": "Open Settings…", "model": "Model catalogue…", "reader": "Open Settings…",
             "reranker": "Open Settings…", "corpus": "Manage corpora…"}


class DoctorDialog(QDialog):
    recheck_requested = Signal()
    check_data_requested = Signal()
    open_logs_requested = Signal()
    fix_requested = Signal(str)  # a Check's area

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Check set-up")
        self.resize(720, 520)
        self.checks: list = []
        self.report = ""
        self.summary = QLabel(self)
        self.summary.setObjectName("doctorSummary")
        self.summary.setWordWrap(True)
        self.body = QTextBrowser(self)
        self.body.setObjectName("doctorChecks")
        self.body.setAccessibleName("Set-up checks")
        self.body.setOpenLinks(False)
        self.body.anchorClicked.connect(self._on_link)
        self.recheck = QPushButton("Check again", self)
        self.recheck.clicked.connect(self.recheck_requested)
        self.check_data = QPushButton("Check data", self)
        self.check_data.setToolTip("Also read every database and index through: integrity, sizes and "
                                   "checksums, and leftovers of stopped jobs (a minute or more for "
                                   "large corpora; only reports, deletes nothing)")
        self.check_data.clicked.connect(self.check_data_requested)
        self.copy = QPushButton("Copy report", self)
        self.copy.setToolTip("Copy the checks, the versions of the parts and the last log lines, "
                             "to paste into a problem report")
        self.copy.clicked.connect(self.copy_report)
        logs = QPushButton("Open log folder", self)
        logs.clicked.connect(self.open_logs_requested)
        close = QPushButton("Close", self)
        close.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        for button in (self.recheck, self.check_data, self.copy, logs):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.body, 1)
        layout.addLayout(buttons)
        self.show_running()

    def show_running(self) -> None:
        self.summary.setText("Checking the settings, models, corpora and conversation history…")
        self.recheck.setEnabled(False)
        self.check_data.setEnabled(False)
        self.copy.setEnabled(False)

    def show_checks(self, checks: list, report: str) -> None:
        self.checks, self.report = list(checks), report
        counts = {status: sum(c.status == status for c in checks) for status in STATUS_LABELS}
        if counts["fail"]:
            verdict = (f"{counted(counts['fail'], 'problem')} "
                       f"{'needs' if counts['fail'] == 1 else 'need'} fixing; each says how.")
        elif counts["warn"]:
            verdict = "Everything needed works; some parts could be better."
        else:
            verdict = "Everything is in order."
        self.summary.setText(f"{verdict} ({counts['ok']} OK, {counted(counts['warn'], 'warning')}, "
                             f"{counted(counts['fail'], 'problem')})")
        self.recheck.setEnabled(True)
        self.check_data.setEnabled(True)
        self.copy.setEnabled(bool(report))
        self._render()

    def show_failure(self, message: str) -> None:
        self.summary.setText(f"The check could not run: {message}")
        self.recheck.setEnabled(True)
        self.check_data.setEnabled(True)

    def _on_link(self, url) -> None:
        if url.scheme() == "fix":
            self.fix_requested.emit(url.path())

    def copy_report(self) -> None:
        QGuiApplication.clipboard().setText(self.report)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.checks:
            self._render()

    def _render(self) -> None:
        colours = colours_for(self.palette())
        tint = {"ok": colours.badge(DECISION_PASS), "warn": colours.warning, "fail": colours.error}
        # Problems first, then warnings: what needs doing is at the top.
        order = {"fail": 0, "warn": 1, "ok": 2}
        rows = []
        for c in sorted(self.checks, key=lambda c: order.get(c.status, 3)):
            link = (f' <a href="fix:{c.area}">{FIX_LINKS[c.area]}</a>'
                    if c.status != "ok" and c.area in FIX_LINKS else "")
            fix = (f'<div style="margin-left:1.5em; color:{colours.muted}">Fix: {html.escape(c.fix)}{link}</div>'
                   if (c.fix or link) and c.status != "ok" else "")
            rows.append(f'<p style="margin:0 0 8px 0"><b style="color:{tint.get(c.status, colours.muted)}">'
                        f'{STATUS_LABELS.get(c.status, c.status)}</b> &nbsp;<b>{html.escape(c.area)}</b>: '
                        f'{html.escape(c.summary)}{fix}</p>')
        self.body.setHtml("".join(rows))
