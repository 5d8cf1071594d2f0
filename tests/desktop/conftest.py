"""Fixtures for the desktop app's tests: a real AnswerResult with a hostile passage, Qt helpers."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import QObject, QUrl, Slot

from searchain.reasoning.result import (
    DECISION_COMPLETED,
    DECISION_CORRECTED,
    DECISION_DUPLICATE,
    DECISION_PASS,
    SOURCE_IR_COMPLETED,
    SOURCE_IR_CORRECTED,
    SOURCE_LLM,
    AnswerResult,
    Branch,
    Node,
    Reference,
)
from searchain.types import Passage

# Markup in passage text must show as characters, never be interpreted.
HOSTILE_TEXT = "Paris is the capital of France. <b>bold</b> <script>alert(1)</script> & more."


def _passage(pid: str, title: str, text: str, doc: str = "") -> Passage:
    return Passage(corpus="demo", pid=pid, title=title, text=text, source="demo.jsonl", doc_id=doc or title)


def _span(passage: Passage, text: str) -> tuple[int, int]:
    start = passage.text.index(text)
    return start, start + len(text)


@pytest.fixture(autouse=True)
def no_background_warm_up(request, monkeypatch):
    """The app loads its model in the background at start and after every settings change
    (``AnswerFlow.warm_up`` -> ``Workspace.warm_up``); in window tests that would load models
    nobody asked about, so the engine's part does nothing (a replaced model is closed when a
    question next needs the model).
    Tests of the warm-up itself are marked ``warm_up``."""
    if request.node.get_closest_marker("warm_up") is None:
        from searchain.workspace import Workspace

        monkeypatch.setattr(Workspace, "warm_up", lambda self, **options: None)


@pytest.fixture
def answer_result() -> AnswerResult:
    """Two rounds: verified, corrected, completed and duplicate nodes; three references."""
    p1 = _passage("p1", "France <capital>", HOSTILE_TEXT)
    p2 = _passage("p2", "Eiffel Tower", "The Eiffel Tower was completed in 1889 in Paris.")
    p3 = _passage("p3", "Gustave Eiffel", "Gustave Eiffel was born in Dijon in 1832.")
    n1 = Node(1, 0, "What is the capital of France?", "Paris", reader_answer="Paris", confidence=4.2,
              decision=DECISION_PASS, source=SOURCE_LLM, passage=p1, span=(0, 5))
    n2 = Node(1, 1, "When was the Eiffel Tower completed?", "1899", reader_answer="1889", confidence=3.1,
              decision=DECISION_CORRECTED, source=SOURCE_IR_CORRECTED, passage=p2, span=_span(p2, "1889"))
    n2b = Node(2, 0, "When was the Eiffel Tower completed?", "1889", decision=DECISION_DUPLICATE)
    n3 = Node(2, 1, "Where was Gustave Eiffel born?", None, unsolved=True, reader_answer="Dijon",
              confidence=0.4, decision=DECISION_COMPLETED, source=SOURCE_IR_COMPLETED, passage=p3, span=_span(p3, "Dijon"))
    branches = [
        Branch(1, "[Query 1]: ...", [n1, n2], feedback="According to the reference ... 1889"),
        Branch(2, "[Query 1]: ...", [n2b, n3], parent=(1, 1), final_content="..."),
    ]
    refs = [
        Reference(1, p1, (0, 5), n1.query, "Paris"),
        Reference(2, p2, n2.span, n2.query, "1889"),
        Reference(3, p3, n3.span, n3.query, "Dijon"),
    ]
    return AnswerResult(
        question="Where was the engineer of the tower in the capital of France born?",
        mode="searchain",
        final_content="The tower in Paris [1] was completed in 1889 [2]; its engineer was born in Dijon [3]. <i>x</i> [9]",
        answer="Dijon",
        references=refs,
        path=[n1, n2, n3],
        branches=branches,
        rounds=2,
        stop_reason="finish",
        seconds=1.5,
    )


@pytest.fixture(scope="session")
def demo_data_template(tmp_path_factory):
    """A data dir holding the real demo corpus, ingested and indexed once per session."""
    from searchain.config import AppPaths, Settings
    from searchain.library.demo import ensure_demo_corpus

    paths = AppPaths.resolve(tmp_path_factory.mktemp("demo-home")).ensure()
    ensure_demo_corpus(paths, Settings())
    return paths.data_dir


@pytest.fixture
def demo_home(home, demo_data_template):
    """``home`` with the ready demo corpus copied in (as after a first run)."""
    shutil.copytree(demo_data_template / "corpora" / "demo", home.corpora_dir / "demo")
    return home


class UrlCatcher(QObject):
    """Stands in for the desktop's file opener (QDesktopServices' documented hook for this)."""

    def __init__(self):
        super().__init__()
        self.urls = []

    @Slot(QUrl)
    def open(self, url):
        self.urls.append(url.toLocalFile())


@pytest.fixture
def opened_files():
    """The local paths the app hands to the desktop (QDesktopServices.openUrl) during a test."""
    from PySide6.QtGui import QDesktopServices

    catcher = UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    yield catcher.urls
    QDesktopServices.unsetUrlHandler("file")


@pytest.fixture
def answer_window(qtbot, demo_home, tiny_gguf):
    """Opens main windows that answer for real: the tiny random-weight GGUF over the demo corpus.

    ``answer_window(r_max=...)`` returns a shown window (destructive confirmations off); every
    window opened is closed after the test.
    """
    from desktop.context import AppContext
    from desktop.main_window import MainWindow
    from searchain.config import Settings

    windows = []

    def open_window(*, r_max: int = 2):
        settings = Settings.load(demo_home)
        settings.llm.model_path = str(tiny_gguf)
        settings.llm.n_ctx, settings.llm.n_threads, settings.llm.n_gpu_layers = 2048, 2, 0
        settings.llm.max_tokens = 48  # the random-weight model never stops on its own
        settings.reasoning.r_max = r_max
        window = MainWindow(AppContext(demo_home, settings))
        window.confirm_destructive = False
        qtbot.addWidget(window)
        window.show()
        windows.append(window)
        return window

    yield open_window
    for window in windows:
        window.close()
