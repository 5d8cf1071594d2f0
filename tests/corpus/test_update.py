"""`corpus update`: a folder corpus re-synced with its folders (#34) and a corpus brought to a
newer snapshot of its source (#33), passages side (the index side: tests/index/test_update_index.py)."""

import json
import os

import pytest

from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.corpus.update import update_corpus
from searchain.errors import CorpusError
from tests.corpus.test_mediawiki import dump, page

WORDS = ("river mountain city music physics bread violin comet glacier harbour orchard lantern "
         "falcon meadow copper saffron").split()


def text_of(seed: int, words: int = 260) -> str:
    import random

    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


def make_folder(root, n=6):
    (root / "sub").mkdir(parents=True)
    for i in range(n):
        (root / f"f{i}.md").write_text(f"# Note {i}\n\n{text_of(i)}\n", encoding="utf-8")
    (root / "sub" / "t.txt").write_text("A plain note about chess openings.\n", encoding="utf-8")
    return root


def rows(store):
    return {pid: (i, text) for i, pid, text in store.conn.execute("SELECT id, pid, text FROM passages")}


@pytest.fixture
def manager(home):
    return CorpusManager(home, Settings())


def test_folder_resync_reads_only_new_and_changed_files(manager, tmp_path, monkeypatch):
    docs = make_folder(tmp_path / "docs")
    manager.add("docs", docs)
    with manager.open_store("docs") as store:
        before = rows(store)
    (docs / "f1.md").write_text(f"# Note 1\n\n{text_of(101)}\n", encoding="utf-8")  # changed
    os.utime(docs / "f2.md", ns=(1, 1_000_000_000))  # touched: another time, the same bytes
    (docs / "f3.md").unlink()  # removed
    (docs / "sub" / "new.md").write_text("# New\n\nA new note about comets.\n", encoding="utf-8")
    parsed = []
    import searchain.corpus.sources.folder as folder_module

    real = folder_module.read_document
    monkeypatch.setattr(folder_module, "read_document",
                        lambda data, fmt: parsed.append(data[:20]) or real(data, fmt))
    events = []
    report = update_corpus(manager, "docs", on_event=events.append)
    assert (report.unit, report.unchanged, report.changed, report.added, report.removed) == \
        ("files", 5, 1, 1, 1)
    assert events[-1].message == report.summary()  # the last line shown is the final count
    assert f"{report.passages_kept:,} kept" in events[-1].message and report.passages_kept > 0
    assert len(parsed) == 2  # only the changed and the new file were parsed
    assert report.changed_names == [str(docs / "f1.md")]
    assert report.added_names == [str(docs / "sub" / "new.md")]
    assert report.removed_names == [str(docs / "f3.md")]
    with manager.open_store("docs") as store:
        after = rows(store)
        records = {r.doc_id: r for r in store.documents()}
        assert store.fts_integrity_ok()
    for pid, (i, text) in before.items():  # unchanged files keep their rows, so their vectors
        if pid.startswith(("docs/f0", "docs/f2", "docs/f4", "docs/f5", "docs/sub/t")):
            assert after[pid] == (i, text)
    assert not any(pid.startswith("docs/f3.md") for pid in after)
    assert all(after[p][0] > max(i for i, _ in before.values()) for p in after if p.startswith("docs/f1.md"))
    assert after["docs/f1.md#0"][1] != before["docs/f1.md#0"][1]
    assert "docs/sub/new.md#0" in after
    assert "docs/f3.md" not in records and records["docs/f2.md"].mtime_ns == 1_000_000_000
    assert report.passages_added == sum(p.startswith(("docs/f1", "docs/sub/new")) for p in after)

    parsed.clear()
    again = update_corpus(manager, "docs")  # nothing changed since: nothing read or hashed
    assert (again.unchanged, again.changed, again.added, again.removed, len(parsed)) == (7, 0, 0, 0, 0)


def test_a_file_rewritten_with_the_same_text_keeps_its_passages(manager, tmp_path):
    docs = make_folder(tmp_path / "docs", n=2)
    manager.add("docs", docs)
    with manager.open_store("docs") as store:
        before = rows(store)
    path = docs / "f0.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n\n", encoding="utf-8")  # new bytes, same text
    report = update_corpus(manager, "docs")
    assert (report.changed, report.passages_added, report.passages_removed) == (1, 0, 0)
    with manager.open_store("docs") as store:
        assert rows(store) == before


def test_a_file_that_no_longer_reads_loses_its_passages_and_says_why(manager, tmp_path):
    docs = make_folder(tmp_path / "docs", n=2)
    manager.add("docs", docs)
    (docs / "f0.md").write_bytes(b"\xff\xfe not utf-8 \xff")
    report = update_corpus(manager, "docs")
    assert report.changed == 1 and report.problems and "f0.md" in report.problems[0].file
    with manager.open_store("docs") as store:
        assert store.document("docs/f0.md") == []
        assert {r.doc_id: r for r in store.documents()}["docs/f0.md"].problem


