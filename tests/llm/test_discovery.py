"""Model discovery (#35): the GGUFs other local-LLM apps keep, found in a fake home laid out like
each app, with the right names and sizes, used in place (nothing copied or written), and broken
files listed with their reason. The layout is ``tests/fixtures/discovery.py``."""

import json
import shutil

import pytest

from searchain.cli.main import main
from searchain.config import Settings
from searchain.errors import Cancelled
from searchain.events import CancelToken
from searchain.llm.models import recommend
from searchain.llm.models.discovery import SOURCES, discover_models
from tests.fixtures.discovery import GB, HF_BLOB, OLLAMA_DIGEST, tree_state

GIB = 1024 ** 3
LAPTOP = recommend.MachineFacts(16 * GIB, 12 * GIB)  # CPU only: a third of 16 GiB is the limit


def _found(layout, home, **kw):
    return discover_models(home.models_dir, [str(layout.user_folder)], **kw)


def test_every_apps_models_are_found_with_their_names_and_sizes(app_layouts, home):
    found = _found(app_layouts, home)
    readable = {m.name: (m.source, m.size_bytes) for m in found if m.usable}
    assert readable == app_layouts.expected
    assert {m.name: m.path for m in found if m.usable} == app_layouts.paths
    broken = {m.name: m.source for m in found if not m.usable}
    assert broken == app_layouts.broken
    assert len(found) == len(app_layouts.expected) + len(app_layouts.broken)  # each file once
    assert [m.source for m in found] == sorted((m.source for m in found), key=SOURCES.index)


def test_nothing_is_copied_moved_or_written(app_layouts, home):
    before = tree_state(app_layouts.home, home.data_dir.parent)
    _found(app_layouts, home, machine=LAPTOP)
    assert tree_state(app_layouts.home, home.data_dir.parent) == before


def test_ollama_models_are_named_from_their_manifests_and_used_as_blobs(app_layouts, home):
    rows = {m.name: m for m in _found(app_layouts, home)}
    llama = rows["llama3.2:3b"]
    assert llama.path.name == f"sha256-{OLLAMA_DIGEST}" and llama.path.parent.name == "blobs"
    assert llama.aliases == ("llama3.2:latest",)  # the second tag of the same blob
    assert llama.repo == "registry.ollama.ai/library/llama3.2/3b"
    assert llama.facts.template_family == "llama3"
    assert "hf.co/bartowski/SmolLM2-GGUF:Q4_K_M" in rows


def test_hugging_face_snapshots_resolve_to_their_blob_once(app_layouts, home):
    (row,) = [m for m in _found(app_layouts, home) if m.source == "hf-cache"]
    assert row.repo == "Qwen/Qwen2.5-1.5B-Instruct-GGUF"
    assert row.resolved is not None and row.resolved.name == HF_BLOB
    assert row.path.is_symlink() and row.facts.quantisation == "Q4_K_M"


def test_a_link_into_another_apps_folder_is_one_row_with_an_alias(app_layouts, home):
    rows = {m.name: m for m in _found(app_layouts, home)}
    assert rows["Qwen3-4B-Q4_K_M"].source == "lmstudio"
    assert rows["Qwen3-4B-Q4_K_M"].aliases == ("qwen-link",)
    assert "qwen-link" not in rows
    # LM Studio's publisher/repo folders name each file's repository.
    assert rows["Qwen3-4B-Q4_K_M"].repo == "lmstudio-community/Qwen3-4B-GGUF"
    assert rows["Big-Q4_K_M"].repo == "bartowski/Big-GGUF"


def test_header_facts_and_fit_for_this_machine(app_layouts, home):
    rows = {m.name: m for m in _found(app_layouts, home, machine=LAPTOP, n_ctx=4096)}
    qwen = rows["Qwen3-4B-Q4_K_M"]
    assert (qwen.facts.quantisation, qwen.facts.context_length) == ("Q4_K_M", 8192)
    assert qwen.facts.template_family == "qwen3"
    assert rows["mistral-7b.Q4_K_M"].facts.template_family == "mistral"
    assert qwen.fits == "cpu" and qwen.ram_bytes > qwen.size_bytes
    assert rows["Big-Q4_K_M"].fits == ""  # 9 GB of weights: more than a third of 16 GiB
    rtx = recommend.MachineFacts(32 * GIB, 24 * GIB, "RTX 4070", 12 * GIB, True)
    rows = {m.name: m for m in _found(app_layouts, home, machine=rtx)}
    assert rows["Big-Q4_K_M"].fits == "gpu" and rows["Big-Q4_K_M"].vram_bytes < 12 * GIB * 0.9
    assert all(m.fits is None for m in _found(app_layouts, home))  # machine not probed


