"""Corpus files: export, import, and every way a file can be refused without leaving anything."""

import json
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from searchain.cli.main import main
from searchain.config import Settings
from searchain.corpus.lock import CorpusLock
from searchain.corpus.manager import CorpusManager
from searchain.errors import Cancelled, CorpusError
from searchain.events import CancelToken, Progress
from searchain.index.status import READY, index_status
from searchain.library.bundle_export import BUNDLE_VERSION, MANIFEST_NAME, corpus_members, export_corpus
from searchain.library.bundle_import import (
    CorpusExists,
    clean_stale_imports,
    import_corpus,
    inspect_bundle,
)
from tests.fixtures.index import MINI_CORPUS

REPO = Path(__file__).resolve().parents[2]


def leftovers(paths) -> list[str]:
    """Everything in the corpora folder besides finished corpora (work folders, partial files)."""
    return sorted(p.name for p in paths.corpora_dir.iterdir() if p.name.startswith("."))


def rewrite(bundle: Path, out: Path, *, manifest=None, members=None) -> Path:
    """A copy of ``bundle`` with its manifest changed by ``manifest(dict)`` and/or its members'
    bytes by ``members(name, bytes) -> bytes``."""
    with zipfile.ZipFile(bundle) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == MANIFEST_NAME and manifest is not None:
                doc = json.loads(data)
                manifest(doc)
                data = json.dumps(doc).encode()
            elif members is not None:
                data = members(info.filename, data)
            dst.writestr(info.filename, data)
    return out


@pytest.fixture
def bundle(indexed_copy, tmp_path):
    """The indexed ``mini`` corpus exported to a file; returns (paths, file)."""
    out = tmp_path / "mini.searchain-corpus"
    export_corpus(indexed_copy, Settings(), MINI_CORPUS, out)
    return indexed_copy, out


def test_round_trip_installs_identical_files_and_a_ready_index(bundle, embedder):
    paths, file = bundle
    events = []
    report = import_corpus(paths, Settings(), file, as_name="copy", on_event=events.append)
    original, copy = paths.corpora_dir / MINI_CORPUS, paths.corpora_dir / "copy"
    rel = [p.relative_to(original).as_posix() for p in corpus_members(original)]
    assert rel[0] == "passages.db" and "index/vectors.faiss" in rel and "index/meta.json" in rel
    for name in rel:
        if name != "passages.db":  # the store records its new name, so it differs by design
            assert (copy / name).read_bytes() == (original / name).read_bytes(), name
    assert report.passages == 20 and report.corpus == "copy" and not report.notes
    assert index_status(paths, "copy").state == READY
    manager = CorpusManager(paths, Settings())
    with manager.open_store("copy") as store:
        assert store.count() == 20 and store.meta_get("name") == "copy"
        assert store.meta_get("imported")["exported_as"] == MINI_CORPUS
    byte_events = [e for e in events if isinstance(e, Progress) and e.stage == "import"]
    assert byte_events[-1].done == byte_events[-1].total == report.bytes
    from searchain.index.retrievers import open_retriever

    hits = open_retriever(paths, Settings(), "copy", "dense", embedder=embedder).search("tallest mountain", 1)
    assert hits[0].passage.title == "Mount Everest"
    assert leftovers(paths) == []


def test_manifest_records_counts_embedders_and_checksums(bundle):
    paths, file = bundle
    manifest = inspect_bundle(paths, Settings(), file)
    assert (manifest.corpus, manifest.passages, manifest.format_version) == (MINI_CORPUS, 20, BUNDLE_VERSION)
    [record] = manifest.indexes
    assert (record.folder, record.embedder, record.dim, record.count) == (
        "index", "sentence-transformers/all-MiniLM-L6-v2", 384, 20)
    import hashlib

    folder = paths.corpora_dir / MINI_CORPUS
    hnsw = next(m for m in manifest.members if m.path == "index/vectors.faiss")
    assert hnsw.sha256 == hashlib.sha256((folder / "index/vectors.faiss").read_bytes()).hexdigest()


def test_members_follow_the_folder_not_a_list_of_known_files(indexed_copy, tmp_path):
    """A new index file (say a compact vector index) travels without changing the bundle code;
    hidden, lock and SQLite transient files do not."""
    folder = indexed_copy.corpora_dir / MINI_CORPUS
    (folder / "index/compact").mkdir()
    (folder / "index/compact/vectors.i8").write_bytes(os.urandom(5000))
    (folder / "index/.meta.json.123.tmp").write_text("half written")
    (folder / "passages.db-wal").write_bytes(b"")
    out = tmp_path / "b.zip"
    export_corpus(indexed_copy, Settings(), MINI_CORPUS, out)
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
    assert "index/compact/vectors.i8" in names
    assert not {n for n in names if ".tmp" in n or n.endswith("-wal") or "lock" in n}
    import_corpus(indexed_copy, Settings(), out, as_name="again")
    assert (indexed_copy.corpora_dir / "again/index/compact/vectors.i8").read_bytes() == \
        (folder / "index/compact/vectors.i8").read_bytes()


