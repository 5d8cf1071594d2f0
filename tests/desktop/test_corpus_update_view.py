"""*Update* in the corpus manager: plan first, a cancellable job, and what changed shown after."""

import pytest

from desktop.context import AppContext
from desktop.views.corpora.manager import CorpusManagerDialog
from desktop.workers import JobRunner
from searchain.config import Settings

pytestmark = pytest.mark.slow  # real embedder and index


@pytest.fixture
def ctx(demo_home):
    return AppContext(demo_home, Settings.load(demo_home))


def make_manager(qtbot, ctx):
    dialog = CorpusManagerDialog(ctx, JobRunner())
    dialog.confirm_destructive = False
    dialog.ask_to_start = lambda name, plan: True
    dialog.ask_to_start_update = lambda name, plan: True
    qtbot.addWidget(dialog)
    return dialog


def notes(folder):
    folder.mkdir()
    for i, topic in enumerate(("herons nesting", "tide pools", "moss on stones", "owl calls")):
        (folder / f"note{i}.md").write_text(f"# Note {i}\n\nField notes about {topic} by the lake.\n",
                                            encoding="utf-8")
    return folder


def test_update_resyncs_a_folder_and_shows_what_changed(qtbot, ctx, tmp_path):
    folder = notes(tmp_path / "field")
    dialog = make_manager(qtbot, ctx)
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.add("field", folder)
    assert outcome.args == ["done"], dialog.status.text()
    (folder / "note1.md").write_text("# Note 1\n\nThe tide pools dried up in August.\n", encoding="utf-8")
    (folder / "note3.md").unlink()
    (folder / "note9.md").write_text("# Note 9\n\nA kingfisher by the reeds.\n", encoding="utf-8")
    plans = []
    real = dialog.start_update
    dialog.start_update = lambda name, source, plan: plans.append(plan) or real(name, source, plan)
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.update_corpus("field")
        assert not dialog.progress.isHidden() and not dialog.buttons["update"].isEnabled()
    assert outcome.args == ["done"], dialog.status.text()
    assert plans and plans[0].read.to_read == 2 and plans[0].read.removed == 1  # the cost came first
    status = dialog.status.text()
    assert "(files): 1 changed, 1 added, 1 removed, 2 unchanged" in status
    assert "passages embedded" in status and "note1.md" in status
    changes = dialog.changes.toPlainText().splitlines()
    assert not dialog.changes.isHidden()
    assert changes == [f"changed: {folder / 'note1.md'}", f"added: {folder / 'note9.md'}",
                       f"removed: {folder / 'note3.md'}"]
    assert dialog.buttons["update"].isEnabled()


def test_a_cancelled_update_keeps_the_corpus_and_the_next_one_finishes(qtbot, ctx, tmp_path):
    folder = notes(tmp_path / "field")
    dialog = make_manager(qtbot, ctx)
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000):
        dialog.add("field", folder)
    (folder / "note0.md").write_text("# Note 0\n\nHerons left in October.\n", encoding="utf-8")
    dialog.start_update_real = dialog.start_update

    def start_then_cancel(name, source, plan):
        job = dialog.start_update_real(name, source, plan)
        dialog.cancel_job()  # before the worker's first check point
        return job

    dialog.start_update = start_then_cancel
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.update_corpus("field")
    assert outcome.args == ["cancelled"]
    dialog.start_update = dialog.start_update_real
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.update_corpus("field")
    assert outcome.args == ["done"], dialog.status.text()
    assert "(files): 1 changed" in dialog.status.text()
    with ctx.workspace().corpora.open_store("field") as store:
        assert "October" in store.document("field/note0.md")[0].text


def test_update_from_offers_every_snapshot_form_the_updater_reads(qtbot, ctx, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    offered = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda _p, _t, _d, filt: offered.append(filt) or ("", ""))
    dialog = make_manager(qtbot, ctx)
    assert dialog.update_from_dialog("demo") is None  # the picker was closed: nothing starts
    patterns = offered[0].split(";;")[0]
    for suffix in ("*.xml", "*.bz2", "*.zim", "*.parquet", "*.jsonl", "*.tsv"):
        assert suffix in patterns
