"""*Get Wikipedia…* in the corpus manager, offscreen, against the loopback Hub/dumps stub: the
choices, the plan shown before anything downloads, the job on the worker with Cancel, and errors."""

import threading

import pytest
from PySide6.QtWidgets import QDialog

pytest.importorskip("pyarrow")

from desktop.context import AppContext  # noqa: E402
from desktop.views.corpora.get_wikipedia import WikipediaChoiceDialog  # noqa: E402
from desktop.views.corpora.manager import CorpusManagerDialog  # noqa: E402
from desktop.workers import JobRunner  # noqa: E402
from searchain.config import Settings  # noqa: E402
from searchain.library import WikipediaChoice  # noqa: E402
from tests.fixtures.wiki_stub import simple_wiki  # noqa: E402


@pytest.fixture
def wiki(tmp_path, online, monkeypatch):
    with simple_wiki(tmp_path) as stub:
        monkeypatch.setenv("HF_ENDPOINT", stub.url)
        monkeypatch.setenv("SEARCHAIN_WIKIPEDIA_DUMPS", stub.url)
        yield stub


@pytest.fixture
def dialog(qtbot, home, tiny_embedder_dir):
    settings = Settings.load(home)
    settings.retrieval.embedder = str(tiny_embedder_dir)
    settings.retrieval.second_embedder = ""
    settings.save(home)
    d = CorpusManagerDialog(AppContext(home, Settings.load(home)), JobRunner())
    d.confirm_destructive = False
    qtbot.addWidget(d)
    return d


def fetched(stub):
    return [r for r in stub.requests if r[0] == "GET" and "/resolve/" in r[1]]


def finish(qtbot, dialog, start):
    with qtbot.waitSignal(dialog.job_finished, timeout=120_000) as outcome:
        job = start()
        assert job is not None and not dialog.progress.isHidden()
        assert not dialog.buttons["wikipedia"].isEnabled()  # one corpus job at a time
    return outcome.args[0]


def test_the_plan_is_shown_first_then_the_job_gets_wikipedia(qtbot, dialog, wiki):
    shown, current, jobs = [], [], []
    dialog.wikipedia.confirm_plan = lambda plan: shown.append(plan) or current.append(dialog.job) or True
    real_start = dialog._start
    dialog._start = lambda *a, **k: jobs.append(real_start(*a, **k)) or jobs[-1]
    outcome = finish(qtbot, dialog, lambda: dialog.wikipedia.plan(WikipediaChoice(lang="simple")))
    assert outcome == "done", dialog.status.text()
    assert current == [None]  # the lookup had ended when the plan was shown
    # the lookup and the get ran on the worker, never on the UI thread
    assert len(jobs) == 2 and all(j.worker_thread_id not in (None, threading.get_ident()) for j in jobs)
    assert len(shown) == 1 and [s.name for s in shown[0].stages] == ["download", "ingest", "embed",
                                                                      "index"]
    assert "Wikipedia is ready as 'wikipedia-simple'" in dialog.status.text()
    assert "wikipedia-simple" in dialog.names() and dialog.selected() == "wikipedia-simple"
    assert dialog.ctx.settings.active_corpus == "wikipedia-simple"
    assert fetched(wiki) and dialog.buttons["wikipedia"].isEnabled()


def test_declining_the_plan_downloads_nothing(qtbot, dialog, wiki):
    dialog.wikipedia.confirm_plan = lambda plan: False
    outcome = finish(qtbot, dialog, lambda: dialog.wikipedia.plan(WikipediaChoice()))
    assert outcome == "cancelled" and "Not started" in dialog.status.text()
    assert "would download" in dialog.status.text() and "\n" not in dialog.status.text()  # in short
    assert fetched(wiki) == [] and "wikipedia-simple" not in dialog.names()


def test_a_cancelled_job_keeps_its_work_and_the_next_one_finishes(qtbot, dialog, wiki):
    def start_and_cancel():
        job = dialog.wikipedia.start(WikipediaChoice())
        dialog.cancel_job()
        return job

    outcome = finish(qtbot, dialog, start_and_cancel)
    assert outcome == "cancelled" and "Nothing was lost" in dialog.status.text()
    outcome = finish(qtbot, dialog, lambda: dialog.wikipedia.start(WikipediaChoice()))
    assert outcome == "done", dialog.status.text()


def test_a_missing_snapshot_is_a_clear_error(qtbot, dialog, wiki):
    outcome = finish(qtbot, dialog, lambda: dialog.wikipedia.plan(WikipediaChoice(snapshot="20990101")))
    assert outcome == "failed"
    assert "no Wikipedia snapshot 20990101" in dialog.status.text() and "20231101" in dialog.status.text()


def test_the_choice_dialog(qtbot):
    picker = WikipediaChoiceDialog()
    qtbot.addWidget(picker)
    assert picker.choice() == WikipediaChoice("simple", "hub", "20231101")
    picker.source.setCurrentIndex(1)
    picker.snapshot.setText("20260101")
    picker.lang.setEditText("de")
    assert picker.choice() == WikipediaChoice("de", "dump", "20260101")
    picker.lang.setCurrentIndex(1)
    assert picker.choice().lang == "en"


def test_the_plan_is_a_table_of_stages_with_their_time_disk_and_memory(qtbot, dialog, wiki, monkeypatch):
    from desktop.views.corpora.plan_dialog import PlanDialog
    from searchain.library import plan_wikipedia
    from searchain.units import duration, size

    plan, _ = plan_wikipedia(dialog.ctx.paths, dialog.ctx.settings, WikipediaChoice())
    shown = PlanDialog(plan)
    qtbot.addWidget(shown)
    rows = shown.cells()
    assert [r[0] for r in rows] == ["Download", "Read the articles", "Embed", "Build the index", "In all"]
    assert rows[0][2] == size(plan.download_bytes) and rows[-1][1] == duration(plan.est_seconds)
    assert rows[1][3] == f"+{size(plan.stages[1].disk_bytes)}" and rows[1][4] == size(plan.stages[1].ram_bytes)
    assert "wikipedia-simple" in shown.heading.text() and "over an hour" not in shown.heading.text()
    assert "continues later" in shown.notes.text() and shown.start_button.isDefault()
    # What the manager asks with: the same dialog; Start starts, Not now does not.
    answers = iter([QDialog.DialogCode.Accepted, QDialog.DialogCode.Rejected])
    monkeypatch.setattr(PlanDialog, "exec", lambda self: next(answers))
    assert dialog.wikipedia.confirm_plan(plan) is True
    assert dialog.wikipedia.confirm_plan(plan) is False


def test_a_plan_without_the_disk_for_it_says_so_and_enter_does_not_start_it(qtbot, dialog, wiki):
    from dataclasses import replace

    from desktop.views.corpora.plan_dialog import PlanDialog
    from searchain.library import plan_wikipedia

    plan, _ = plan_wikipedia(dialog.ctx.paths, dialog.ctx.settings, WikipediaChoice())
    shown = PlanDialog(replace(plan, free_disk_bytes=1000, where="<b>evil</b>"))
    qtbot.addWidget(shown)
    assert "Not enough disk" in shown.notes.text() and not shown.start_button.isDefault()
    assert "<b>evil</b>" in shown.heading.text()  # plain text: shown as written, not as markup
