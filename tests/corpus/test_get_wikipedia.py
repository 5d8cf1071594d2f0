"""`searchain corpus get wikipedia` against a loopback Hub and dumps server (tests/fixtures/
wiki_stub.py): the plan, pinned and resumable downloads, published checksums, a snapshot that does
not exist, disk space, and a fresh home answering `search` with cited passages after one command."""

import json

import pytest

pytest.importorskip("pyarrow")

from searchain.cli.main import main  # noqa: E402
from searchain.config import Settings  # noqa: E402
from searchain.corpus.manager import CorpusManager  # noqa: E402
from searchain.errors import Cancelled, CorpusError  # noqa: E402
from searchain.events import CancelToken, Progress  # noqa: E402
from searchain.library import WikipediaChoice, get_wikipedia, plan_wikipedia  # noqa: E402
from searchain.library.wikipedia import estimate  # noqa: E402
from searchain.library.wikipedia.job import job_dir  # noqa: E402
from tests.fixtures.wiki_stub import COMMIT, SNAPSHOT, simple_wiki  # noqa: E402

SHARD = f"{SNAPSHOT}.simple/train-00000-of-00001.parquet"
DUMP = f"simplewiki/{SNAPSHOT}/simplewiki-{SNAPSHOT}-pages-articles-multistream.xml.bz2"
INDEX = f"simplewiki/{SNAPSHOT}/simplewiki-{SNAPSHOT}-pages-articles-multistream-index.txt.bz2"


@pytest.fixture
def wiki(tmp_path, online, monkeypatch):
    """The stub serving simple Wikipedia, with the endpoints pointed at it."""
    with simple_wiki(tmp_path) as stub:
        monkeypatch.setenv("HF_ENDPOINT", stub.url)
        monkeypatch.setenv("SEARCHAIN_WIKIPEDIA_DUMPS", stub.url)
        yield stub


@pytest.fixture
def settings(home, tiny_embedder_dir):
    """The tiny 32-d embedder as the index's model: a real build, in a second."""
    s = Settings.load(home)
    s.retrieval.embedder = str(tiny_embedder_dir)
    s.retrieval.second_embedder = ""
    s.save(home)
    return s


