"""#34 in the app: the corpora a chat searches (chosen per chat, saved with it, a removed one
named), the corpus of each cited passage, and *Open source* at the cited page."""

from dataclasses import replace

from searchain.config import Settings
from searchain.types import Passage
from tests.desktop.test_main_window import make_window

WIKI = [("Glacier", "A glacier is a persistent body of dense ice that moves under its own weight."),
        ("Moraine", "A moraine is material left behind by a moving glacier.")]
PAPERS = [("Field notes", "The moraine samples were dated with beryllium isotopes.")]


def _settings():
    settings = Settings()
    settings.retrieval.retriever = "bm25"
    settings.active_corpus = "wiki"
    settings.reasoning.duplicate_threshold = 2.0  # no embedding model in these tests
    return settings


def test_each_chat_keeps_its_own_corpora_and_a_new_chat_starts_as_in_settings(qtbot, home, make_corpus):
    make_corpus("wiki", WIKI)
    make_corpus("papers", PAPERS)
    window = make_window(qtbot, home, _settings())
    store = window.ctx.workspace().conversations()
    first, second = store.create_conversation("first"), store.create_conversation("second")
    picker = window.chat.corpora
    assert picker.text() == "Corpus: as in Settings"

    window.conversations.open(first)
    picker.action_for("wiki").setChecked(True)
    picker.action_for("papers").setChecked(True)
    assert picker.text() == "Corpora: wiki + papers"
    assert store.corpora(first) == ["wiki", "papers"]  # saved at once for an open chat

    window.conversations.open(second)
    assert picker.chosen() == [] and store.corpora(second) == []
    window.conversations.open(first)
    assert picker.chosen() == ["wiki", "papers"]
    window.conversations.new()
    assert picker.text() == "Corpus: as in Settings"


def test_a_chat_whose_corpus_was_removed_opens_shows_it_and_asking_names_it(qtbot, home, make_corpus):
    from searchain.llm.fakes.scripted import ScriptedLLM

    make_corpus("wiki", WIKI)
    window = make_window(qtbot, home, _settings())
    workspace = window.ctx.workspace()
    store = workspace.conversations()
    cid = store.create_conversation("old")
    store.set_corpora(cid, ["wiki", "gone"])
    assert window.conversations.open(cid)
    picker = window.chat.corpora
    assert picker.text() == "Corpora: wiki + gone"
    assert picker.action_for("gone").text() == "gone (removed)" and picker.action_for("gone").isChecked()

    workspace._llm = ScriptedLLM(["unused"])
    assert window.answers.ask("What is a moraine?", mode="rag")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=30_000)
    text = window.message_bar.message.text()
    assert "'gone'" in text and "wiki, gone" in text and "Traceback" not in text
    # Unchecking it makes the chat answerable again, from the corpus that is left.
    picker.action_for("gone").setChecked(False)
    assert store.corpora(cid) == ["wiki"]


def test_a_new_chat_saves_its_corpora_with_its_first_question_and_cites_each_corpus(qtbot, home, make_corpus):
    from searchain.llm.fakes.scripted import ScriptedLLM

    make_corpus("wiki", WIKI)
    make_corpus("papers", PAPERS)
    window = make_window(qtbot, home, _settings())
    workspace = window.ctx.workspace()
    window.chat.corpora.action_for("papers").setChecked(True)
    window.chat.corpora.action_for("wiki").setChecked(True)
    workspace._llm = ScriptedLLM(["Dated with beryllium isotopes [1], left by a glacier [2]."])
    assert window.answers.ask("How were the moraine samples dated?", mode="rag")
    qtbot.waitUntil(lambda: not window.answers.busy, timeout=30_000)
    cid = window.conversations.current_id
    store = workspace.conversations()
    assert store.corpora(cid) == ["papers", "wiki"]
    message = store.get_conversation(cid).messages[-1]
    assert message.run.corpus == "papers,wiki"
    cited = {r.passage.corpus for r in message.result.references}
    assert cited == {"papers", "wiki"}
    ref = next(r for r in message.result.references if r.passage.corpus == "papers")
    window.show_reference(ref)
    assert window.passage.corpus.text().startswith("papers · passage")


def test_open_source_hands_a_pdf_page_to_a_viewer_that_takes_one(qtbot, home, tmp_path, monkeypatch,
                                                                  opened_files):
    import searchain.corpus.open_at as open_at

    launched = []
    monkeypatch.setattr("desktop.passage_actions.launch_detached", launched.append)
    monkeypatch.setattr(open_at, "default_pdf_app", lambda: "org.kde.okular.desktop")
    monkeypatch.setattr(open_at.shutil, "which", lambda exe: f"/usr/bin/{exe}" if exe == "okular" else None)
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    passage = Passage(corpus="papers", pid="report.pdf#3", title="Report", text="Results.",
                      source=str(pdf), doc_id="report.pdf", page=4)
    window = make_window(qtbot, home)
    assert window.open_source(passage) is None  # the viewer is looked up on a worker
    qtbot.waitUntil(lambda: bool(launched), timeout=10_000)
    assert list(launched[0]) == ["/usr/bin/okular", "-p", "4", str(pdf)]
    assert "at page 4" in window.statusBar().currentMessage()
    assert opened_files == []

    # A viewer that cannot be told a page: the file opens, and the status bar names the page.
    monkeypatch.setattr(open_at, "default_pdf_app", lambda: "")
    window.open_source(replace(passage, page=9))
    qtbot.waitUntil(lambda: bool(opened_files), timeout=10_000)
    assert opened_files == [str(pdf)] and len(launched) == 1
    assert "page 9" in window.statusBar().currentMessage()
