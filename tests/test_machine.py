"""Machine facts (searchain.machine) and streamed file hashes (searchain.files)."""

import hashlib

import pytest

from searchain import machine
from searchain.errors import Cancelled
from searchain.events import CancelToken, Progress
from searchain.files import CHUNK, file_sha256


def test_memory_figures_are_read_from_this_machine():
    total, available = machine.total_memory_bytes(), machine.available_memory_bytes()
    assert total and available and 0 < available <= total


def test_package_folders_find_a_package_without_importing_it():
    assert any((folder / "machine.py").is_file() for folder in machine.package_folders("searchain"))
    assert machine.package_folders("no_such_package_here") == []


def test_file_sha256_streams_reports_progress_and_stops_when_cancelled(tmp_path):
    path = tmp_path / "blob"
    data = bytes(range(256)) * (CHUNK // 256 * 2 + 3)  # a bit over two chunks
    path.write_bytes(data)
    events = []
    assert file_sha256(path, on_event=events.append) == hashlib.sha256(data).hexdigest()
    assert [e.done for e in events] == [CHUNK, 2 * CHUNK, len(data)]
    assert all(isinstance(e, Progress) and e.total == len(data) and e.stage == "verify" for e in events)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        file_sha256(path, cancel=token)
