"""The starter model answers when no model is chosen, and says it is a tiny starter; without it,
today's "No language model is configured" stands."""

import json

import pytest

from searchain.cli.main import main
from searchain.config import LLMSettings, Settings
from searchain.errors import ModelError
from searchain.llm.models import starter
from searchain.llm.models.starter import resolve_model, starter_model_path, starter_notice
from searchain.workspace import Workspace


def test_no_model_set_and_the_starter_installed_resolves_to_the_starter(fake_starter, home):
    resolved = resolve_model(LLMSettings(), home.models_dir)
    assert resolved.starter and resolved.path == str(fake_starter)
    chosen = resolve_model(LLMSettings(model_path="/models/mine.gguf"), home.models_dir)
    assert chosen.path == "/models/mine.gguf" and not chosen.starter
    server = resolve_model(LLMSettings(backend="openai", server_url="http://x"), home.models_dir)
    assert server.path == "" and not server.starter


def test_the_switch_and_a_damaged_starter_turn_it_off(fake_starter, home, monkeypatch):
    monkeypatch.setenv(starter.STARTER_ENV, "off")
    assert starter_model_path(home.models_dir) is None
    monkeypatch.delenv(starter.STARTER_ENV)
    with fake_starter.open("ab") as fh:  # a truncated/grown file is not offered
        fh.write(b"x")
    assert starter_model_path(home.models_dir) is None


def test_a_pulled_starter_in_the_models_folder_counts(no_starter, home, tiny_gguf, monkeypatch):
    from dataclasses import replace

    from searchain.llm.models import pypi as pypi_models

    entry = pypi_models.pypi_entry(starter.STARTER_NAME)
    assert starter_model_path(home.models_dir) is None
    target = home.models_dir / entry.filename
    target.write_bytes(tiny_gguf.read_bytes())
    monkeypatch.setattr(pypi_models, "PYPI_MODELS", (replace(entry, size_bytes=target.stat().st_size),))
    assert starter_model_path(home.models_dir) == target


def test_without_a_starter_the_no_model_error_stands(no_starter, home):
    assert resolve_model(LLMSettings(), home.models_dir).path == ""
    workspace = Workspace(home, Settings())
    with pytest.raises(ModelError, match="No language model is configured"):
        workspace.llm()


def test_the_workspace_loads_the_starter_and_leaves_settings_unset(fake_starter, home, tiny_llm_settings):
    from dataclasses import replace

    settings = Settings()
    settings.llm = replace(tiny_llm_settings, model_path="")
    workspace = Workspace(home, settings)
    try:
        llm = workspace.llm()
        assert llm.path == fake_starter and workspace.resolved_model().starter
        assert settings.llm.model_path == ""  # the user's choice stays "none"
    finally:
        workspace.close()


def test_ask_says_once_on_stderr_that_the_starter_answers(fake_starter, home, capsys):
    settings = Settings()
    settings.llm.n_ctx, settings.llm.max_tokens, settings.llm.n_gpu_layers = 1024, 16, 0
    settings.llm.use_grammar = False
    settings.save(home)
    code = main(["--home", str(home.config_dir.parent), "ask", "Who composed The Lantern Suite?",
                 "--mode", "direct", "--json", "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err.count("tiny starter model") == 1 and starter.UPGRADE_NAME in captured.err
    assert "final_content" in json.loads(captured.out)  # stdout is the answer only


def test_the_notice_names_the_upgrade_plainly():
    message, hint = starter_notice()
    assert "tiny starter model" in message and starter.STARTER_LABEL in message
    assert f"searchain models pull {starter.UPGRADE_NAME}" in hint and "<" not in message + hint
    assert "--mode rag" in hint  # measured: the tiny model answers more often without the chain
    assert "models list --all" in hint and "--server URL" in hint and "BENCHMARKS" not in hint


def test_the_app_notice_has_no_commands_or_developer_files():
    for mode in ("searchain", starter.STARTER_BEST_MODE):
        message, hint = starter.starter_app_notice(mode)
        assert starter.STARTER_LABEL in message
        assert "`" not in hint and "searchain " not in hint and ".md" not in hint
        assert "1.1 GB" in hint and "Retrieve then read" in hint
    assert "answers use Retrieve then read" in starter.starter_app_notice("rag")[1]


def test_doctor_says_the_starter_answers(fake_starter, home):
    from searchain.doctor.installation import run_checks

    [model] = [c for c in run_checks(home, Settings()) if c.area == "model"]
    assert model.status == "warn" and "tiny starter model" in model.summary
    assert f"pull {starter.UPGRADE_NAME}" in model.fix