def wiki(path, pages):
    path.write_text(dump([page(t, x, page_id=i) for i, (t, x) in pages.items()]), encoding="utf-8")
    return path


def articles(n=12):
    return {i: (f"Article {i}", f"'''Article {i}''' is about {text_of(1000 + i, 150)}.") for i in range(1, n + 1)}


def test_snapshot_update_keeps_unchanged_articles(manager, tmp_path):
    old = articles()
    manager.add("wiki", wiki(tmp_path / "dump-1.xml", old))
    with manager.open_store("wiki") as store:
        before = rows(store)
    new = dict(old)
    new[3] = ("Article 3", "'''Article 3''' was rewritten about glaciers and comets entirely.")
    del new[5]
    new[20] = ("Article 20", "'''Article 20''' is a new article about saffron.")
    report = update_corpus(manager, "wiki", wiki(tmp_path / "dump-2.xml", new))
    assert (report.unit, report.unchanged, report.changed, report.added, report.removed) == \
        ("articles", 10, 1, 1, 1)
    assert (report.changed_names, report.added_names, report.removed_names) == \
        (["Article 3"], ["Article 20"], ["Article 5"])
    with manager.open_store("wiki") as store:
        after = rows(store)
        kept = store.document("1")
        sources = store.meta_get("sources")
        assert store.fts_integrity_ok()
        assert store.meta_get("update")["status"] == "done"
    for pid, value in before.items():
        if pid.split("#")[0] not in ("3", "5"):
            assert after[pid] == value  # same id: the vector stays
    assert not any(p.startswith("5#") for p in after)
    assert kept[0].source.startswith("dump-2.xml#")  # the address follows the new snapshot
    assert [s["path"] for s in sources] == [str(tmp_path / "dump-2.xml")]
    # a later update without --from re-reads the recorded (new) snapshot: nothing to do
    assert update_corpus(manager, "wiki").unchanged == 12


def test_zim_snapshot_update(manager, tmp_path):
    from tests.fixtures.zim import write_zim

    first = {"A/River": ("River", "<html><body><h1>River</h1><p>The river runs to the sea.</p></body></html>"),
             "A/Lake": ("Lake", "<html><body><h1>Lake</h1><p>The lake is deep and cold.</p></body></html>")}
    manager.add("zim", write_zim(tmp_path / "w1.zim", first, extras=False))
    second = {"A/River": first["A/River"],
              "A/Hill": ("Hill", "<html><body><h1>Hill</h1><p>The hill is green.</p></body></html>")}
    report = update_corpus(manager, "zim", write_zim(tmp_path / "w2.zim", second, extras=False))
    assert (report.unchanged, report.changed, report.added, report.removed) == (1, 0, 1, 1)


def test_bad_updates_are_refused_and_lose_nothing(manager, tmp_path):
    manager.add("wiki", wiki(tmp_path / "dump-1.xml", articles(3)))
    docs = make_folder(tmp_path / "docs", n=1)
    manager.add("docs", docs)
    with manager.open_store("wiki") as store:
        before = rows(store)
    with pytest.raises(CorpusError, match="made from folders"):
        update_corpus(manager, "docs", tmp_path / "dump-1.xml")
    with pytest.raises(CorpusError, match="does not exist"):
        update_corpus(manager, "wiki", tmp_path / "missing.xml")
    (tmp_path / "other.jsonl").write_text(json.dumps({"id": "x", "title": "X", "text": "x"}) + "\n")
    with pytest.raises(CorpusError, match="article ids differ"):
        update_corpus(manager, "wiki", tmp_path / "other.jsonl")
    redirects = tmp_path / "dump-2.xml"
    redirects.write_text(dump([page("R", "#REDIRECT [[Article 1]]", page_id=1)]), encoding="utf-8")
    with pytest.raises(CorpusError, match="No articles found"):
        update_corpus(manager, "wiki", redirects)
    with pytest.raises(CorpusError, match="no corpus named"):
        update_corpus(manager, "nope")
    with manager.open_store("wiki") as store:
        assert rows(store) == before
    import shutil

    shutil.rmtree(docs)
    with pytest.raises(CorpusError, match="is gone"):
        update_corpus(manager, "docs")


