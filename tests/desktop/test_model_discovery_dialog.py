"""The model dialog lists the models other apps keep (#35): a source column, the header facts,
whether each fits, and choosing one uses it where it lies. The fake home is
``tests/fixtures/discovery.py``'s."""

import pytest

from desktop.context import AppContext
from desktop.views.model_choice.dialog import ModelDialog
from desktop.workers import JobRunner
from searchain.config import Settings
from searchain.llm.models import recommend
from tests.fixtures.discovery import tree_state

GIB = 1024 ** 3


@pytest.fixture
def laptop(monkeypatch):
    monkeypatch.setattr(recommend, "machine_facts", lambda: recommend.MachineFacts(16 * GIB, 12 * GIB))


def _open(qtbot, home, layout):
    settings = Settings.load(home)
    settings.llm.model_folders = [str(layout.user_folder)]
    dialog = ModelDialog(AppContext(home, settings), JobRunner())
    qtbot.addWidget(dialog)
    return dialog


def _rows(dialog) -> dict[str, dict[str, str]]:
    table = dialog.local
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    return {table.item(r, 0).text(): {h: table.item(r, c).text() for c, h in enumerate(headers)}
            for r in range(table.rowCount())}


def test_other_apps_models_join_the_list_with_their_source(qtbot, home, app_layouts, laptop):
    first = []
    dialog = _open(qtbot, home, app_layouts)
    dialog.local_listed.connect(lambda n: first.append({r["Source"] for r in _rows(dialog).values()}))
    with qtbot.waitSignal(dialog.discovery_finished, timeout=60_000):
        pass
    # First the app's folder and the user's folder, before the other apps are searched.
    assert first == [{"SearChain", "Your folder"}]
    rows = _rows(dialog)
    assert set(rows) == set(app_layouts.expected) | set(app_layouts.broken)
    assert rows["llama3.2:3b"]["Source"] == "Ollama" and rows["llama3.2:3b"]["Size"] == "2.0 GB"
    assert rows["qwen2.5-1.5b-instruct-q4_k_m"]["Source"] == "Hugging Face cache"
    qwen = rows["Qwen3-4B-Q4_K_M"]
    assert (qwen["Source"], qwen["Quantisation"], qwen["Context"], qwen["Template"], qwen["Fits"]) == \
        ("LM Studio", "Q4_K_M", "8,192", "qwen3", "yes (CPU)")
    assert rows["Big-Q4_K_M"]["Fits"] == "too big" and rows["Big-Q4_K_M"]["Size"] == "9.0 GB"
    assert rows["not-a-model"]["Fits"] == "cannot be used"
    assert "LM Studio" in dialog.found.note.text() and "not copied" in dialog.found.note.text()


def test_choosing_a_found_model_uses_it_in_place(qtbot, home, app_layouts, laptop):
    dialog = _open(qtbot, home, app_layouts)
    with qtbot.waitSignal(dialog.discovery_finished, timeout=60_000):
        pass
    before = tree_state(app_layouts.home)
    blob = str(app_layouts.paths["llama3.2:3b"])
    dialog.select_local(blob)
    with qtbot.waitSignal(dialog.model_chosen) as chosen:
        dialog.use_selected()
    assert chosen.args == [blob]  # Ollama's blob itself, not a copy
    assert tree_state(app_layouts.home) == before


def test_a_folder_added_in_the_dialog_is_saved_and_listed(qtbot, home, user_home, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from searchain.llm.fakes.sparse_gguf import write_sparse_gguf

    folder = tmp_path / "disk" / "ggufs"
    write_sparse_gguf(folder / "kept-here.gguf", 3 * 10 ** 9)
    dialog = ModelDialog(AppContext(home, Settings.load(home)), JobRunner())
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.discovery_finished, timeout=60_000):
        pass
    assert "kept-here" not in _rows(dialog)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    with qtbot.waitSignal(dialog.discovery_finished, timeout=60_000):
        dialog.found.add_folder_button.click()
    assert _rows(dialog)["kept-here"]["Source"] == "Your folder"
    assert Settings.load(home).llm.model_folders == [str(folder)]


def test_the_dialog_opens_before_anything_is_listed(qtbot, home, app_layouts, laptop, monkeypatch):
    """Listing a folder (a sleeping disk, a network share) never holds up the UI thread: the
    dialog opens empty with a busy bar, every listing runs on a worker, the rows arrive."""
    import threading

    import searchain.llm as llm

    threads = []
    real = llm.discover_models

    def recording(*args, **kwargs):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(llm, "discover_models", recording)
    dialog = _open(qtbot, home, app_layouts)
    assert dialog.local.rowCount() == 0 and not dialog.found.busy.isHidden()
    assert "Listing the models" in dialog.found.note.text()
    with qtbot.waitSignal(dialog.local_listed, timeout=60_000) as listed:
        pass
    assert listed.args[0] >= 1
    with qtbot.waitSignal(dialog.discovery_finished, timeout=60_000):
        pass
    assert dialog.found.busy.isHidden() and dialog.local.rowCount() == len(_rows(dialog)) > listed.args[0]
    assert threads == [False, False]  # the folders, then every place: both on a worker


def test_a_model_asked_for_before_its_row_arrives_is_selected(qtbot, home, app_layouts, laptop):
    dialog = _open(qtbot, home, app_layouts)
    blob = str(app_layouts.paths["llama3.2:3b"])
    dialog.select_local(blob)  # as a finished download does, before the listing is in
    with qtbot.waitSignal(dialog.discovery_finished, timeout=60_000):
        pass
    assert dialog.found.selected_path() == blob
