"""Corpus manager and retrieval-only search, through the real corpus manager, index and retriever."""

import json

import pytest
from PySide6.QtCore import Qt

from desktop.context import AppContext
from desktop.views.corpora.manager import HEADERS, CorpusManagerDialog, corpus_name_for
from desktop.views.search import SearchDialog
from desktop.workers import JobRunner
from searchain.config import Settings

pytestmark = pytest.mark.slow  # real embedder and index


@pytest.fixture
def ctx(demo_home):
    return AppContext(demo_home, Settings.load(demo_home))


def make_manager(qtbot, ctx):
    runner = JobRunner()
    dialog = CorpusManagerDialog(ctx, runner)
    dialog.confirm_destructive = False
    dialog.ask_to_start = lambda name, plan: True  # a busy test machine must never block on a dialog
    qtbot.addWidget(dialog)
    return dialog


def row_of(dialog, name) -> dict[str, str]:
    """The table row of corpus ``name`` as {header: text}."""
    row = dialog.names().index(name)
    return {h: dialog.table.item(row, c).text() for c, h in enumerate(HEADERS)}


def test_the_actions_are_grouped_and_a_job_disables_every_one(qtbot, ctx):
    from PySide6.QtWidgets import QPushButton

    dialog = make_manager(qtbot, ctx)
    row = [b for b in dialog.findChildren(QPushButton) if b.isVisibleTo(dialog) and b.parent() is dialog]
    assert [b.text() for b in row] == ["Add", "Update", "Use for questions", "Export…", "Remove"]
    menus = {b.text(): [a.text() for a in b.menu().actions()] for b in row if b.menu()}
    assert "Get Wikipedia…" in menus["Add"] and "Re-read changed files" in menus["Update"]
    assert menus["Update"][2] == "Update index"  # the name the engine's hints use in the app
    dialog._set_buttons(False)  # as while a corpus job runs
    assert not any(b.isEnabled() for b in row) and not any(a.isEnabled() for a in dialog.buttons.values())
    dialog._set_buttons(True)
    assert all(b.isEnabled() for b in row)


def test_lists_demo_corpus_with_index_state(qtbot, ctx):
    dialog = make_manager(qtbot, ctx)
    assert dialog.names() == ["demo"]
    row = row_of(dialog, "demo")
    assert int(row["Passages"]) > 0 and row["Indexed"] == row["Passages"]
    assert "MiniLM" in row["Embedder"] and row["Index"] == "ready" and row["State"] == "ready"
    assert row["Active"] == "✓"


def test_add_index_activate_search_remove(qtbot, ctx, tmp_path):
    source = tmp_path / "notes.jsonl"
    source.write_text("\n".join(json.dumps({"id": f"n{i}", "title": f"Note {i}",
                                            "text": f"The heron number {i} nests by the quiet lake."})
                                for i in range(30)) + "\n", encoding="utf-8")
    dialog = make_manager(qtbot, ctx)
    progress = []
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        job = dialog.add(corpus_name_for(source), source)
        job.event.connect(progress.append)
        assert not dialog.progress.isHidden() and not dialog.buttons["remove"].isEnabled()
    assert outcome.args == ["done"], dialog.status.text()
    assert dialog.names() == ["demo", "notes"]
    assert job.worker_thread_id is not None
    assert any(getattr(e, "total", None) for e in progress)  # the bar had something to show

    dialog.select("notes")
    dialog.set_active(dialog.selected())
    assert ctx.settings.active_corpus == "notes"
    assert json.loads(ctx.paths.settings_file.read_text())["active_corpus"] == "notes"

    search = SearchDialog(ctx, dialog.runner)
    qtbot.addWidget(search)
    assert search.corpus.currentText() == "notes"
    search.query.setText("heron lake")
    with qtbot.waitSignal(search.searched, timeout=120_000) as found:
        search.search()
    assert found.args[0] > 0 and "Note" in search.results.item(0).text()

    dialog.remove("notes")
    assert dialog.names() == ["demo"] and ctx.settings.active_corpus == "demo"


