"""The settings file and conversation imports, whatever they hold: settings or a
``ConfigError``, imported conversations or a ``StoreError``, each with a hint; never a crash.

The settings file is edited by hand (and by other versions of the app); an import file comes
from another machine. Both are read before the user can do anything else, so an unexpected
exception there would stop the app from starting or the import dialog from answering.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from searchain.config import AppPaths, Settings
from searchain.store import ConversationStore
from tests.faults.common import json_values, mutated, only_project_errors

PROPERTY = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
DEEP = b"[" * 100_000  # nesting deep enough to exhaust the JSON decoder's recursion


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("settings-chats")


def paths_with_settings(root: Path, raw: bytes) -> AppPaths:
    paths = AppPaths.resolve(tempfile.mkdtemp(dir=root)).ensure()
    paths.settings_file.write_bytes(raw)
    return paths


def load_both_ways(paths: AppPaths) -> None:
    """Strict (the CLI: a bad value is an error) and tolerant (the app: a bad value is a note)."""
    only_project_errors(lambda: Settings.load(paths))
    notes: list[str] = []
    loaded = only_project_errors(lambda: Settings.load(paths, notes))
    if isinstance(loaded, Settings):  # what was loaded tolerantly can be saved and read back
        loaded.save(paths)
        assert Settings.load(paths) == loaded


# -- the settings file ----------------------------------------------------------------------

def settings_paths():
    """Every ``section.key`` of the settings, so generated documents hit real fields."""
    return sorted(f"{s}.{k}" for s, v in Settings().to_dict().items() if isinstance(v, dict) for k in v)


@PROPERTY
@given(st.dictionaries(st.sampled_from(settings_paths()), json_values, max_size=4), json_values)
def test_settings_with_any_values(scratch, values, stray):
    doc: dict = Settings().to_dict()
    for key, value in values.items():
        section, name = key.split(".")
        doc[section][name] = value
    doc["stray"] = stray
    load_both_ways(paths_with_settings(scratch, json.dumps(doc).encode()))


@PROPERTY
@given(mutated(json.dumps(Settings().to_dict()).encode()))
@example(DEEP)
@example(b'{"retrieval": "\\ud800"}')
@example(b'{"llm": {"model_path": "\\ud800", "server_url": "\\udfff"}}')
def test_settings_file_bytes_mutated(scratch, raw):
    load_both_ways(paths_with_settings(scratch, raw))


# -- conversation imports -------------------------------------------------------------------

@pytest.fixture(scope="module")
def export_doc(tmp_path_factory):
    """A real export: one conversation with a question and a full SearChain answer."""
    from tests.fixtures.store import build_sample_result
    from searchain.store import RunInfo

    store = ConversationStore.open(tmp_path_factory.mktemp("export") / "c.db")
    result = build_sample_result()
    cid = store.create_conversation("kept")
    store.add_user_message(cid, result.question)
    mid = store.begin_answer(cid, RunInfo(model="m.gguf", corpus="c", reader="dpr", mode="searchain",
                                          theta=1.5, alpha=0.35, r_max=5, top_k=1, retriever="hybrid"))
    store.finish_answer(mid, result)
    doc = store.export_json([cid])
    store.close()
    return doc


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    store = ConversationStore.open(tmp_path_factory.mktemp("import") / "c.db")
    yield store
    store.close()


def places(value, at=()):
    """Every path into a JSON document, e.g. ``("conversations", 0, "messages", 1, "result")``."""
    yield at
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from places(child, at + (key,))


def import_file(store: ConversationStore, root: Path, raw: bytes):
    path = Path(tempfile.mkdtemp(dir=root)) / "chats.json"
    path.write_bytes(raw)
    before = len(store.list_conversations())
    ids = only_project_errors(lambda: store.import_json_file(path))
    after = len(store.list_conversations())
    # An import is whole or nothing: a refused file adds no conversation.
    assert after - before == (len(ids) if isinstance(ids, list) else 0)


def test_the_real_export_imports(target, scratch, export_doc):
    """The base every property mutates is itself valid, so the properties test the mutations."""
    assert len(only_project_errors(lambda: target.import_json(export_doc))) == 1


@PROPERTY
@given(data=st.data())
def test_import_with_one_place_replaced(target, scratch, export_doc, data):
    doc = json.loads(json.dumps(export_doc))
    at = data.draw(st.sampled_from(list(places(doc))[1:]))
    parent = doc
    for key in at[:-1]:
        parent = parent[key]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[at[-1]]
    else:
        parent[at[-1]] = data.draw(json_values)
    import_file(target, scratch, json.dumps(doc).encode())


@PROPERTY
@given(data=st.data())
@example(data=None)
def test_import_file_bytes_mutated(target, scratch, export_doc, data):
    raw = json.dumps(export_doc).encode()
    for special in (DEEP, raw.replace(b'"kept"', b'"\\ud800"')) if data is None else ():
        import_file(target, scratch, special)
    if data is not None:
        import_file(target, scratch, data.draw(mutated(raw)))


def test_a_number_too_large_for_sqlite_is_refused_whole(target, scratch, export_doc):
    """JSON numbers are unbounded: one past 64 bits in a saved answer (hypothesis found it in a
    node's field) is a clear error, and nothing of the file is added."""
    from searchain.errors import StoreError

    ints = [at for at in places(export_doc) if "result" in at and isinstance(_at(export_doc, at), int)
            and not isinstance(_at(export_doc, at), bool)]
    assert ints
    too_large = 0
    for at in ints:
        doc = json.loads(json.dumps(export_doc))
        _at(doc, at[:-1])[at[-1]] = 2 ** 70
        before = len(target.list_conversations())
        got = only_project_errors(lambda: target.import_json(doc))
        assert isinstance(got, StoreError) and len(target.list_conversations()) == before
        too_large += "too large to store" in got.message
    assert too_large  # refused at the write, not only by the format's own checks


def _at(doc, at):
    for key in at:
        doc = doc[key]
    return doc
