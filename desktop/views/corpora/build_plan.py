"""Planned index builds in the corpus manager: plan first, show the estimate, ask before a long one.

Every index build is planned on the worker first (a short calibration the first time,
``searchain.index.build.plan``). The plan's estimate is shown as the build starts, and a build estimated
at over an hour starts only after the user agrees (``ask_to_start``, which tests replace).
*Update index* plans and builds; it re-embeds everything only when the index was made by another
embedding model, after asking. Kept apart from ``corpus_manager`` so the dialog stays small.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from ...context import AppContext
from ...workers import Job


class PlannedIndexBuilds:
    """The plan-then-build actions of ``CorpusManagerDialog`` (mixed into it).

    Relies on the dialog's ``ctx``, ``status``, ``job``, ``index_states``, ``confirm_destructive``
    and its job plumbing (``_start``, ``_end``, ``_on_done``).
    """

    def update_index(self, name: str | None) -> Job | None:
        """Bring ``name``'s index up to date; re-embeds everything only for another model's index."""
        if not name:
            return None
        rebuild = self.index_states.get(name) == "mismatch"
        if rebuild and self.confirm_destructive and QMessageBox.question(
                self, "Re-embed corpus",
                f"The index of '{name}' was made with another embedding model. Re-embed all of its "
                "passages with the current one? This can take a while for a large corpus.") \
                != QMessageBox.StandardButton.Yes:
            return None
        ctx = self.ctx
        return self._start(f"Planning the index of '{name}'",
                           lambda on_event, cancel: plan_index_build(ctx, name, rebuild, on_event, cancel),
                           lambda plan: self.start_build(name, rebuild, plan))

    def _after_ingest(self, name: str, rebuild: bool, report, plan) -> None:
        self.ingest_note = problems_note(report)
        if plan is None:
            self._on_done(report)
            return
        added = getattr(report, "added", None)
        self.start_build(name, rebuild, plan, f"{added:,} passages stored. " if isinstance(added, int) else "")

    def start_build(self, name: str, rebuild: bool, plan, done_before: str = "") -> Job | None:
        """Build ``name``'s index as ``plan`` says; a long build only once the user agrees."""
        from searchain.units import duration

        self.job = None  # the planning job is over; its outcome is the build's
        if plan.needs_confirmation and not self.ask_to_start(name, plan):
            self._end(f"{done_before}The index of '{name}' was not built; Update index builds it "
                      "when you are ready.\n" + plan.summary() + self.take_ingest_note(), "cancelled")
            return None
        ctx = self.ctx

        def work(on_event, cancel):
            report = _build_index(ctx, name, rebuild, on_event, cancel)
            ctx.workspace().forget_retriever(name)
            return report

        verb = "Re-embedding" if rebuild and plan.models and plan.models[0].passages else "Updating the index of"
        job = self._start(f"{verb} '{name}' (about {duration(plan.est_seconds)})", work)
        if job is not None:
            self.status.setText(done_before + plan.summary())
        return job

    def ask_to_start(self, name: str, plan) -> bool:
        """Whether to start a build estimated at over an hour (tests replace this)."""
        from searchain.units import duration

        box = QMessageBox(QMessageBox.Icon.Question, "Long index build",
                          f"Building the index of '{name}' will take about {duration(plan.est_seconds)} "
                          "on this machine. Start it now? It can be cancelled, and continues later "
                          "from where it stopped.", QMessageBox.StandardButton.Yes |
                          QMessageBox.StandardButton.No, self)
        box.setTextFormat(Qt.TextFormat.PlainText)  # corpus and model names are data
        box.setDetailedText(plan.summary())
        return box.exec() == QMessageBox.StandardButton.Yes


SHOWN_PROBLEMS = 8


def problems_note(report) -> str:
    """What an ingest could not read, one line per file or record, for the status text."""
    problems = list(getattr(report, "problems", None) or [])
    skipped = getattr(report, "skipped", 0) or len(problems)
    if not skipped:
        return ""
    lines = [f"\n{skipped:,} could not be read and were left out (the rest were read):"]
    for p in problems[:SHOWN_PROBLEMS]:
        lines.append(f"  {Path(p.file).name}{f' line {p.line}' if p.line else ''}: {p.reason}")
    if skipped > SHOWN_PROBLEMS:
        lines.append(f"  ... and {skipped - SHOWN_PROBLEMS:,} more")
    return "\n".join(lines)


def plan_index_build(ctx: AppContext, name: str, rebuild: bool, on_event, cancel):
    """The build plan of ``name``'s index (run on the worker: it may calibrate the embedder)."""
    return ctx.workspace().plan_index_build(name, rebuild=rebuild, on_event=on_event, cancel=cancel)


def _build_index(ctx: AppContext, name: str, rebuild: bool, on_event, cancel):
    return ctx.workspace().build_index(name, rebuild=rebuild, on_event=on_event, cancel=cancel)