def test_an_interrupted_update_resumes_to_the_same_result(manager, tmp_path, monkeypatch, capsys):
    old = articles(30)
    new = {i: (t, x.replace("is about", "was about")) if i % 4 == 0 else (t, x) for i, (t, x) in old.items()}
    for i in (7, 9):
        del new[i]
    new[40] = ("Article 40", "'''Article 40''' is new.")
    for name in ("a", "b"):
        manager.add(name, wiki(tmp_path / f"{name}-1.xml", old))
    target = wiki(tmp_path / "dump-2.xml", new)
    update_corpus(manager, "a", target, batch_size=20)  # uninterrupted: the right result

    from searchain.corpus.update import apply

    real, calls = apply.DocumentUpdater.flush, []

    def dies(self):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("killed")
        return real(self)

    monkeypatch.setattr(apply.DocumentUpdater, "flush", dies)
    with pytest.raises(RuntimeError):
        update_corpus(manager, "b", target, batch_size=20)
    monkeypatch.setattr(apply.DocumentUpdater, "flush", real)
    with manager.open_store("b") as store:
        assert store.meta_get("update")["status"] == "running"
    assert manager.info("b").last_update["from"] == str(target)  # `corpus info` says so
    from searchain.cli.main import main

    capsys.readouterr()
    assert main(["corpus", "info", "b"]) == 0
    assert f"an update from {target} was stopped; run `searchain corpus update b`" in capsys.readouterr().out
    second = update_corpus(manager, "b", batch_size=20)  # no --from: the stopped update goes on
    assert second.removed == 2 and second.changed + second.added < 8
    with manager.open_store("a") as a, manager.open_store("b") as b:
        want = {(p, t) for p, (_, t) in rows(a).items()}
        assert {(p, t) for p, (_, t) in rows(b).items()} == want
        assert b.fts_integrity_ok() and b.meta_get("update")["status"] == "done"


def test_cli_update_json(home, tmp_path, capsys):
    from searchain.cli.main import main

    docs = make_folder(tmp_path / "docs", n=2)
    assert main(["--home", str(home.config_dir.parent), "corpus", "add", "docs", str(docs),
                 "--no-index"]) == 0
    (docs / "f0.md").write_text("# Changed\n\nNew words about lanterns.\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["--home", str(home.config_dir.parent), "corpus", "update", "docs", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {k: out[k] for k in ("unchanged", "changed", "added", "removed", "passages_embedded")} == \
        {"unchanged": 2, "changed": 1, "added": 0, "removed": 0, "passages_embedded": 0}
    assert main(["--home", str(home.config_dir.parent), "corpus", "update", "docs", "--plan",
                 "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["read"]["to_read"] == 0 and plan["indexed"] is False


def test_a_store_without_file_records_syncs_by_its_passages(manager, tmp_path):
    docs = make_folder(tmp_path / "docs", n=3)
    manager.add("docs", docs)
    with manager.open_store("docs") as store:  # as a corpus made before records were kept
        with store.conn:
            store.conn.execute("DELETE FROM documents")
        before = rows(store)
    (docs / "f0.md").write_text("# Note 0\n\nRewritten about harbours.\n", encoding="utf-8")
    report = update_corpus(manager, "docs")
    assert (report.unchanged, report.changed, report.added, report.removed) == (3, 1, 0, 0)
    with manager.open_store("docs") as store:
        after = rows(store)
        assert len(store.documents()) == 4  # recorded now
    assert all(after[p] == v for p, v in before.items() if not p.startswith("docs/f0.md"))


KILLED_UPDATE = """
import os, signal, sys
from pathlib import Path
from searchain.config import AppPaths, Settings
from searchain.corpus.manager import CorpusManager
from searchain.corpus.store import PassageStore
from searchain.corpus.update import update_corpus

real, calls = PassageStore.add, []

def add(self, *args, **kwargs):  # killed between a batch's deletions and its additions
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, *args, **kwargs)

PassageStore.add = add
update_corpus(CorpusManager(AppPaths.resolve(Path(sys.argv[1])), Settings()), "b", sys.argv[2],
              batch_size=20)
"""


def test_a_process_killed_mid_update_leaves_a_consistent_corpus_that_updates_on(manager, home, tmp_path):
    import signal
    import subprocess
    import sys
    from pathlib import Path

    old = articles(30)
    new = {i: (t, x.replace("is about", "was about")) if i % 3 == 0 else (t, x) for i, (t, x) in old.items()}
    del new[8]
    for name in ("a", "b", "c"):  # a: updated in one go, b: killed mid-way, c: stays old
        manager.add(name, wiki(tmp_path / f"{name}-1.xml", old))
    target = wiki(tmp_path / "dump-2.xml", new)
    update_corpus(manager, "a", target, batch_size=20)
    child = subprocess.run([sys.executable, "-c", KILLED_UPDATE, str(home.config_dir.parent), str(target)],
                           cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr

    def by_doc(name):
        with manager.open_store(name) as store:
            docs = {}
            for pid, (_, text) in rows(store).items():
                docs.setdefault(pid.split("#")[0], set()).add((pid, text))
            return docs

    before, after, killed = by_doc("c"), by_doc("a"), by_doc("b")
    # consistent: each article as it was, as it is now, or (caught mid-batch) absent
    assert all(passages in (before.get(d), after.get(d)) for d, passages in killed.items())
    assert len(killed) < 30  # the kill fell between deleting changed articles and adding them
    with manager.open_store("b") as store:
        assert store.fts_integrity_ok() and store.meta_get("update")["status"] == "running"
    update_corpus(manager, "b", batch_size=20)
    with manager.open_store("a") as a, manager.open_store("b") as b:
        assert {(p, t) for p, (_, t) in rows(b).items()} == {(p, t) for p, (_, t) in rows(a).items()}
        assert b.fts_integrity_ok()