def test_existing_name_is_refused_with_a_free_name_to_use(bundle):
    paths, file = bundle
    with pytest.raises(CorpusExists) as err:
        import_corpus(paths, Settings(), file)
    assert err.value.name == MINI_CORPUS and err.value.suggestion == f"{MINI_CORPUS}-2"
    assert f"--as {MINI_CORPUS}-2" in err.value.hint
    assert leftovers(paths) == [] and CorpusManager(paths, Settings()).names() == [MINI_CORPUS]


def test_truncated_file_is_refused_and_nothing_is_installed(bundle, tmp_path):
    paths, file = bundle
    data = file.read_bytes()
    for cut in (len(data) // 2, len(data) - 10):
        short = tmp_path / f"short-{cut}.zip"
        short.write_bytes(data[:cut])
        with pytest.raises(CorpusError, match="damaged or incomplete") as err:
            import_corpus(paths, Settings(), short, as_name="short")
        assert "Copy or download the file again" in err.value.hint
    assert leftovers(paths) == [] and not (paths.corpora_dir / "short").exists()


def test_damaged_member_is_refused_after_unpacking_and_removed(bundle, tmp_path):
    paths, file = bundle

    def flip(name, data):
        if name != "index/vectors.faiss":
            return data
        return data[:100] + bytes([data[100] ^ 0xFF]) + data[101:]

    bad = rewrite(file, tmp_path / "bad.zip", members=flip)
    with pytest.raises(CorpusError, match="index/vectors.faiss does not match its checksum"):
        import_corpus(paths, Settings(), bad, as_name="bad")
    assert leftovers(paths) == [] and not (paths.corpora_dir / "bad").exists()


def test_newer_format_is_refused_before_copying(bundle, tmp_path):
    paths, file = bundle
    newer = rewrite(file, tmp_path / "newer.zip",
                    manifest=lambda m: m.update(format_version=BUNDLE_VERSION + 1))
    with pytest.raises(CorpusError, match="newer SearChain") as err:
        import_corpus(paths, Settings(), newer, as_name="newer")
    assert "Update SearChain" in err.value.hint
    newer_index = rewrite(file, tmp_path / "newer-index.zip", manifest=lambda m: m.update(index_format=99))
    with pytest.raises(CorpusError, match="layout version 99"):
        inspect_bundle(paths, Settings(), newer_index)
    assert leftovers(paths) == []


def test_missing_embedder_is_refused_with_the_fix(bundle, tmp_path):
    paths, file = bundle

    def other_model(embedder):
        return lambda m: m["indexes"][0].update(embedder=embedder)

    hub = rewrite(file, tmp_path / "hub.zip", manifest=other_model("someone/never-installed-model"))
    with pytest.raises(CorpusError, match="'someone/never-installed-model', which this install") as err:
        import_corpus(paths, Settings(), hub, as_name="hub")
    assert "huggingface-cli download someone/never-installed-model" in err.value.hint
    local = rewrite(file, tmp_path / "local.zip", manifest=other_model("local:my-model@0123456789ab"))
    with pytest.raises(CorpusError) as err:
        inspect_bundle(paths, Settings(), local)
    assert "Copy that folder here" in err.value.hint
    assert leftovers(paths) == []


def test_embedder_installed_but_not_configured_is_imported_with_a_note(bundle, tiny_embedder_dir):
    paths, file = bundle
    settings = Settings()
    settings.retrieval.embedder = str(tiny_embedder_dir)
    report = import_corpus(paths, settings, file, as_name="other")
    assert any("retrieval.embedder sentence-transformers/all-MiniLM-L6-v2" in n for n in report.notes)


def test_foreign_files_and_unsafe_paths_are_refused(bundle, tmp_path):
    paths, file = bundle
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(CorpusError, match="damaged or incomplete"):
        inspect_bundle(paths, Settings(), text)
    other_zip = tmp_path / "other.zip"
    with zipfile.ZipFile(other_zip, "w") as zf:
        zf.writestr("readme.txt", "not a corpus")
    with pytest.raises(CorpusError, match="not a SearChain corpus file"):
        inspect_bundle(paths, Settings(), other_zip)

    def escape(m):
        m["members"][1]["path"] = "../../evil.json"

    evil = rewrite(file, tmp_path / "evil.zip", manifest=escape)
    with pytest.raises(CorpusError, match="unsafe member path"):
        import_corpus(paths, Settings(), evil, as_name="evil")
    assert not (paths.corpora_dir.parent / "evil.json").exists() and leftovers(paths) == []
    with pytest.raises(CorpusError, match="does not exist"):
        inspect_bundle(paths, Settings(), tmp_path / "nope.zip")


def test_too_little_disk_space_is_refused_before_writing(bundle, monkeypatch, tmp_path):
    paths, file = bundle
    import shutil

    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda p: real(p)._replace(free=1000))
    with pytest.raises(CorpusError, match="Not enough disk space"):
        import_corpus(paths, Settings(), file, as_name="full")
    with pytest.raises(CorpusError, match="Not enough disk space"):
        export_corpus(paths, Settings(), MINI_CORPUS, tmp_path / "again.zip")
    assert leftovers(paths) == [] and not list(tmp_path.glob(".again*"))


