"""The hnswlib wrapper: recall against exact search, atomic save/load, damage detection."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from searchain.bench.ann.hnsw import HnswIndex, file_sha256, incomplete_save
from searchain.errors import IndexError_

REPO = Path(__file__).resolve().parents[2]


def unit_vectors(n, dim, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(20, dim))
    v = centers[rng.integers(0, 20, n)] + 0.5 * rng.normal(size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def test_search_matches_exact_top_k_and_returns_cosines():
    data = unit_vectors(2000, 32)
    labels = np.arange(100, 2100)
    index = HnswIndex(32, m=16, ef_construction=100, ef=100)
    index.add(data[:1000], labels[:1000])
    index.add(data[1000:], labels[1000:])  # grows past the initial capacity
    assert index.count == 2000
    queries = unit_vectors(50, 32, seed=1)
    found, sims = index.search(queries, 10)
    exact = np.argsort(-(queries @ data.T), axis=1)[:, :10] + 100
    recall = np.mean([len(set(f) & set(e)) / 10 for f, e in zip(found, exact)])
    assert recall >= 0.95
    np.testing.assert_allclose(sims[:, 0], np.sum(queries * data[found[:, 0] - 100], axis=1), atol=1e-4)


def test_save_load_round_trip_and_checksum(tmp_path):
    data = unit_vectors(300, 16)
    index = HnswIndex(16)
    index.add(data, np.arange(1, 301))
    path = tmp_path / "v.hnsw"
    digest = index.save(path)
    assert digest == file_sha256(path)
    assert not list(tmp_path.glob(".*tmp"))  # no temp file left behind
    loaded = HnswIndex.load(path, 16, expected_sha256=digest)
    assert loaded.count == 300
    a, _ = index.search(data[:5], 3)
    b, _ = loaded.search(data[:5], 3)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(loaded.vectors([7]), data[6:7], atol=1e-6)


def test_truncated_or_changed_file_is_a_clear_index_error(tmp_path):
    index = HnswIndex(16)
    index.add(unit_vectors(300, 16), np.arange(300))
    path = tmp_path / "v.hnsw"
    digest = index.save(path)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(IndexError_, match="damaged") as err:
        HnswIndex.load(path, 16, expected_sha256=digest, hint="rebuild it")
    assert err.value.hint == "rebuild it"
    with pytest.raises(IndexError_, match="missing"):
        HnswIndex.load(tmp_path / "absent.hnsw", 16, expected_sha256=digest)


def test_k_larger_than_ef_and_than_the_index():
    index = HnswIndex(8, ef=4)
    index.add(unit_vectors(30, 8), np.arange(30))
    labels, _ = index.search(unit_vectors(1, 8, seed=3), 20)
    assert len(set(labels[0])) == 20
    labels, _ = index.search(unit_vectors(1, 8, seed=3), 100)
    assert labels.shape == (1, 30)


def test_mark_deleted_hides_labels_once():
    data = unit_vectors(50, 8)
    index = HnswIndex(8)
    index.add(data, np.arange(50))
    assert index.mark_deleted([3, 4]) == 2
    assert index.mark_deleted([3]) == 0  # already hidden
    labels, _ = index.search(data[3], 50 - 2)
    assert 3 not in labels[0] and 4 not in labels[0]


def test_bad_shapes_are_rejected():
    index = HnswIndex(8)
    with pytest.raises(ValueError):
        index.add(np.zeros((3, 7), np.float32), [1, 2, 3])
    with pytest.raises(ValueError):
        index.add(np.zeros((3, 8), np.float32), [1, 2])


def test_incomplete_save_tells_a_whole_file_from_a_cut_one(tmp_path):
    index = HnswIndex(16, m=8, ef_construction=50)
    index.add(unit_vectors(2000, 16), np.arange(1, 2001))  # enough elements to have upper levels
    path = tmp_path / "v.hnsw"
    index.save(path)
    whole = path.read_bytes()
    assert incomplete_save(path) is None
    cut = tmp_path / "cut.hnsw"
    for size in (0, 50, 96, len(whole) // 2, len(whole) - 4, len(whole) - 1):
        cut.write_bytes(whole[:size])
        assert incomplete_save(cut), size
    cut.write_bytes(whole + b"\0" * 4)
    assert "+4 bytes" in incomplete_save(cut)


SAVE_UNDER_FILE_SIZE_LIMIT = r"""
import resource, signal, sys
import numpy as np
from searchain.errors import IndexError_
from searchain.bench.ann.hnsw import HnswIndex
index = HnswIndex(16, m=8, ef_construction=50)
index.add(np.random.default_rng(0).random((3000, 16), dtype=np.float32), np.arange(1, 3001))
# A real failed write, as on a full disk: past RLIMIT_FSIZE write() fails (EFBIG) and hnswlib's
# unchecked C++ stream silently stops, leaving a short file.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.RLIM_INFINITY))
try:
    index.save(sys.argv[1])
except IndexError_ as exc:
    print("refused:", exc)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_save_that_cannot_be_written_whole_keeps_the_previous_file(tmp_path):
    path = tmp_path / "v.hnsw"
    previous = HnswIndex(16)
    previous.add(unit_vectors(50, 16), np.arange(1, 51))
    previous.save(path)
    before = path.read_bytes()
    done = subprocess.run([sys.executable, "-c", SAVE_UNDER_FILE_SIZE_LIMIT, str(path)],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused:" in done.stdout and "could not be written completely" in done.stdout
    assert path.read_bytes() == before  # the old graph is still there, whole
    assert [p.name for p in tmp_path.iterdir()] == ["v.hnsw"]  # the short temp file is gone
