"""*Get Wikipedia…* in the corpus manager: pick language, source and snapshot; see the plan;
then one cancellable job downloads, checks, ingests and indexes (``searchain.library``'s
``get_wikipedia``), on the manager's worker with its progress row.

The file list is fetched and the plan made on the worker (network), then shown before anything
is downloaded: the user starts the job or not (``confirm_plan``, which tests replace). A
cancelled or failed job keeps what it finished; *Get Wikipedia…* with the same choices again
continues it.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QWidget,
)

SOURCES = (("hub", "Hugging Face Hub: clean article text (parquet)"),
           ("dump", "dumps.wikimedia.org: the XML dump"))
LANGS = (("simple", "Simple English (small: ~0.3 GB)"), ("en", "English (large: ~12-22 GB)"))


class WikipediaChoiceDialog(QDialog):
    """Language (a listed one, or any code typed in), source and snapshot."""

    def __init__(self, parent: QWidget | None = None):
        from searchain.library import WIKIPEDIA_SNAPSHOTS

        super().__init__(parent)
        self.setWindowTitle("Get Wikipedia")
        self.snapshots = dict(WIKIPEDIA_SNAPSHOTS)
        self.lang = QComboBox(self)
        self.lang.setObjectName("wikiLang")
        self.lang.setEditable(True)
        for code, text in LANGS:
            self.lang.addItem(text, code)
        self.source = QComboBox(self)
        self.source.setObjectName("wikiSource")
        for code, text in SOURCES:
            self.source.addItem(text, code)
        self.snapshot = QLineEdit(self.snapshots["hub"], self)
        self.snapshot.setObjectName("wikiSnapshot")
        self.snapshot.setPlaceholderText("YYYYMMDD")
        self.source.currentIndexChanged.connect(
            lambda _: self.snapshot.setText(self.snapshots.get(self.source.currentData(), "")))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok |
                                   QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Show the plan")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Language:", self.lang)
        form.addRow("Source:", self.source)
        form.addRow("Snapshot:", self.snapshot)
        form.addRow(buttons)

    def choice(self):
        from searchain.library import WikipediaChoice

        index = self.lang.findText(self.lang.currentText())
        lang = self.lang.itemData(index) if index >= 0 else self.lang.currentText().strip().lower()
        return WikipediaChoice(lang=lang or "simple", source=self.source.currentData(),
                               snapshot=self.snapshot.text().strip() or None)


class WikipediaGetter:
    """The *Get Wikipedia…* action of one ``CorpusManagerDialog``."""

    def __init__(self, dialog):
        self.dialog = dialog

    def choose(self):
        """Ask for the choices, then plan (None: the user closed the dialog)."""
        picker = WikipediaChoiceDialog(self.dialog)
        if picker.exec() != QDialog.DialogCode.Accepted:
            return None
        return self.plan(picker.choice())

    def plan(self, choice):
        """Fetch the file list and make the plan on the worker; then show it and ask."""
        from searchain.library import plan_wikipedia

        ctx = self.dialog.ctx

        def work(on_event, cancel):
            return plan_wikipedia(ctx.paths, ctx.settings, choice)

        return self.dialog._start(f"Looking up Wikipedia ({choice.lang}, {choice.snap})", work,
                                  on_done=lambda result: self._planned(choice, *result))

    def _planned(self, choice, plan, release):
        self.dialog.job = None  # the planning job is over; its outcome is the get's
        if not self.confirm_plan(plan):
            from searchain.units import duration, size

            self.dialog._end(f"Not started: Wikipedia ({plan.lang}, {plan.snapshot}) as '{plan.corpus}' "
                             f"would download {size(plan.download_bytes)} and take about "
                             f"{duration(plan.est_seconds)} on this machine.", "cancelled")
            return None
        return self.start(choice, release, plan)

    def start(self, choice, release=None, plan=None):
        from searchain.library import get_wikipedia
        from searchain.units import duration

        ctx = self.dialog.ctx

        def work(on_event, cancel):
            report = get_wikipedia(ctx.paths, ctx.settings, choice, release=release,
                                   on_event=on_event, cancel=cancel)
            ctx.workspace().forget_retriever(choice.corpus)
            return report

        about = f" (about {duration(plan.est_seconds)})" if plan is not None else ""
        # The plan was read in its table before the start: the status line says what runs.
        return self.dialog._start(f"Getting Wikipedia ({choice.lang}) as '{choice.corpus}'{about}",
                                  work, on_done=self._done)

    def confirm_plan(self, plan) -> bool:
        """Show the plan and ask to start (tests replace this)."""
        from .plan_dialog import PlanDialog

        return PlanDialog(plan, self.dialog).exec() == QDialog.DialogCode.Accepted

    def _done(self, report) -> None:
        self.dialog._end(f"Wikipedia is ready as '{report.corpus}': {report.passages:,} passages, "
                         f"{report.indexed:,} indexed; questions now use it.", "done")
        self.dialog.select(report.corpus)
        self.dialog.active_changed.emit(report.corpus)