def cli(home, capsys, *args):
    code = main(["--home", str(home.config_dir.parent), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def downloads(stub):
    return [r for r in stub.requests if r[0] == "GET" and "/resolve/" in r[1] or
            r[0] == "GET" and r[1].endswith(".bz2")]


def test_plan_json_states_every_stage_and_downloads_only_the_file_list(home, wiki, settings, capsys):
    code, out, _ = cli(home, capsys, "corpus", "get", "wikipedia", "--lang", "simple", "--plan", "--json")
    assert code == 0
    plan = json.loads(out)
    assert [s["name"] for s in plan["stages"]] == ["download", "ingest", "embed", "index"]
    assert plan["download_bytes"] == len(wiki.hub[SHARD]) and plan["files"] == 1
    assert plan["revision"] == COMMIT and plan["snapshot"] == SNAPSHOT
    assert plan["passages"] > 0 and plan["est_seconds"] > 0 and plan["needs_confirmation"] is False
    for stage in plan["stages"]:
        assert {"seconds", "disk_bytes", "ram_bytes"} <= set(stage)
    assert plan["stages"][2]["device"] in ("cpu", "cuda")  # the embed stage says where it runs
    assert plan["enough_disk"] is True
    assert downloads(wiki) == [] and not job_dir(home, WikipediaChoice()).exists()


def test_one_command_in_a_fresh_home_answers_search_with_cited_passages(home, wiki, settings, capsys):
    code, out, err = cli(home, capsys, "corpus", "get", "wikipedia", "--lang", "simple", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["corpus"] == "wikipedia-simple" and report["passages"] >= 5
    assert report["indexed"] == report["passages"]
    assert report["stages_run"] == ["download", "ingest", "index"]
    assert "can be asked already: by keywords" in err  # the index stage's line (KeywordOnly)
    job = json.loads((job_dir(home, WikipediaChoice()) / "job.json").read_text())
    assert job["release"]["revision"] == COMMIT and job["release"]["snapshot"] == SNAPSHOT
    with CorpusManager(home, settings).open_store("wikipedia-simple") as store:
        origin = store.meta_get("wikipedia_origin")
    assert (origin["revision"], origin["snapshot"], origin["source"]) == (COMMIT, SNAPSHOT, "hub")
    # the pinned commit is what was fetched, never "main"
    assert all(f"/resolve/{COMMIT}/" in r[1] for r in downloads(wiki))
    code, out, _ = cli(home, capsys, "corpus", "list", "--json")
    assert [c["name"] for c in json.loads(out) if c["active"]] == ["wikipedia-simple"]
    code, out, err = cli(home, capsys, "search", "wikipedia-simple", "first bridge monks", "--json")
    assert code == 0, err
    top = json.loads(out)["hits"][0]
    assert top["title"] == "River Ellin" and "monks of Sume" in top["text"]
    assert top["url"] == "https://simple.wikipedia.org/wiki/River%20Ellin" and top["section"] == "History"
    # run again: everything is done, nothing is fetched again
    before = len(downloads(wiki))
    code, out, _ = cli(home, capsys, "corpus", "get", "wikipedia", "--json")
    assert code == 0 and json.loads(out)["stages_run"] == [] and len(downloads(wiki)) == before


def test_a_killed_download_resumes_with_a_range_request(home, wiki, settings):
    cancel = CancelToken()

    def on_event(event):
        if isinstance(event, Progress) and event.stage == "download" and event.done >= 128 * 1024:
            cancel.cancel()

    with pytest.raises(Cancelled):
        get_wikipedia(home, settings, WikipediaChoice(), on_event=on_event, cancel=cancel)
    part = job_dir(home, WikipediaChoice()) / "files" / (SHARD + ".part")
    kept = part.stat().st_size
    assert 0 < kept < len(wiki.hub[SHARD])  # what a kill mid-download leaves
    assert not CorpusManager(home, settings).exists("wikipedia-simple")
    report = get_wikipedia(home, settings, WikipediaChoice())
    assert ("GET", f"/datasets/wikimedia/wikipedia/resolve/{COMMIT}/{SHARD}", f"bytes={kept}-") \
        in wiki.requests
    assert ("GET", f"/cdn/{SHARD}", f"bytes={kept}-") in wiki.requests  # kept across the redirect
    assert report.passages >= 5 and report.indexed == report.passages
    assert (job_dir(home, WikipediaChoice()) / "files" / SHARD).read_bytes() == wiki.hub[SHARD]


@pytest.mark.parametrize("source", ["hub", "dump"])
def test_a_checksum_mismatch_keeps_the_file_aside_and_ingests_nothing(home, tmp_path, online,
                                                                      monkeypatch, settings, source):
    with simple_wiki(tmp_path, lfs_sha256={SHARD: "ab" * 32}, sha1={DUMP: "cd" * 20}) as stub:
        monkeypatch.setenv("HF_ENDPOINT", stub.url)
        monkeypatch.setenv("SEARCHAIN_WIKIPEDIA_DUMPS", stub.url)
        choice = WikipediaChoice(source=source)
        with pytest.raises(CorpusError) as caught:
            get_wikipedia(home, settings, choice)
    message = caught.value.message
    assert "failed its published checksum" in message and "nothing was ingested" in message
    assert ("SHA256 " + "ab" * 32 if source == "hub" else "SHA1 " + "cd" * 20) in message
    job = job_dir(home, choice)
    rejected = list((job / "rejected").iterdir())
    assert len(rejected) == 1 and str(rejected[0]) in message
    assert not any(p.is_file() for p in (job / "files").rglob("*"))
    assert not CorpusManager(home, settings).exists("wikipedia-simple")


def test_a_snapshot_that_does_not_exist_names_those_that_do(home, wiki, settings, capsys):
    code, _, err = cli(home, capsys, "corpus", "get", "wikipedia", "--snapshot", "20990101")
    assert code == 1
    assert "no Wikipedia snapshot 20990101" in err and SNAPSHOT in err
    code, _, err = cli(home, capsys, "corpus", "get", "wikipedia", "--source", "dump",
                       "--snapshot", "20990101", "--plan")
    assert code == 1 and "no 20990101 dump of simplewiki" in err and SNAPSHOT in err
    code, _, err = cli(home, capsys, "corpus", "get", "wikipedia", "--lang", "xx")
    assert code == 1 and "no 'xx' Wikipedia" in err
    code, _, err = cli(home, capsys, "corpus", "get", "wikipedia", "--snapshot", "latest")
    assert code == 1 and "is not a snapshot date" in err
    assert downloads(wiki) == []


def test_no_disk_space_is_found_before_the_download(home, wiki, settings, monkeypatch):
    monkeypatch.setattr(estimate, "free_bytes", lambda folder: 1000)
    plan, _ = plan_wikipedia(home, settings, WikipediaChoice())
    assert not plan.enough_disk and "free some space first" in plan.summary()
    with pytest.raises(CorpusError, match="Not enough disk space for the download and what follows"):
        get_wikipedia(home, settings, WikipediaChoice())
    assert downloads(wiki) == []


def test_no_disk_space_for_a_later_stage_keeps_the_download(home, wiki, settings, monkeypatch):
    real = estimate.free_bytes
    monkeypatch.setattr(estimate, "free_bytes",
                        lambda folder: 1000 if "corpora" in str(folder) else real(folder))
    with pytest.raises(CorpusError, match="Not enough disk space for the ingest and the index"):
        get_wikipedia(home, settings, WikipediaChoice())
    monkeypatch.setattr(estimate, "free_bytes", real)
    fetched = len(downloads(wiki))
    report = get_wikipedia(home, settings, WikipediaChoice())
    assert report.stages_run == ["ingest", "index"] and len(downloads(wiki)) == fetched


def test_the_xml_dump_source_gets_the_same_articles(home, wiki, settings):
    """The multistream dump and its index, both checked against the published list, then read
    by worker processes stream by stream."""
    settings.corpus.ingest_workers = 2
    messages = []
    report = get_wikipedia(home, settings, WikipediaChoice(source="dump", name="simple-dump"),
                           on_event=lambda e: isinstance(e, Progress) and messages.append(e.message))
    assert report.passages >= 5 and report.indexed == report.passages
    assert any("with 2 worker processes" in m for m in messages)
    with CorpusManager(home, settings).open_store("simple-dump") as store:
        assert store.get("12#0").title == "River Ellin"
    job = job_dir(home, WikipediaChoice(source="dump"))
    verified = json.loads((job / "verified.json").read_text())
    assert sorted(verified) == sorted(name.rsplit("/", 1)[1] for name in (DUMP, INDEX))
    for name in (DUMP, INDEX):
        assert (job / "files" / name.rsplit("/", 1)[1]).read_bytes() == wiki.dumps[name]
    assert not any(r[1].endswith("-pages-articles.xml.bz2") for r in wiki.requests)
    from searchain.corpus.problems import ProblemLog
    from searchain.corpus.sources.mediawiki import MediaWikiSource

    source = MediaWikiSource(job / "files" / DUMP.rsplit("/", 1)[1], "c", ProblemLog())
    assert {kind for (kind, _), _ in source.work_items()} == {"stream"}  # split by its index
    # Wikimedia's User-Agent policy: every request names the app
    dump_paths = [path for path in wiki.agents if path.startswith("/simplewiki/")]
    assert dump_paths and all(wiki.agents[p].startswith("SearChain-Desktop/") for p in dump_paths)


def test_a_dump_without_a_multistream_pair_gets_the_single_stream_file(home, tmp_path, online,
                                                                       monkeypatch, settings):
    with simple_wiki(tmp_path, multistream=False) as stub:
        monkeypatch.setenv("SEARCHAIN_WIKIPEDIA_DUMPS", stub.url)
        report = get_wikipedia(home, settings, WikipediaChoice(source="dump"))
    assert report.passages >= 5
    files = [p.name for p in (job_dir(home, WikipediaChoice(source="dump")) / "files").iterdir()]
    assert files == [f"simplewiki-{SNAPSHOT}-pages-articles.xml.bz2"]


def test_a_corpus_of_that_name_is_not_overwritten(home, wiki, settings, tmp_path):
    (tmp_path / "mine.jsonl").write_text('{"id": "1", "title": "Mine", "text": "my own text"}\n')
    CorpusManager(home, settings).add("wikipedia-simple", tmp_path / "mine.jsonl")
    with pytest.raises(CorpusError, match="exists already"):
        get_wikipedia(home, settings, WikipediaChoice())
    assert downloads(wiki) == []


def test_plan_of_a_started_job_uses_its_pins_and_counts_what_is_left(home, wiki, settings):
    get_wikipedia(home, settings, WikipediaChoice())
    plan, release = plan_wikipedia(home, settings, WikipediaChoice())
    assert release.revision == COMMIT
    assert all(s.seconds == 0 and s.note == "done" for s in plan.stages)


ASK_GRAMMAR = r"""
root ::= node1 final
node1 ::= "[Query 1]: " query "\n" "[Unsolved Query]: " query "\n"
query ::= ("Who built the first bridge over the River Ellin?" | "How long is the River Ellin?")
final ::= "[Final Content]: " [a-zA-Z] ([a-zA-Z .] | "[1]"){0,40} "\n"?
"""


@pytest.mark.slow
def test_ask_answers_over_the_wikipedia_it_got_with_cited_passages(home, wiki, settings, tiny_gguf,
                                                                   capsys, tmp_path):
    """After the one command, `searchain ask` (the tiny random GGUF, its queries held to the
    articles by a grammar that leaves them unsolved for retrieval to complete, and the tiny DPR
    reader, as tests/reasoning/test_ask_e2e.py does for the demo) cites the new corpus."""
    from searchain.reader.dpr import DEFAULT_DPR_READER, reader_dir
    from searchain.reader.fakes import write_tiny_dpr_reader

    settings.retrieval.retriever = "bm25"
    settings.reasoning.reader = "dpr"
    settings.reasoning.theta = -1e9  # the random reader is always "confident": it corrects
    settings.reasoning.r_max = 2
    settings.llm.n_ctx, settings.llm.n_gpu_layers, settings.llm.max_tokens = 4096, 0, 600
    settings.save(home)
    write_tiny_dpr_reader(reader_dir(home, DEFAULT_DPR_READER))
    code, _, err = cli(home, capsys, "corpus", "get", "wikipedia", "--lang", "simple")
    assert code == 0, err
    grammar = tmp_path / "wiki.gbnf"
    grammar.write_text(ASK_GRAMMAR, encoding="utf-8")
    code, out, err = cli(home, capsys, "ask", "Who built the first bridge over the River Ellin?",
                         "--model", str(tiny_gguf), "--json", "--grammar", str(grammar))
    assert code == 0, err
    result = json.loads(out)
    assert result["references"], result["nodes"]
    assert all(r["corpus"] == "wikipedia-simple" for r in result["references"])
    assert any(r["title"] == "River Ellin" for r in result["references"])


def test_work_over_an_hour_asks_first_and_a_script_must_say_yes(home, wiki, settings, capsys,
                                                                 monkeypatch):
    monkeypatch.setattr(estimate, "DOWNLOAD_BYTES_PER_S", 10.0)  # a 300 kB download: ~8 h
    code, _, err = cli(home, capsys, "corpus", "get", "wikipedia")
    assert code == 1 and "Refusing without confirmation" in err and "--yes" in err
    assert "download" in err and downloads(wiki) == []  # the plan was shown, nothing fetched
    code, _, err = cli(home, capsys, "corpus", "get", "wikipedia", "--yes")
    assert code == 0, err


@pytest.mark.parametrize("source", ["hub", "dump"])
def test_offline_is_a_clear_error(home, settings, capsys, source):
    """The suite runs with HF_HUB_OFFLINE=1 (no `online` fixture here): nothing is reached."""
    code, _, err = cli(home, capsys, "corpus", "get", "wikipedia", "--source", source, "--plan")
    assert code == 1 and "Cannot reach" in err and "HF_HUB_OFFLINE=1" in err


def test_a_corpus_removed_after_the_job_is_made_again_from_the_kept_download(home, wiki, settings):
    get_wikipedia(home, settings, WikipediaChoice())
    fetched = len(downloads(wiki))
    CorpusManager(home, settings).remove("wikipedia-simple")
    report = get_wikipedia(home, settings, WikipediaChoice())
    assert report.stages_run == ["ingest", "index"] and report.indexed == report.passages >= 5
    assert len(downloads(wiki)) == fetched


def test_the_plan_for_english_is_long_asks_and_says_what_would_help(home, settings, tmp_path):
    """A release shaped like English on the Hub (41 shards, 11.6 GB), planned on this CPU-only
    machine: ~30M passages, days of CPU embedding, a GPU named as the way out."""
    from searchain.library.wikipedia.remote import Release, RemoteFile

    settings.retrieval.embedder = "sentence-transformers/all-MiniLM-L6-v2"
    settings.retrieval.embed_device = "cpu"
    files = tuple(RemoteFile(f"20231101.en/train-{k:05d}-of-00041.parquet", "u", int(11.6e9 / 41),
                             "sha256", "0" * 64) for k in range(41))
    release = Release("en", "hub", "20231101", COMMIT, "wikimedia/wikipedia", files)
    plan = estimate.make_plan(settings, home.models_dir, "wikipedia-en", release, tmp_path,
                              left_to_download=release.size)
    assert 20e6 < plan.passages < 40e6 and plan.needs_confirmation
    embed = plan.stages[2]
    assert embed.device == "cpu" and embed.seconds > 86400
    assert plan.advice and "GPU" in plan.advice[0]
    assert plan.stages[0].download_bytes == release.size
    # the index stage holds the tantivy keyword index a corpus this large gets (time and disk)
    from searchain.index.bm25.tantivy_schema import DISK_BYTES_PER_PASSAGE, build_seconds

    index = plan.stages[-1]
    assert index.name == "index" and "keyword index" in index.note
    assert index.seconds > build_seconds(plan.passages) > 0
    assert index.disk_bytes > DISK_BYTES_PER_PASSAGE * plan.passages


def test_a_kill_between_the_rename_and_the_record_is_not_fetched_again(home, wiki, settings):
    from searchain.library.wikipedia.download import fetch_release

    _, release = plan_wikipedia(home, settings, WikipediaChoice())
    job = job_dir(home, WikipediaChoice())
    fetch_release(job, release)
    (job / "verified.json").unlink()  # as if killed right after the rename
    fetched = len(downloads(wiki))
    assert fetch_release(job, release) == [job / "files" / SHARD]
    assert len(downloads(wiki)) == fetched and (job / "verified.json").is_file()


def test_a_kill_9_mid_download_then_the_same_command_equals_an_uninterrupted_run(
        home, wiki, settings, tmp_path):
    """The job SIGKILLs itself mid-download (no finally, no atexit); run again, it fetches the
    rest by Range and ends with the corpus an uninterrupted run makes."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    from tests.corpus.test_manager import REPO

    code = textwrap.dedent("""
        import os, signal, sys
        import huggingface_hub.constants as hf
        hf.HF_HUB_OFFLINE, hf.DOWNLOAD_CHUNK_SIZE = False, 64 * 1024
        from searchain.config import AppPaths, Settings
        from searchain.library import WikipediaChoice, get_wikipedia

        def on_event(event):
            if getattr(event, "stage", "") == "download" and event.done >= 128 * 1024:
                os.kill(os.getpid(), signal.SIGKILL)

        paths = AppPaths.resolve(sys.argv[1])
        get_wikipedia(paths, Settings.load(paths), WikipediaChoice(), on_event=on_event)
    """)
    env = {**os.environ, "HF_HUB_OFFLINE": "0",
           "PYTHONPATH": os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code, str(home.config_dir.parent)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    part = job_dir(home, WikipediaChoice()) / "files" / (SHARD + ".part")
    kept = part.stat().st_size
    assert 0 < kept < len(wiki.hub[SHARD])
    report = get_wikipedia(home, settings, WikipediaChoice())
    assert ("GET", f"/cdn/{SHARD}", f"bytes={kept}-") in wiki.requests
    with CorpusManager(home, settings).open_store("wikipedia-simple") as store:
        resumed = store.conn.execute("SELECT id, pid FROM passages ORDER BY id").fetchall()
    clean = get_wikipedia(home, settings, WikipediaChoice(name="clean"))
    with CorpusManager(home, settings).open_store("clean") as store:
        assert store.conn.execute("SELECT id, pid FROM passages ORDER BY id").fetchall() == resumed
    assert report.indexed == clean.indexed == len(resumed)


def test_a_second_embedding_model_is_its_own_stage_in_the_plan(home, settings, tiny_embedder_dir,
                                                               tmp_path):
    from searchain.library.wikipedia.remote import Release, RemoteFile

    release = Release("simple", "hub", SNAPSHOT, COMMIT, "stub",
                      (RemoteFile("a.parquet", "u", 10**8, "sha256", "0" * 64),))
    without = estimate.make_plan(settings, home.models_dir, "w", release, tmp_path,
                                 left_to_download=0)
    settings.retrieval.second_embedder = str(tiny_embedder_dir)
    plan = estimate.make_plan(settings, home.models_dir, "w", release, tmp_path, left_to_download=0)
    assert [s.name for s in plan.stages] == ["download", "ingest", "embed", "embed-second", "index"]
    assert plan.est_seconds > without.est_seconds and "leaves it out" in plan.summary()


def test_the_ingest_estimate_uses_the_measured_rates_and_the_cores(monkeypatch):
    from searchain.library.wikipedia.remote import Release, RemoteFile

    def release(source, *names):
        return Release("en", source, SNAPSHOT, SNAPSHOT, "here",
                       tuple(RemoteFile(n, "", 1, "sha1", "0") for n in names))

    hub = release("hub", "train-00000.parquet")
    multistream = release("dump", "x-multistream.xml.bz2", "x-multistream-index.txt.bz2")
    single = release("dump", "x.xml.bz2")
    assert estimate.ingest_rate(hub, 1, passages=80_000)[0] == pytest.approx(
        estimate.SERIAL_PASSAGES_PER_S["hub"])  # as measured, at the size measured
    assert estimate.ingest_rate(hub, 1, passages=21_000_000)[0] < estimate.writer_rate(21_000_000)
    small = 150_000  # below fts_build.TANTIVY_SERVES_FROM: FTS5 is built after the parallel phase
    fts = estimate.fts_build_rate(small)

    def then_fts(rate):
        return pytest.approx(1 / (1 / rate + 1 / fts))
    rate, how = estimate.ingest_rate(hub, 16, passages=small)  # 15 parsing cores outrun the writer
    assert rate == then_fts(estimate.store_rate(small)) and "bound by the writer" in how
    assert "then the keyword index" in how
    dump_cores = estimate.PARSE_PASSAGES_PER_CORE_S["dump"]
    rate, how = estimate.ingest_rate(multistream, 16, passages=small)  # 15 cores parse slower than it stores
    assert rate == then_fts(15 * dump_cores) and "bound by 15 parsing core(s)" in how
    # from 200,000 passages FTS5 is left unbuilt (tantivy's index, in the index stage, serves)
    rate, how = estimate.ingest_rate(hub, 16)
    assert rate == pytest.approx(estimate.store_rate(400_000)) and "tantivy" in how
    assert estimate.ingest_rate(multistream, 16)[0] == pytest.approx(15 * dump_cores)
    assert estimate.fts5_left(hub, 400_000, 16) and not estimate.fts5_left(hub, small, 16)
    assert not estimate.fts5_left(multistream, 400_000, 2)  # 2 workers: FTS5 batch by batch
    assert estimate.ingest_rate(hub, 16, passages=21_000_000)[0] < 0.9 * estimate.ingest_rate(hub, 16)[0]
    # parsing slower than a per-batch writer: it indexes as it stores, as before
    assert estimate.ingest_rate(multistream, 2)[0] == estimate.PARSE_PASSAGES_PER_CORE_S["dump"]
    assert estimate.ingest_rate(single, 16)[0] == estimate.PARSE_PASSAGES_PER_CORE_S["dump"]
    assert estimate.ingest_rate(multistream, 16, workers_setting=1, passages=38_700)[0] == \
        pytest.approx(estimate.SERIAL_PASSAGES_PER_S["dump"])  # corpus.ingest_workers = 1
    # full English Wikipedia (~21 M passages) from the Hub on 16 cores: within the 30 min goal
    assert 21e6 / estimate.ingest_rate(hub, 16, passages=21_000_000)[0] < 30 * 60
    # 16 hardware threads on 8 cores parse as ~9 cores (the lent 16-vCPU machine's core check):
    # the dump's estimate then follows the rate measured there (21,020 passages/s at 232k), at
    # the parse rate of the code that ran there (3,380 a core, before the stripper's guards)
    from searchain.corpus import fts_build

    monkeypatch.setattr(fts_build, "TANTIVY_SERVES_FROM", 10**9)  # that run built FTS5 at its end
    rate, how = estimate.ingest_rate(multistream, 16, passages=232_032, capacity=8 + 8 * 0.15)
    assert rate == pytest.approx(1 / (1 / (8.2 * dump_cores) + 1 / estimate.fts_build_rate(232_032)))
    assert "cores' worth of parsing" in how
    monkeypatch.setitem(estimate.PARSE_PASSAGES_PER_CORE_S, "dump", 3_380)
    assert 0.9 < estimate.ingest_rate(multistream, 16, passages=232_032, capacity=9.2)[0] / 21_020 < 1.1
    assert estimate.ingest_rate(multistream, 16, capacity=16)[0] == estimate.ingest_rate(multistream, 16)[0]