def test_bad_source_gives_readable_error_and_keeps_corpora(qtbot, ctx, tmp_path):
    dialog = make_manager(qtbot, ctx)
    with qtbot.waitSignal(dialog.job_finished, timeout=60_000) as outcome:
        dialog.add("missing", tmp_path / "nope.jsonl")
    assert outcome.args == ["failed"]
    assert "nope.jsonl" in dialog.status.text() and "Traceback" not in dialog.status.text()
    assert dialog.names() == ["demo"]
    assert dialog.buttons["file"].isEnabled()


def test_search_works_without_any_model(qtbot, ctx):
    assert ctx.settings.llm.model_path == ""
    search = SearchDialog(ctx, JobRunner())
    qtbot.addWidget(search)
    search.show()
    assert search.focusWidget() is search.query  # opened to type into
    qtbot.keyClicks(search.focusWidget(), "Kestrel Bay")
    with qtbot.waitSignal(search.searched, timeout=120_000) as found:
        qtbot.keyClick(search.query, Qt.Key.Key_Return)
    assert found.args[0] > 0
    assert search.results.item(0).text().startswith("1. Kestrel Bay\n")
    emitted = []
    search.passage_opened.connect(emitted.append)
    search.results.itemDoubleClicked.emit(search.results.item(0))
    assert emitted and emitted[0].corpus == "demo"


def test_cancel_stops_an_add_and_keeps_the_other_corpora(qtbot, ctx, tmp_path):
    source = tmp_path / "many.jsonl"
    source.write_text("\n".join(json.dumps({"id": f"m{i}", "title": f"M {i}", "text": f"Text {i}."})
                                for i in range(2000)) + "\n", encoding="utf-8")
    dialog = make_manager(qtbot, ctx)
    with qtbot.waitSignal(dialog.job_finished, timeout=120_000) as outcome:
        dialog.add("many", source)
        dialog.cancel_job()  # before the worker's first check point
    assert outcome.args == ["cancelled"]
    assert "Cancelled" in dialog.status.text()
    assert "demo" in dialog.names()


def test_open_whole_document_from_the_passage_viewer(qtbot, ctx):
    from desktop.main_window import MainWindow

    window = MainWindow(ctx)
    qtbot.addWidget(window)
    with ctx.workspace().corpora.open_store("demo") as store:
        passage = next(p for _, batch in [(0, b) for b in store.iter_batches()] for _, p in batch)
    window.passage.show_passage(passage, (0, 5))
    window.passage.open_document.click()
    qtbot.waitUntil(lambda: getattr(window, "document_dialog", None) is not None, timeout=30_000)
    text = window.document_dialog.body.toPlainText()
    assert passage.text in text


def _write_notes(path, texts):
    path.write_text("\n".join(json.dumps({"id": f"n{i}", "title": f"Note {i}", "text": t})
                              for i, t in enumerate(texts)) + "\n", encoding="utf-8")


def test_add_from_the_file_picker_then_rebuild_reads_the_changed_source(qtbot, ctx, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QInputDialog

    source = tmp_path / "birds.jsonl"
    _write_notes(source, [f"The heron number {i} nests by the quiet lake." for i in range(12)])
    # Only the modal pickers are replaced: what a user would choose in them.
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(source), ""))
    offered = []
    monkeypatch.setattr(QInputDialog, "getItem", lambda _p, _t, _l, items, *a: offered.append(items) or ("birds", True))
    dialog = make_manager(qtbot, ctx)
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.add_dialog("file")
    assert outcome.args == ["done"], dialog.status.text()
    assert "birds" in dialog.names()
    assert ctx.workspace().corpora.info("birds").passages == 12

    # The source changes on disk; Rebuild re-reads it and re-indexes.
    _write_notes(source, [f"The kingfisher number {i} dives in the river." for i in range(5)])
    dialog.select("birds")
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.rebuild(dialog.selected())
    assert outcome.args == ["done"], dialog.status.text()
    assert ctx.workspace().corpora.info("birds").passages == 5
    hits = ctx.workspace().retriever("birds").search("kingfisher river", k=3)
    assert hits and "kingfisher" in hits[0].passage.text
    row = row_of(dialog, "birds")
    assert row["Passages"] == "5" and row["Indexed"] == "5" and row["Index"] == "ready"

    # Another file added under the existing name joins that corpus (the name dialog offers it).
    more = tmp_path / "waders.jsonl"
    more.write_text(json.dumps({"id": "w1", "title": "Avocet", "text": "The avocet sweeps its bill."}) + "\n",
                    encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(more), ""))
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.add_dialog("file")
    assert outcome.args == ["done"], dialog.status.text()
    assert offered[-1][0] == "waders" and "birds" in offered[-1]
    assert ctx.workspace().corpora.info("birds").passages == 6 and "waders" not in dialog.names()
    assert row_of(dialog, "birds")["Indexed"] == "6"


