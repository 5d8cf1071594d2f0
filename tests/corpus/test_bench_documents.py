"""`searchain bench documents` measures what it says on the files it says (no timing asserted)."""

import json

from searchain.cli.main import main


def test_bench_documents_reports_both_sides_on_the_same_pages(home, capsys):
    assert main(["--home", str(home.config_dir.parent), "bench", "documents", "--files", "2",
                 "--pages", "3", "--repeats", "1", "--workers", "1,2"]) == 0
    figures = json.loads(capsys.readouterr().out)["pdf_ingest"]
    assert (figures["files"], figures["pages"]) == (2, 6) and figures["passages"] >= 6
    for side in ("bare_pypdfium2", "our_ingest", "our_ingest_one_thread"):
        assert figures[side]["seconds"] > 0 and figures[side]["pages_per_s"] > 0
    assert figures["ratio"] > 0 and figures["goal"] == ">= 0.9"
    # with 2 workers: ours in 2 processes against bare extraction in 2 processes, CPU of both
    [two] = figures["with_workers"]
    assert two["workers"] == 2 and two["ratio"] > 0
    for side in ("our_ingest", "bare_pypdfium2_processes"):  # the processes' CPU is counted
        assert two[side]["cpu_seconds"] > 0 and two[side]["pages_per_s"] > 0


def test_bench_documents_refuses_a_bad_worker_list(home, capsys):
    assert main(["--home", str(home.config_dir.parent), "bench", "documents", "--workers", "1,0"]) == 1
    assert "--workers takes worker counts from 1 to 256" in capsys.readouterr().err


def test_bench_documents_refuses_a_folder_that_is_not_only_pdfs(home, tmp_path, capsys):
    (tmp_path / "notes.md").write_text("# x\n\ny\n", encoding="utf-8")
    assert main(["--home", str(home.config_dir.parent), "bench", "documents", "--folder",
                 str(tmp_path)]) == 1
    assert "not a flat folder of PDFs only" in capsys.readouterr().err


def test_bench_documents_times_what_auto_picks_first_use_and_loaded(home, capsys, monkeypatch):
    from searchain.corpus import parallel

    args = ["--home", str(home.config_dir.parent), "bench", "documents", "--files", "3",
            "--pages", "2", "--repeats", "1"]
    assert main(args) == 0
    auto = json.loads(capsys.readouterr().out)["pdf_ingest"]["auto"]
    assert auto["workers"] == 1 and auto["in_process"] and auto["ratio"] > 0  # a tiny folder
    monkeypatch.setattr(parallel, "HEAD_START_MIN_BYTES", 1)
    monkeypatch.setattr(parallel, "auto_workers", lambda: 2)
    assert main(args) == 0
    auto = json.loads(capsys.readouterr().out)["pdf_ingest"]["auto"]
    assert (auto["workers"], auto["head_start"]) == (2, True)
    for side in ("first_use", "server_loaded"):  # the workers' CPU is counted
        assert auto[side]["seconds"] > 0 and auto[side]["cpu_seconds"] > 0 and auto[side]["ratio"] > 0
