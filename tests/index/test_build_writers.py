"""A corpus's writers side by side: passages added while an index build runs end up searchable
after the next build at the latest, whatever the interleaving (issue #36, item 1)."""

import numpy as np
import pytest

from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.errors import CorpusError
from searchain.index.build import builder as builder_mod
from searchain.index.build import compact_build
from searchain.index.build.builder import build_index, embed_here
from searchain.index.layout import IndexLayout
from searchain.index.retrievers import open_retriever
from searchain.index.status import READY, STALE, index_status
from tests.fixtures.index import MINI_CORPUS, MINI_PASSAGES, write_mini_corpus

LATE = [("Saturn", "Saturn is the sixth planet from the Sun, famous for its bright rings of ice."),
        ("Kyoto", "Kyoto was the imperial capital of Japan for more than a thousand years.")]


def add(paths, tmp_path, passages, name, prefix):
    source = write_mini_corpus(tmp_path / name, passages, prefix)
    CorpusManager(paths, Settings()).add(MINI_CORPUS, source, "jsonl")


def deleted_rows(paths) -> np.ndarray:
    layout = IndexLayout(paths.corpora_dir / MINI_CORPUS / "index")
    return np.load(layout.deleted_file) if layout.deleted_file.exists() else np.zeros(0)


def top_title(paths, embedder, text):
    return open_retriever(paths, Settings(), MINI_CORPUS, "dense", embedder=embedder).search(text, 1)[0].passage.title


def test_passages_added_while_the_build_embeds_are_indexed(home, tmp_path, embedder):
    """The reported defect: an add during the embedding left 100 passages hidden for good."""
    add(home, tmp_path, MINI_PASSAGES, "a.jsonl", "a")

    def embed_with_a_concurrent_add(job):
        add(home, tmp_path, LATE, "b.jsonl", "b")  # another writer commits mid-build
        return embed_here(job)

    report = build_index(home, Settings(), MINI_CORPUS, embedder=embedder, embed_missing=embed_with_a_concurrent_add)
    assert report.embedded == len(MINI_PASSAGES) + len(LATE)
    assert report.total == len(MINI_PASSAGES) + len(LATE)
    assert len(deleted_rows(home)) == 0
    assert index_status(home, MINI_CORPUS).state == READY
    assert top_title(home, embedder, LATE[0][1]) == "Saturn"


def test_passages_added_after_the_embedding_wait_for_the_next_build(home, tmp_path, embedder, monkeypatch):
    add(home, tmp_path, MINI_PASSAGES, "a.jsonl", "a")
    real = compact_build.build_compact

    def index_with_a_late_add(*args, **kwargs):
        add(home, tmp_path, LATE, "b.jsonl", "b")  # after the last batch was read, before the index stage
        return real(*args, **kwargs)

    monkeypatch.setattr(builder_mod, "build_compact", index_with_a_late_add)
    first = build_index(home, Settings(), MINI_CORPUS, embedder=embedder)
    monkeypatch.setattr(builder_mod, "build_compact", real)
    assert first.total == len(MINI_PASSAGES) and len(deleted_rows(home)) == 0
    assert index_status(home, MINI_CORPUS).state == STALE  # says so, and building again is the fix
    again = build_index(home, Settings(), MINI_CORPUS, embedder=embedder)
    assert again.embedded == len(LATE) and again.total == len(MINI_PASSAGES) + len(LATE)
    assert top_title(home, embedder, LATE[1][1]) == "Kyoto"


def test_the_next_build_shows_passages_an_older_build_hid_by_mistake(indexed_copy, embedder):
    """Indexes built before the fix may list live passages as deleted: a plain build repairs them."""
    layout = IndexLayout(indexed_copy.corpora_dir / MINI_CORPUS / "index")
    np.save(layout.deleted_file, np.array([3, 4], dtype=np.int64))  # Photosynthesis, Jupiter
    assert top_title(indexed_copy, embedder, MINI_PASSAGES[4][1]) != "Jupiter"
    report = build_index(indexed_copy, Settings(), MINI_CORPUS, embedder=embedder)
    assert report.embedded == 0 and report.total == len(MINI_PASSAGES)
    assert len(deleted_rows(indexed_copy)) == 0
    assert top_title(indexed_copy, embedder, MINI_PASSAGES[4][1]) == "Jupiter"


def test_a_second_build_of_a_corpus_refuses_and_an_add_goes_on(home, tmp_path, embedder):
    add(home, tmp_path, MINI_PASSAGES, "a.jsonl", "a")
    manager = CorpusManager(home, Settings())
    with manager.build_lock(MINI_CORPUS):  # a build in another process or window
        with pytest.raises(CorpusError, match="being indexed"):
            build_index(home, Settings(), MINI_CORPUS, embedder=embedder)
        add(home, tmp_path, LATE, "b.jsonl", "b")  # adds do not wait for a build
    assert build_index(home, Settings(), MINI_CORPUS, embedder=embedder).total == len(MINI_PASSAGES) + len(LATE)


def test_building_an_unknown_corpus_makes_no_folder(home, embedder):
    with pytest.raises(CorpusError, match="no corpus named"):
        build_index(home, Settings(), "nothing-here", embedder=embedder)
    assert not (home.corpora_dir / "nothing-here").exists()