def test_broken_files_say_why(app_layouts, home):
    rows = {m.name: m for m in _found(app_layouts, home)}
    assert "damaged or truncated" in rows["cut-short"].error
    assert "not a GGUF file" in rows["not-a-model"].error
    assert rows["cut-short"].size_bytes == 200 and rows["cut-short"].facts is None


def test_an_ollama_manifest_without_its_blob_or_unreadable_is_listed(user_home):
    models = user_home / ".ollama" / "models"
    (models / "manifests/registry.ollama.ai/library/gone").mkdir(parents=True)
    (models / "manifests/registry.ollama.ai/library/gone/latest").write_text(json.dumps(
        {"layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + "e" * 64}]}))
    (models / "manifests/registry.ollama.ai/library/garbled").mkdir()
    (models / "manifests/registry.ollama.ai/library/garbled/7b").write_text("{not json")
    rows = {m.name: m for m in discover_models()}
    assert "ollama pull gone:latest" in rows["gone:latest"].error
    assert "cannot be read" in rows["garbled:7b"].error


def test_other_apps_settings_and_variables_move_their_folders(user_home, tmp_path, monkeypatch):
    """LM Studio's downloadsFolder, GPT4All's modelPath, Jan's data_folder, OLLAMA_MODELS,
    HF_HUB_CACHE, LLAMA_CACHE and the XDG variables are followed."""
    from searchain.llm.fakes.sparse_gguf import write_sparse_gguf

    elsewhere = tmp_path / "disk"
    (user_home / ".lmstudio").mkdir()
    (user_home / ".lmstudio/settings.json").write_text(json.dumps({"downloadsFolder": str(elsewhere / "lms")}))
    write_sparse_gguf(elsewhere / "lms/pub/repo/moved-lms.gguf", GB)
    (user_home / "cfg/nomic.ai").mkdir(parents=True)
    (user_home / "cfg/nomic.ai/GPT4All.ini").write_text(f"[General]\nmodelPath={elsewhere / 'g4a'}/\n")
    write_sparse_gguf(elsewhere / "g4a/moved-gpt4all.gguf", GB)
    (user_home / "cfg/Jan").mkdir(parents=True)
    (user_home / "cfg/Jan/settings.json").write_text(json.dumps({"data_folder": str(elsewhere / "jan")}))
    write_sparse_gguf(elsewhere / "jan/llamacpp/models/moved-jan/model.gguf", GB)
    write_sparse_gguf(elsewhere / "xdg-cache/llama.cpp/xdg-llama.gguf", GB)
    write_sparse_gguf(elsewhere / "lc/llama-cache.gguf", GB)
    repo = elsewhere / "hub/models--org--repo/snapshots/r1"
    write_sparse_gguf(repo / "hub-model.gguf", GB)
    write_sparse_gguf(elsewhere / "om/blobs" / ("sha256-" + "d" * 64), GB)
    (elsewhere / "om/manifests/registry.ollama.ai/library/moved").mkdir(parents=True)
    (elsewhere / "om/manifests/registry.ollama.ai/library/moved/latest").write_text(json.dumps(
        {"layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + "d" * 64}]}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user_home / "cfg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(elsewhere / "xdg-cache"))
    monkeypatch.setenv("LLAMA_CACHE", str(elsewhere / "lc"))
    monkeypatch.setenv("HF_HUB_CACHE", str(elsewhere / "hub"))
    monkeypatch.setenv("OLLAMA_MODELS", str(elsewhere / "om"))
    rows = {m.name: m.source for m in discover_models()}
    assert rows == {"moved-lms": "lmstudio", "moved:latest": "ollama", "moved-gpt4all": "gpt4all",
                    "moved-jan": "jan", "hub-model": "hf-cache", "llama-cache": "llama.cpp",
                    "xdg-llama": "llama.cpp"}


def test_windows_and_macos_places(user_home, tmp_path, monkeypatch):
    from searchain.llm.fakes.sparse_gguf import write_sparse_gguf

    write_sparse_gguf(user_home / "Library/Application Support/nomic.ai/GPT4All/mac-gpt4all.gguf", GB)
    write_sparse_gguf(user_home / "Library/Application Support/Jan/data/llamacpp/models/mac-jan/model.gguf", GB)
    write_sparse_gguf(user_home / "Library/Caches/llama.cpp/mac-llama.gguf", GB)
    local = tmp_path / "AppData/Local"
    write_sparse_gguf(local / "nomic.ai/GPT4All/win-gpt4all.gguf", GB)
    write_sparse_gguf(local / "llama.cpp/win-llama.gguf", GB)
    write_sparse_gguf(tmp_path / "AppData/Roaming/Jan/data/llamacpp/models/win-jan/model.gguf", GB)
    monkeypatch.setenv("LOCALAPPDATA", str(local))
    monkeypatch.setenv("APPDATA", str(tmp_path / "AppData/Roaming"))
    assert {m.name: m.source for m in discover_models()} == {
        "mac-gpt4all": "gpt4all", "win-gpt4all": "gpt4all", "mac-jan": "jan", "win-jan": "jan",
        "mac-llama": "llama.cpp", "win-llama": "llama.cpp"}


def test_other_apps_can_be_left_out(app_layouts, home, monkeypatch):
    assert {m.source for m in _found(app_layouts, home, other_apps=False)} == {"app", "folder"}
    monkeypatch.setenv("SEARCHAIN_DISCOVER_OTHER_APPS", "off")
    # The link into LM Studio's folder is now found only as a file of the user's folder.
    assert {m.name for m in _found(app_layouts, home)} == {"app-model", "mine", "qwen-link"}


def test_an_empty_home_finds_nothing_and_a_cancel_stops(app_layouts, home, user_home):
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        _found(app_layouts, home, cancel=token)
    for child in user_home.iterdir():
        if child.name != "my-models":
            shutil.rmtree(child)
    assert {m.name for m in _found(app_layouts, home)} == {"app-model", "mine"}


def test_cli_lists_everything_as_json_and_uses_a_found_model_in_place(app_layouts, home, capsys, monkeypatch):
    monkeypatch.setattr(recommend, "machine_facts", lambda: LAPTOP)
    settings = Settings.load(home)
    settings.llm.model_folders = [str(app_layouts.user_folder)]
    settings.save(home)
    root = ["--home", str(home.config_dir.parent)]
    assert main([*root, "models", "list", "--all", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert isinstance(rows, list) and len(rows) == len(app_layouts.expected) + len(app_layouts.broken)
    for row in rows:
        assert {"name", "path", "source", "size_bytes", "quantisation", "context_length",
                "template_family", "fits", "error", "active"} <= set(row)
        assert row["source"] in SOURCES
    by_name = {r["name"]: r for r in rows}
    assert {n: (r["source"], r["size_bytes"]) for n, r in by_name.items() if not r["error"]} == app_layouts.expected
    assert by_name["Qwen3-4B-Q4_K_M"]["fits"] == "cpu" and by_name["Big-Q4_K_M"]["fits"] == ""

    before = tree_state(app_layouts.home)
    assert main([*root, "models", "use", "llama3.2:latest"]) == 0
    assert Settings.load(home).llm.model_path == str(app_layouts.paths["llama3.2:3b"])
    assert tree_state(app_layouts.home) == before  # used in place: no copy
    capsys.readouterr()

    assert main([*root, "models", "list", "--all"]) == 0
    out = capsys.readouterr().out
    assert "* llama3.2:3b" in out and "2.0 GB" in out and "UNREADABLE" in out
    assert f"ollama: {app_layouts.home / '.ollama/models'}" in out


def test_the_setting_takes_absolute_folders_only(home, capsys):
    root = ["--home", str(home.config_dir.parent)]
    assert main([*root, "config", "set", "llm.model_folders", "/srv/models"]) == 0
    assert Settings.load(home).llm.model_folders == ["/srv/models"]
    assert main([*root, "config", "set", "llm.model_folders", "models"]) == 1
    assert "absolute paths" in capsys.readouterr().err



def test_header_facts_are_remembered_across_runs_until_a_file_changes(tmp_path, monkeypatch):
    """A second listing (a later CLI run, the dialog opened again) reads no header of an unchanged
    file; a file that changed is read again."""
    from searchain.llm.fakes.testmodel import write_test_gguf
    from searchain.llm.models import discovery
    from searchain.llm.models.facts_cache import FactsCache

    folder = tmp_path / "models"
    folder.mkdir()
    first, second = write_test_gguf(folder / "a.gguf"), write_test_gguf(folder / "b.gguf")
    cache_file = tmp_path / "cache" / "gguf-facts.json"
    reads = []
    real = discovery.read_model_facts
    monkeypatch.setattr(discovery, "read_model_facts", lambda p: reads.append(p.name) or real(p))
    listed = discover_models(None, [str(folder)], other_apps=False, facts=FactsCache(cache_file))
    assert sorted(reads) == ["a.gguf", "b.gguf"] and cache_file.is_file()
    again = discover_models(None, [str(folder)], other_apps=False, facts=FactsCache(cache_file))
    assert sorted(reads) == ["a.gguf", "b.gguf"]  # nothing read the second time
    assert [m.facts for m in again] == [m.facts for m in listed]
    with open(second, "ab") as fh:  # the file changes: its facts are read afresh
        fh.write(b"\0" * 64)
    discover_models(None, [str(folder)], other_apps=False, facts=FactsCache(cache_file))
    assert sorted(reads) == ["a.gguf", "b.gguf", "b.gguf"]
    cache_file.write_text("{not json")  # a damaged cache is a cache miss, not an error
    assert len(discover_models(None, [str(folder)], other_apps=False, facts=FactsCache(cache_file))) == 2


def test_the_model_offered_in_place_of_the_starter(app_layouts, home, tmp_path):
    from searchain.llm.fakes.sparse_gguf import write_sparse_gguf
    from searchain.llm.models.discovery import best_found

    rows = _found(app_layouts, home, machine=LAPTOP)
    best = best_found(rows)
    # A chat model that fits, the most weights short of a slow one: the 8B, not Big (too big).
    assert best.name == "Meta-Llama-3-8B-Instruct.Q4_0" and best.fits == "cpu"
    assert best_found(rows, exclude=[best.path]).name == "mistral-7b.Q4_K_M"  # the starter: never
    rtx = recommend.MachineFacts(32 * GIB, 24 * GIB, "RTX 4070", 12 * GIB, True)
    # On the GPU now; Big fits it too, but its weights, counted over both parts, make it slow.
    assert best_found(_found(app_layouts, home, machine=rtx)).name == "Meta-Llama-3-8B-Instruct.Q4_0"
    base = write_sparse_gguf(tmp_path / "only" / "base.gguf", GB, chat_template=None)
    assert best_found(discover_models(None, [str(base.parent)], other_apps=False)) is None  # no template
    assert best_found([m for m in rows if m.fits == "" or not m.usable]) is None


def test_a_split_model_counts_every_parts_weights_and_says_which_part_is_missing(app_layouts, home, user_home):
    from searchain.llm.fakes.sparse_gguf import write_sparse_gguf
    from searchain.llm.models.gguf_info import read_model_facts

    big = app_layouts.paths["Big-Q4_K_M"]
    rows = {m.name: m for m in _found(app_layouts, home)}
    parts = [big, big.with_name("Big-Q4_K_M-00002-of-00002.gguf")]
    assert rows["Big-Q4_K_M"].facts.parameters == sum(read_model_facts(p).parameters for p in parts)
    folder = user_home / "unfinished"
    write_sparse_gguf(folder / "Half-Q4_K_M-00001-of-00003.gguf", 3 * GB)
    write_sparse_gguf(folder / "Half-Q4_K_M-00003-of-00003.gguf", 3 * GB)
    (half,) = discover_models(None, [str(folder)], other_apps=False)
    assert half.name == "Half-Q4_K_M" and half.size_bytes == 6 * GB and not half.usable
    assert half.error == "part 00002 of 00003 of this split model is missing from its folder"
