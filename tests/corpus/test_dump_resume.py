"""A Wikipedia dump ingest killed with SIGKILL continues after the last stored page, and ends
with exactly the corpus an uninterrupted ingest makes."""

import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from searchain.bench.ingest.measure import make_dump
from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources.mediawiki import MediaWikiSource
from searchain.events import Progress

REPO = Path(__file__).resolve().parents[2]


def pids(manager, name):
    with manager.open_store(name) as store:
        return {row[0] for row in store.conn.execute("SELECT pid FROM passages")}


def test_a_killed_dump_ingest_skips_ahead_and_loses_nothing(home, tmp_path):
    dump = make_dump(tmp_path / "wiki.xml.bz2", 300, random.Random(0))  # 1,500 passages
    child = textwrap.dedent(f"""
        import time
        from searchain.config import AppPaths, Settings
        from searchain.corpus.manager import CorpusManager
        from searchain.events import Progress
        def on_event(e):
            if isinstance(e, Progress) and e.done and "passages added" in e.message and \\
                    not e.message.startswith("0 "):
                print("COMMITTED", flush=True)
                time.sleep(600)  # wait here to be killed
        paths = AppPaths.resolve({str(home.config_dir.parent)!r})
        CorpusManager(paths, Settings()).add("wiki", {str(dump)!r}, on_event=on_event)
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "COMMITTED"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    manager = CorpusManager(home, Settings())
    stored = manager.info("wiki").passages
    assert manager.info("wiki").state == "incomplete" and 0 < stored < 1500

    messages = []
    report = manager.add("wiki", dump, on_event=lambda e: isinstance(e, Progress) and messages.append(e.message))
    assert any("continuing after page" in m for m in messages)
    assert report.added == 1500 - stored and report.duplicates <= 5  # one page (5 passages) read again
    manager.add("whole", dump)
    assert pids(manager, "wiki") == pids(manager, "whole")
    assert manager.info("wiki").state == "ready"
    assert manager.info("wiki").source_details[0]["added"] == 1500  # both runs, the killed one too


def test_a_resume_page_missing_from_the_dump_reads_it_all(tmp_path):
    dump = make_dump(tmp_path / "wiki.xml.bz2", 20, random.Random(1))
    whole = [p.pid for p in MediaWikiSource(dump, "c", ProblemLog()).passages()]
    resumed = MediaWikiSource(dump, "c", ProblemLog())
    resumed.resume_after = "no-such-page"
    assert [p.pid for p in resumed.passages()] == whole
    late = MediaWikiSource(dump, "c", ProblemLog())
    late.resume_after = "15"
    assert [p.pid for p in late.passages()] == [p for p in whole if int(p.split("#")[0]) >= 15]
    assert late.skipped_pages == 14
