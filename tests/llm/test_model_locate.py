"""A model's name means one file wherever a model is asked for (``llm.models.locate``): a path, a
file in the models folder as ``models list`` prints it, an installed catalogue or PyPI name, or
another app's model from ``models list --all``; ``models use`` and ``ask --model`` agree."""

import json
import shutil
from pathlib import Path

import pytest

from searchain.cli.main import main
from searchain.errors import ModelError
from searchain.llm.models.catalogue import CATALOGUE
from searchain.llm.models.discovery import discover_models
from searchain.llm.models.locate import locate_model
from searchain.llm.models.pypi import PYPI_MODELS


def test_a_path_and_a_file_name_in_the_models_folder(home, tmp_path):
    elsewhere = tmp_path / "mine.gguf"
    elsewhere.write_bytes(b"GGUF")
    assert locate_model(str(elsewhere), home.models_dir) == elsewhere.resolve()
    installed = home.models_dir / "qwen.gguf"
    installed.parent.mkdir(parents=True, exist_ok=True)
    installed.write_bytes(b"GGUF")
    assert locate_model("qwen.gguf", home.models_dir) == installed.resolve()
    assert locate_model("  qwen.gguf ", home.models_dir) == installed.resolve()


def test_catalogue_and_pypi_names_find_their_installed_files_or_say_how_to_get_them(home):
    entry, pypi = CATALOGUE[0], PYPI_MODELS[0]
    with pytest.raises(ModelError, match="is not installed") as caught:
        locate_model(entry.name, home.models_dir)
    assert f"models pull {entry.name}" in caught.value.hint
    home.models_dir.mkdir(parents=True, exist_ok=True)
    for e in (entry, pypi):
        (home.models_dir / e.filename).write_bytes(b"GGUF")
        assert locate_model(e.name.upper(), home.models_dir) == (home.models_dir / e.filename).resolve()


def test_another_apps_model_by_its_listed_name_is_used_where_it_lies(app_layouts, home):
    found = lambda: discover_models(home.models_dir)  # noqa: E731
    assert locate_model("llama3.2:latest", home.models_dir, discover=found) == app_layouts.paths["llama3.2:3b"]


def test_discovery_runs_only_when_nothing_nearer_matches(home):
    (home.models_dir).mkdir(parents=True, exist_ok=True)
    (home.models_dir / "a.gguf").write_bytes(b"GGUF")

    def refuse():
        raise AssertionError("other apps' folders walked for a name found in the models folder")
    assert locate_model("a.gguf", home.models_dir, discover=refuse).name == "a.gguf"


def test_unknown_names_and_missing_paths_are_clear_errors(home, tmp_path):
    with pytest.raises(ModelError, match="No model named 'nosuch'") as caught:
        locate_model("nosuch", home.models_dir, discover=lambda: [])
    assert "models list --all" in caught.value.hint
    with pytest.raises(ModelError, match="does not exist"):
        locate_model(str(tmp_path / "gone.gguf"), home.models_dir, discover=lambda: [])
    with pytest.raises(ModelError, match="No model named"):
        locate_model("", home.models_dir)


def test_ask_takes_the_name_models_list_prints(home, tiny_gguf, capsys):
    root = ["--home", str(home.config_dir.parent)]
    home.models_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(tiny_gguf, home.models_dir / "tiny.gguf")
    assert main([*root, "models", "list", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    for name in (Path(row["path"]).name, "tiny"):  # the file, as `list` prints it; `list --all`'s name
        assert main([*root, "ask", "--model", name, "--mode", "direct", "--json", "--quiet",
                     "What is two and two?"]) == 0
        answer = json.loads(capsys.readouterr().out)
        assert answer["mode"] == "direct" and "final_content" in answer
    assert main([*root, "ask", "--model", "nosuch.gguf", "--mode", "direct", "--quiet", "x"]) == 1
    assert "No model named 'nosuch.gguf'" in capsys.readouterr().err
