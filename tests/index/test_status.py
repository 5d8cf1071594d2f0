"""Index status without hashing (listings, `corpus info`): a truncated index file is damaged,
not ready; an index whose files cannot be read right now (a full disk, a permission) is
unreadable, not damaged."""

import errno
import json
from pathlib import Path

from searchain.cli.main import main
from searchain.config import Settings
from searchain.index.layout import IndexLayout
from searchain.index.status import DAMAGED, READY, UNREADABLE, index_status, listing_status
from tests.fixtures.index import MINI_CORPUS


def layout_of(paths):
    return IndexLayout(paths.corpora_dir / MINI_CORPUS / "index")


def test_the_build_records_the_size_of_each_index_file(indexed_home):
    layout = layout_of(indexed_home)
    sizes = json.loads(layout.meta_file.read_text())["file_sizes"]
    for path in (layout.compact_file, layout.rows_file, layout.shard_table_file):
        assert sizes[path.name] == path.stat().st_size > 0


def test_a_truncated_index_file_is_damaged_even_without_hashing(indexed_copy, capsys):
    assert listing_status(indexed_copy, Settings(), MINI_CORPUS).state == READY
    for path in (layout_of(indexed_copy).compact_file, layout_of(indexed_copy).rows_file):
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        status = listing_status(indexed_copy, Settings(), MINI_CORPUS)
        assert status.state == DAMAGED and path.name in status.message
        assert "searchain corpus index mini" in status.hint
        path.write_bytes(data)
    path = layout_of(indexed_copy).compact_file
    path.write_bytes(path.read_bytes()[:100])
    assert main(["--home", str(indexed_copy.config_dir.parent), "corpus", "info", MINI_CORPUS]) == 0
    index_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("index:"))
    assert "damaged" in index_line and "ready" not in index_line.split()[1]


def test_an_index_recorded_before_sizes_were_kept_still_reads_ready(indexed_copy):
    meta_file = layout_of(indexed_copy).meta_file
    meta = json.loads(meta_file.read_text())
    del meta["file_sizes"]
    meta_file.write_text(json.dumps(meta))
    assert listing_status(indexed_copy, Settings(), MINI_CORPUS).state == READY


def test_index_files_that_cannot_be_read_now_are_unreadable_not_damaged(indexed_copy, monkeypatch):
    meta_file = layout_of(indexed_copy).meta_file
    real = Path.read_text

    def read_text(self, *args, **kwargs):
        if self == meta_file:
            raise OSError(errno.EIO, "Input/output error")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    status = index_status(indexed_copy, MINI_CORPUS)
    assert status.state == UNREADABLE and not status.usable
    assert "--rebuild" not in status.hint and "try again" in status.hint.lower()


def test_a_failing_checksum_read_is_unreadable(indexed_copy, monkeypatch):
    import searchain.index.status as status_module

    def sha256(path, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(status_module, "file_sha256", sha256)
    assert index_status(indexed_copy, MINI_CORPUS).state == UNREADABLE
