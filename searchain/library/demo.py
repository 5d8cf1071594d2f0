"""The demo corpus shipped in ``resources/demo_corpus/``: indexed on first run.

``articles/`` holds original Markdown articles (one entity each, written for this project);
``questions.jsonl`` holds 2-3 hop questions over them for end-to-end tests. The store records
a fingerprint of the articles, so a changed demo (a new app version) is re-ingested.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import AppPaths, Settings, resources_dir
from ..events import CancelToken, EventCallback

if TYPE_CHECKING:  # the manager (sqlite-utils) loads only when the demo is built
    from ..corpus.manager import CorpusInfo, CorpusManager

DEMO_NAME = "demo"
FINGERPRINT_KEY = "demo_fingerprint"


def demo_articles_dir() -> Path:
    return resources_dir() / "demo_corpus" / "articles"


def demo_questions_file() -> Path:
    return resources_dir() / "demo_corpus" / "questions.jsonl"


def demo_questions(limit: int | None = None) -> list[str]:
    """The demo's example questions, in file order (the app offers them on an empty chat)."""
    lines = demo_questions_file().read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    return questions[:limit] if limit is not None else questions


def articles_fingerprint(folder: Path | None = None) -> str:
    """SHA-256 over the articles' relative paths and bytes (changes when any article does)."""
    folder = folder or demo_articles_dir()
    digest = hashlib.sha256()
    for file in sorted(folder.rglob("*.md")):
        digest.update(file.relative_to(folder).as_posix().encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def ensure_demo_corpus(paths: AppPaths, settings: Settings, *, on_event: EventCallback | None = None,
                       cancel: CancelToken | None = None, index: bool = True,
                       embedder=None, second_embedder=None) -> "CorpusInfo":
    """Make sure corpus "demo" exists, is complete and current, and (``index``) is indexed.

    ``embedder`` and ``second_embedder`` (``index.embedder.Embedder``s) are used for the build when
    given, so a caller that searches next does not load the models twice.

    Missing or incomplete: ingest (continuing where a killed run stopped). Outdated articles:
    rebuild. Then build the vector index unless it already covers every passage (with the second
    embedding model too, when one is on).
    """
    from ..corpus.manager import READY, CorpusManager

    manager = CorpusManager(paths, settings)
    articles = demo_articles_dir()
    fingerprint = articles_fingerprint(articles)
    if not manager.exists(DEMO_NAME) or manager.info(DEMO_NAME).state != READY:
        manager.add(DEMO_NAME, articles, "folder", on_event=on_event, cancel=cancel)
        _set_fingerprint(manager, fingerprint)
    elif _fingerprint(manager) != fingerprint:
        # Old articles may have vanished, and their pids (path#k) now name other text.
        # Remove (index included) and add again, keeping "demo" active if it was.
        was_active = manager.active == DEMO_NAME
        manager.remove(DEMO_NAME)
        manager.add(DEMO_NAME, articles, "folder", on_event=on_event, cancel=cancel)
        _set_fingerprint(manager, fingerprint)
        if was_active:
            manager.set_active(DEMO_NAME)
    info = manager.info(DEMO_NAME)
    if index and (info.indexed != info.passages or _index_outdated(manager)
                  or _second_index_lags(paths, settings)):
        from ..index.build.builder import build_index  # lazy: pulls in the embedding stack

        build_index(paths, settings, DEMO_NAME, on_event=on_event, cancel=cancel, embedder=embedder,
                    second_embedder=second_embedder)
        info = manager.info(DEMO_NAME)
    return info


def _index_outdated(manager: "CorpusManager") -> bool:
    """The demo index was made by an earlier version in a format search no longer reads (it is
    converted from its saved embeddings, in a second: nothing is re-embedded)."""
    from ..errors import IndexError_
    from ..index.layout import IndexLayout, IndexMeta

    layout = IndexLayout(manager.corpus_dir(DEMO_NAME) / "index")
    try:
        return layout.meta_file.exists() and IndexMeta.read(layout.meta_file, DEMO_NAME).outdated
    except IndexError_:
        return False


def _second_index_lags(paths: AppPaths, settings: Settings) -> bool:
    """A second embedding model is on and has not indexed every demo passage yet."""
    from ..index.status import READY, index_status, wanted_embedders

    first, second = wanted_embedders(settings, paths.models_dir)
    if not second:
        return False
    return index_status(paths, DEMO_NAME, embedder_id=first, second_embedder_id=second,
                        verify_checksum=False).state != READY


def _fingerprint(manager: "CorpusManager") -> str | None:
    with manager.open_store(DEMO_NAME) as store:
        return store.meta_get(FINGERPRINT_KEY)


def _set_fingerprint(manager: "CorpusManager", value: str) -> None:
    with manager.open_store(DEMO_NAME) as store:
        store.meta_set(FINGERPRINT_KEY, value)