def test_update_index_builds_repairs_and_re_embeds_for_another_model(qtbot, ctx, tmp_path):
    from searchain.index.embed.embedder import resolve_model_path

    source = tmp_path / "birds.jsonl"
    _write_notes(source, [f"The heron number {i} nests by the quiet lake." for i in range(12)])
    dialog = make_manager(qtbot, ctx)

    def run(job_starter):
        with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
            assert job_starter() is not None
        assert outcome.args == ["done"], dialog.status.text()

    run(lambda: dialog.add("birds", source, index=False))
    assert row_of(dialog, "birds")["Index"] == "not built"
    dialog.select("birds")
    run(lambda: dialog.update_index(dialog.selected()))
    assert dialog.status.text() == "Index ready: 12 passages (12 embedded)."
    assert row_of(dialog, "birds")["Index"] == "ready"

    # A lost graph file is rebuilt from the saved embeddings: nothing is embedded again.
    (ctx.paths.corpora_dir / "birds" / "index" / "vectors.faiss").unlink()
    dialog.refresh()
    assert row_of(dialog, "birds")["Index"] == "damaged"
    assert "Update index" in dialog.table.item(dialog.names().index("birds"), HEADERS.index("Index")).toolTip()
    run(lambda: dialog.update_index("birds"))
    assert dialog.status.text() == "Index ready: 12 passages (0 embedded, 12 kept)."
    assert ctx.workspace().retriever("birds").search("heron lake", k=1)

    # Another embedding model: the index cannot be extended, so every passage is re-embedded.
    other = tmp_path / "other-model"
    other.symlink_to(resolve_model_path("all-MiniLM-L6-v2"), target_is_directory=True)
    ctx.settings.retrieval.embedder = str(other)
    dialog.refresh()
    assert row_of(dialog, "birds")["Index"] == "other model"
    run(lambda: dialog.update_index("birds"))
    assert dialog.status.text() == "Index ready: 12 passages (12 embedded)."
    assert row_of(dialog, "birds")["Index"] == "ready"
    assert row_of(dialog, "birds")["Embedder"].startswith("local:")  # the symlinked folder's id


def test_a_build_planned_over_an_hour_starts_only_when_the_user_agrees(qtbot, ctx, tmp_path):
    from searchain.index.build import plan as plan_mod
    from searchain.index.embed.embedder import Embedder

    source = tmp_path / "owls.jsonl"
    _write_notes(source, [f"The owl number {i} hunts over the dark meadow." for i in range(8)])
    dialog = make_manager(qtbot, ctx)
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000):
        dialog.add("owls", source, index=False)
    # This machine, as far as the plan knows, embeds one passage every 20 minutes.
    embedder = Embedder.for_settings(ctx.settings.retrieval, models_dir=ctx.paths.models_dir)
    plan_mod.SpeedCache(ctx.paths.cache_dir / plan_mod.CACHE_FILE).put(
        plan_mod._speed_key(embedder), {"passages_per_s": 1 / 1200, "chars": 60.0})
    asked = []
    dialog.ask_to_start = lambda name, plan: asked.append((name, plan)) or False
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.update_index("owls")
    assert outcome.args == ["cancelled"] and len(asked) == 1
    name, plan = asked[0]
    assert name == "owls" and plan.needs_confirmation and plan.models[0].passages == 8
    assert "was not built" in dialog.status.text() and plan.summary() in dialog.status.text()
    assert row_of(dialog, "owls")["Index"] == "not built"
    dialog.ask_to_start = lambda name, plan: True
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.update_index("owls")
    assert outcome.args == ["done"] and row_of(dialog, "owls")["Index"] == "ready"


