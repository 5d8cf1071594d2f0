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


def _sysfs(root, siblings):
    for cpu, threads in enumerate(siblings):
        folder = root / f"cpu{cpu}" / "topology"
        folder.mkdir(parents=True)
        (folder / "thread_siblings_list").write_text(threads + "\n")
    return root


def test_hardware_threads_count_as_cores_only_in_part(tmp_path, monkeypatch):
    from searchain import machine

    monkeypatch.setattr(machine.os, "cpu_count", lambda: 4)
    two_cores = _sysfs(tmp_path / "smt", ["0,2", "1,3", "0,2", "1,3"])  # 2 cores x 2 threads
    assert machine.cpu_cores(two_cores) == (4, 2)
    assert machine.cpu_capacity(two_cores) == pytest.approx(2 + 2 * machine.SMT_YIELD)
    four_cores = _sysfs(tmp_path / "plain", ["0", "1", "2", "3"])
    assert machine.cpu_cores(four_cores) == (4, 4) and machine.cpu_capacity(four_cores) == 4
    # no topology to read (not Linux, a sandbox): every CPU counts as a core
    assert machine.cpu_cores(tmp_path / "none") == (4, 4) and machine.cpu_capacity(tmp_path / "none") == 4
