"""A read that fails for a reason outside the file (a full disk, an I/O error, a permission, a
lock) is not damage: the corpus is listed as ``unreadable``, its passage count as unknown, and no
hint advises removing it. Real damage (a file that is not SQLite) is still ``damaged``.

The failures are patched in: SQLite raises "disk I/O error" (SQLITE_IOERR_SHMSIZE) when it opens
a WAL store on a full disk, because it cannot size the shared-memory file; a tmpfs to fill is not
available everywhere the suite runs.
"""

import errno
import json
import sqlite3

import pytest

from searchain.cli.main import main
from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.corpus.store import PassageStore
from searchain.errors import is_transient_io

TRANSIENT = [
    sqlite3.OperationalError("disk I/O error"),
    sqlite3.OperationalError("database or disk is full"),
    sqlite3.OperationalError("unable to open database file"),
    sqlite3.OperationalError("database is locked"),
    OSError(errno.ENOSPC, "No space left on device"),
    OSError(errno.EIO, "Input/output error"),
    PermissionError(errno.EACCES, "Permission denied"),
]


@pytest.fixture
def manager(home, tmp_path):
    src = tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps({"id": f"r{i}", "text": f"passage {i}"}) + "\n" for i in range(3)))
    manager = CorpusManager(home, Settings())
    manager.add("good", src)
    return manager


def fail_reads_of(monkeypatch, db, error):
    """Opening ``db`` raises ``error`` the way SQLite does when the disk is full."""
    real = sqlite3.connect

    def connect(path, *args, **kwargs):
        if str(path) == str(db):
            raise error
        return real(path, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)


@pytest.mark.parametrize("error", TRANSIENT, ids=lambda e: str(e))
def test_a_transient_read_error_is_unreadable_not_damaged(manager, monkeypatch, error):
    fail_reads_of(monkeypatch, manager.corpus_dir("good") / "passages.db", error)
    info = manager.info("good")
    assert info.state == "unreadable"
    assert info.passages is None  # not known, and certainly not 0
    assert "remove" not in info.hint.lower() and "try again" in info.hint.lower()
    monkeypatch.undo()
    assert manager.info("good").state == "ready" and manager.info("good").passages == 3


def test_an_error_while_counting_is_unreadable_too(manager, monkeypatch):
    def count(self):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(PassageStore, "count", count)
    assert manager.info("good").state == "unreadable"


def test_real_damage_is_still_damaged(manager):
    bad = manager.corpus_dir("bad")
    bad.mkdir()
    (bad / "passages.db").write_bytes(b"garbage" * 1000)
    info = manager.info("bad")
    assert info.state == "damaged" and "rebuild" in info.hint


def test_unable_to_open_a_file_that_is_not_sqlite_is_damage(manager, monkeypatch):
    db = manager.corpus_dir("good") / "passages.db"
    db.write_bytes(b"\0" * 4096)
    fail_reads_of(monkeypatch, db, sqlite3.OperationalError("unable to open database file"))
    assert manager.info("good").state == "damaged"


def test_classifier_reads_the_cause_chain():
    from searchain.errors import CorpusError

    try:
        try:
            raise sqlite3.OperationalError("database or disk is full")
        except sqlite3.Error as exc:
            raise CorpusError("Cannot open passage store") from exc
    except CorpusError as wrapped:
        assert is_transient_io(wrapped)
    assert not is_transient_io(sqlite3.DatabaseError("file is not a database"))
    assert not is_transient_io(sqlite3.DatabaseError("database disk image is malformed"))
    assert not is_transient_io(ValueError("bad json"))


def run(home, *args):
    return main(["--home", str(home.config_dir.parent), *args])


def test_cli_list_and_info_never_advise_removing_an_unreadable_corpus(manager, home, monkeypatch, capsys):
    fail_reads_of(monkeypatch, manager.corpus_dir("good") / "passages.db",
                  sqlite3.OperationalError("disk I/O error"))
    assert run(home, "corpus", "list") == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "good" in line)
    assert "unreadable" in row and "damaged" not in row and " 0 " not in row
    assert run(home, "corpus", "info", "good") == 0
    out = capsys.readouterr().out
    assert "state:     unreadable" in out and "passages:  ?" in out
    assert "remove" not in out.lower() and "damaged" not in out
    assert run(home, "corpus", "list", "--json") == 0
    listed = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    assert (listed["good"]["state"], listed["good"]["passages"]) == ("unreadable", None)


def test_doctor_does_not_advise_removing_an_unreadable_corpus(manager, home, monkeypatch):
    from searchain.doctor.installation import run_checks

    fail_reads_of(monkeypatch, manager.corpus_dir("good") / "passages.db",
                  sqlite3.OperationalError("database or disk is full"))
    corpus = [c for c in run_checks(home) if c.area == "corpus" and "good" in c.summary]
    assert corpus and "unreadable" in corpus[0].summary
    assert "remove" not in corpus[0].fix.lower() and "rebuild" not in corpus[0].fix.lower()
