"""The search dialog over a corpus whose keyword index a stopped ingest left unbuilt: the first
search says what it is finishing and how long it will take, on a worker, then answers."""

from desktop.context import AppContext
from desktop.views.search import SearchDialog
from desktop.workers import JobRunner
from searchain.config import Settings
from tests.corpus.test_fts_deferred import _left_unbuilt


def test_the_first_search_says_it_finishes_the_keyword_index(qtbot, home, tmp_path):
    _left_unbuilt(home, tmp_path)
    settings = Settings.load(home)
    settings.retrieval.retriever = "bm25"
    dialog = SearchDialog(AppContext(home, settings), JobRunner())
    qtbot.addWidget(dialog)
    dialog.corpus.setCurrentText("w")
    shown = []
    set_text = dialog.status.setText
    dialog.status.setText = lambda text: (shown.append(text), set_text(text))
    dialog.query.setText("number3")
    with qtbot.waitSignal(dialog.searched, timeout=60_000) as found:
        dialog.search()
    assert found.args[0] > 0 and "Title 3" in dialog.results.item(0).text()
    finishing = [t for t in shown if t.startswith("Finishing the keyword index")]
    assert finishing and "7 passages, about" in finishing[0]