def _drop(dialog, urls):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

    mime = QMimeData()
    mime.setUrls([u if isinstance(u, QUrl) else QUrl.fromLocalFile(str(u)) for u in urls])
    enter = QDragEnterEvent(dialog.rect().center(), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    dialog.dragEnterEvent(enter)
    drop = QDropEvent(QPointF(dialog.rect().center()), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    dialog.dropEvent(drop)
    return enter.isAccepted(), drop.isAccepted()


def test_a_dropped_folder_becomes_a_corpus_and_other_drops_are_refused(qtbot, ctx, tmp_path, monkeypatch):
    from PySide6.QtCore import QUrl

    folder = tmp_path / "field notes"
    folder.mkdir()
    for i in range(3):
        (folder / f"day{i}.md").write_text(f"# Day {i}\n\nThe otters of Reed Marsh were seen at dawn, day {i}.\n",
                                           encoding="utf-8")
    dialog = make_manager(qtbot, ctx)
    asked = []
    monkeypatch.setattr(dialog, "ask_name", lambda source: asked.append(source) or "field-notes")

    # A web link is not a source: the drag is not accepted and nothing is asked.
    assert _drop(dialog, [QUrl("https://example.org/corpus.jsonl")]) == (False, False)
    # Two items at once: refused with a reason.
    assert _drop(dialog, [folder / "day0.md", folder / "day1.md"])[1]
    assert "drop one file or folder at a time" in dialog.status.text() and asked == []

    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        accepted = _drop(dialog, [folder])
    assert accepted == (True, True) and asked == [str(folder)]
    assert outcome.args == ["done"], dialog.status.text()
    row = row_of(dialog, "field-notes")
    assert int(row["Passages"]) >= 3 and row["Index"] == "ready"


def test_a_folder_of_documents_reports_the_files_it_could_not_read(qtbot, ctx, tmp_path):
    from tests.fixtures.documents import page_texts, write_pdf

    folder = tmp_path / "papers"
    folder.mkdir()
    write_pdf(folder / "open.pdf", page_texts(2, seed=51))
    write_pdf(folder / "locked.pdf", page_texts(1, seed=52), password="pw")
    dialog = make_manager(qtbot, ctx)
    with qtbot.waitSignal(dialog.job_finished, timeout=180_000) as outcome:
        dialog.add("papers", folder)
    assert outcome.args == ["done"], dialog.status.text()
    status = dialog.status.text()
    assert "Index ready" in status and "1 could not be read and were left out" in status
    assert "locked.pdf: encrypted PDF: it needs a password" in status
    assert int(row_of(dialog, "papers")["Passages"]) > 0


def test_an_unreadable_corpus_is_shown_as_such_with_its_passages_unknown(qtbot, home, tmp_path, monkeypatch):
    """A full disk while listing: the row says "unreadable" and "?", never "damaged" and 0."""
    import sqlite3

    from searchain.corpus.manager import CorpusManager

    source = tmp_path / "a.jsonl"
    source.write_text('{"id": "a", "text": "alpha"}\n', encoding="utf-8")
    CorpusManager(home, Settings()).add("notes", source)
    db, real = str(home.corpora_dir / "notes" / "passages.db"), sqlite3.connect

    def connect(path, *args, **kwargs):
        if str(path) == db:
            raise sqlite3.OperationalError("disk I/O error")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    dialog = make_manager(qtbot, AppContext(home, Settings()))
    row = row_of(dialog, "notes")
    assert (row["State"], row["Passages"]) == ("unreadable", "?")
    tip = dialog.table.item(dialog.names().index("notes"), HEADERS.index("State")).toolTip()
    assert "disk I/O error" in tip and "try again" in tip and "remove" not in tip.lower()
