"""Corpus files (bundles) from elsewhere: a manifest of any shape, mutated manifest bytes and
zip members of any name give a ``Manifest`` or a ``CorpusError`` with a hint, before anything
is unpacked (``inspect_bundle`` is what ``corpus import`` and the app's import dialog call first).
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from searchain.config import AppPaths, Settings
from searchain.library.bundle_import import inspect_bundle
from tests.faults.common import any_text, json_values, mutated, only_project_errors

PROPERTY = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

PASSAGES_DB = b"SQLite format 3\0" + b"\0" * 48


def good_manifest() -> dict:
    return {"format": "searchain-corpus", "format_version": 1, "corpus": "river", "passages": 2,
            "members": [{"path": "passages.db", "size": len(PASSAGES_DB), "sha256": "0" * 64}],
            "indexes": [], "index_format": 1, "doc_format": "", "created": "", "app_version": ""}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return AppPaths.resolve(tmp_path_factory.mktemp("bundle-home")).ensure()


def inspect(home: AppPaths, manifest: bytes, members: dict[str, bytes] | None = None):
    """Write a bundle holding ``manifest`` and ``members``; inspect it as ``corpus import`` does."""
    file = Path(tempfile.mkdtemp(dir=home.cache_dir)) / "c.searchain-corpus"
    with zipfile.ZipFile(file, "w") as zf:
        zf.writestr("manifest.json", manifest)
        for name, data in (members if members is not None else {"passages.db": PASSAGES_DB}).items():
            zf.writestr(name, data)
    return only_project_errors(lambda: inspect_bundle(home, Settings(), file))


def test_the_good_manifest_is_accepted(home):
    """The base every property mutates is itself valid, so the properties test the mutations."""
    assert inspect(home, json.dumps(good_manifest()).encode()).corpus == "river"


manifest_keys = st.sampled_from(sorted(good_manifest()) + ["members.0", "indexes.0"])


@PROPERTY
@given(st.dictionaries(manifest_keys, json_values, min_size=1, max_size=3))
@example({"passages": float("inf")})
@example({"members.0": {"path": "passages.db", "size": 1e999, "sha256": "x"}})
@example({"index_format": float("inf")})
@example({"indexes.0": {"folder": "index", "embedder": 7}})
def test_manifest_fields_replaced_by_any_json(home, changes):
    manifest = good_manifest()
    for key, value in changes.items():
        if "." in key:
            name, _ = key.split(".")
            manifest[name] = [value]
        else:
            manifest[key] = value
    inspect(home, json.dumps(manifest).encode())


@PROPERTY
@given(mutated(json.dumps(good_manifest()).encode()))
@example(b"[" * 100_000)  # nesting deep enough to exhaust the JSON decoder's recursion
def test_manifest_bytes_mutated(home, raw):
    inspect(home, raw)


# zipfile cannot write a name holding NUL (it cuts the name there), so none are generated.
member_names = st.one_of(any_text.filter(lambda n: n and "\0" not in n), st.sampled_from(
    ["passages.db", "../x", "/etc/passwd", "a\\b", ".hidden", "index/../../x", "index/meta.json"]))


@PROPERTY
@given(st.dictionaries(member_names, st.binary(max_size=16), max_size=4),
       st.lists(st.tuples(member_names, st.integers(-2, 2**63)), max_size=3))
def test_members_of_any_name_and_size(home, members, listed):
    manifest = good_manifest()
    manifest["members"] += [{"path": p, "size": s, "sha256": "0" * 64} for p, s in listed]
    members = {"passages.db": PASSAGES_DB, **members}
    outcome = inspect(home, json.dumps(manifest).encode(), members)
    if not isinstance(outcome, Exception):  # accepted: every listed member is safe and present
        for m in outcome.members:
            assert not m.path.startswith(("/", ".")) and ".." not in m.path.split("/")
