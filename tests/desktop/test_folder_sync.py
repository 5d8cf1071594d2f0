"""corpus.sync_folders: folder corpora updated at the app's start and, through the file watcher,
after their files change; off by default."""

import pytest

from desktop.context import AppContext
from desktop.folder_sync import FolderSync, sync_message
from desktop.workers import JobRunner
from searchain.config import Settings
from searchain.corpus.manager import CorpusManager


@pytest.fixture
def folder_home(home, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(3):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nAbout herons number {i}.\n", encoding="utf-8")
    CorpusManager(home, Settings()).add("notes", folder)  # no index: the sync stores passages only
    return home, folder


def make_sync(qtbot, home, on: bool):
    settings = Settings()
    settings.corpus.sync_folders = on
    ctx = AppContext(home, settings)
    runner = JobRunner()
    sync = FolderSync(ctx, runner, delay_ms=200)
    return sync, runner, ctx


def test_off_by_default_nothing_runs(qtbot, folder_home):
    assert Settings().corpus.sync_folders is False
    sync, runner, ctx = make_sync(qtbot, folder_home[0], on=False)
    assert sync.start() is False and not runner.active and not sync.watching
    ctx.close()


def test_updates_at_start_then_after_a_file_changes(qtbot, folder_home):
    home, folder = folder_home
    (folder / "n1.md").write_text("# Note 1\n\nThe herons left in October.\n", encoding="utf-8")
    sync, runner, ctx = make_sync(qtbot, home, on=True)
    try:
        with qtbot.waitSignal(sync.synced, timeout=60_000) as first:
            assert sync.start() is True
        name, report = first.args
        assert (name, report.changed, report.unchanged) == ("notes", 1, 2)
        assert sync_message(name, report).startswith("'notes' updated from its folders: 1 changed")
        qtbot.waitUntil(lambda: sync.watching, timeout=10_000)
        with qtbot.waitSignal(sync.synced, timeout=60_000) as second:
            (folder / "n3.md").write_text("# Note 3\n\nA kingfisher.\n", encoding="utf-8")
        assert second.args[1].added == 1 and second.args[1].added_names == [str(folder / "n3.md")]
        with ctx.workspace().corpora.open_store("notes") as store:
            assert "kingfisher" in store.document("notes/n3.md")[0].text
    finally:
        sync.stop()
        runner.wait(10_000)
        ctx.close()