def test_cancel_during_import_leaves_nothing(bundle):
    paths, file = bundle
    cancel = CancelToken()

    def on_event(event):
        if isinstance(event, Progress) and event.done > 0:
            cancel.cancel()

    with pytest.raises(Cancelled):
        import_corpus(paths, Settings(), file, as_name="cancelled", on_event=on_event, cancel=cancel)
    assert leftovers(paths) == [] and not (paths.corpora_dir / "cancelled").exists()


def test_export_removes_what_a_killed_export_left(indexed_copy, tmp_path):
    stale, live = tmp_path / ".m.zip.abc.partial", tmp_path / ".m.zip.def.partial"
    stale.write_bytes(b"half")
    live.write_bytes(b"still being written")
    os.utime(stale, (0, 0))
    export_corpus(indexed_copy, Settings(), MINI_CORPUS, tmp_path / "m.zip")
    assert not stale.exists() and live.exists()


def test_export_refuses_an_existing_file_and_a_corpus_being_written(bundle, tmp_path):
    paths, file = bundle
    with pytest.raises(CorpusError, match="exists already"):
        export_corpus(paths, Settings(), MINI_CORPUS, file)
    with CorpusLock(paths.corpora_dir / MINI_CORPUS).acquire(MINI_CORPUS):
        with pytest.raises(CorpusError, match="being changed by another process"):
            export_corpus(paths, Settings(), MINI_CORPUS, tmp_path / "locked.zip")
    with pytest.raises(CorpusError, match="no corpus named 'ghost'"):
        export_corpus(paths, Settings(), "ghost", tmp_path / "ghost.zip")
    assert not (tmp_path / "locked.zip").exists()


KILLED_IMPORT = """
import sys, time
from searchain.config import AppPaths, Settings
from searchain.library.bundle_import import import_corpus
from searchain.events import Progress

def on_event(event):
    # Stop for good halfway: passages.db unpacked, the index files not yet.
    if isinstance(event, Progress) and event.stage == "import" and 0 < event.done < event.total:
        print("UNPACKING", flush=True)
        time.sleep(120)

import_corpus(AppPaths.resolve(sys.argv[1]), Settings(), sys.argv[2], as_name="killed",
              on_event=on_event)
"""


def test_kill_9_during_import_installs_nothing_and_a_rerun_works(bundle):
    paths, file = bundle
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED_IMPORT, str(paths.config_dir.parent), str(file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "UNPACKING", proc.stderr.read()
        work = [p for p in paths.corpora_dir.iterdir() if p.name.startswith(".import-killed-")]
        assert len(work) == 1 and (work[0] / "passages.db").exists()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    manager = CorpusManager(paths, Settings())
    assert "killed" not in manager.names() and not (paths.corpora_dir / "killed").exists()
    assert clean_stale_imports(paths.corpora_dir) == 1  # what a rerun does first
    import_corpus(paths, Settings(), file, as_name="killed")
    assert index_status(paths, "killed").state == READY and leftovers(paths) == []


def test_stale_import_folder_of_a_live_import_is_left_alone(home):
    live = home.corpora_dir / ".import-live-1"
    live.mkdir(parents=True)
    with CorpusLock(live).acquire("live"):
        assert clean_stale_imports(home.corpora_dir) == 0
    assert clean_stale_imports(home.corpora_dir) == 1 and not live.exists()
    young = home.corpora_dir / ".import-starting-1"
    young.mkdir()  # no lock file yet: an import that is just starting
    assert clean_stale_imports(home.corpora_dir) == 0 and young.exists()


# -- the commands -------------------------------------------------------------------------------

def run(paths, *args):
    return main(["--home", str(paths.config_dir.parent), *args])


def test_cli_export_and_import(indexed_copy, tmp_path, capsys):
    out = tmp_path / "mini.searchain-corpus"
    assert run(indexed_copy, "corpus", "export", MINI_CORPUS, "-o", str(out)) == 0
    assert "exported 20 passages and sentence-transformers/all-MiniLM-L6-v2 (20 vectors)" in \
        capsys.readouterr().out
    assert run(indexed_copy, "corpus", "import", str(out)) == 1
    err = capsys.readouterr().err
    assert f"A corpus named '{MINI_CORPUS}' exists already" in err and f"--as {MINI_CORPUS}-2" in err
    assert run(indexed_copy, "corpus", "import", str(out), "--as", "shared") == 0
    assert "shared: imported 20 passages" in capsys.readouterr().out
    assert run(indexed_copy, "corpus", "list", "--json") == 0
    listed = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    assert listed["shared"]["passages"] == 20 and listed["shared"]["indexed"] == 20
    assert run(indexed_copy, "corpus", "import", str(out), "--as", "bad name!") == 1
    assert "Invalid corpus name" in capsys.readouterr().err
