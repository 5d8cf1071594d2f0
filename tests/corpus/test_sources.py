"""Line-based sources (TSV, JSONL, multi-hop JSONL), folders, and format detection."""

import json

import pytest

from searchain.corpus.ids import passage_pid
from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources import open_source
from searchain.corpus.sources.detect import detect_format
from searchain.errors import CorpusError


def read(path, fmt):
    log = ProblemLog()
    source = open_source(path, fmt, "c", log)
    return list(source.passages()), log, source


# -- TSV ------------------------------------------------------------------------------------

def test_tsv_dpr_layout_with_header_and_quotes(tmp_path):
    f = tmp_path / "psgs.tsv"
    f.write_text('id\ttext\ttitle\n1\t"He said ""hi"" twice"\tAaron\n2\tplain text\t"Quoted Title"\n',
                 encoding="utf-8")
    passages, log, _ = read(f, "tsv")
    assert [(p.pid, p.title, p.text) for p in passages] == [
        ("1", "Aaron", 'He said "hi" twice'), ("2", "Quoted Title", "plain text")]
    assert log.skipped == 0
    assert passages[0].source.endswith("psgs.tsv:2")


def test_tsv_header_in_another_order_is_honoured(tmp_path):
    f = tmp_path / "p.tsv"
    f.write_text("title\tid\ttext\nT\t7\tthe text\n", encoding="utf-8")
    passages, _, _ = read(f, "tsv")
    assert (passages[0].pid, passages[0].title, passages[0].text) == ("7", "T", "the text")


def test_tsv_malformed_lines_are_counted_with_line_numbers(tmp_path):
    f = tmp_path / "p.tsv"
    f.write_bytes(b"1\tgood one\tT\nonly\ttwo\n\t\tno id\n3\t\tempty text\n4\tbad \xff byte\tT\n5\tgood two\tT\n")
    passages, log, _ = read(f, "tsv")
    assert [p.pid for p in passages] == ["1", "5"]
    assert log.skipped == 4
    assert [(p.line, p.reason.split(" ")[0]) for p in log.problems] == [
        (2, "expected"), (3, "empty"), (4, "empty"), (5, "not")]
    assert all(p.file == str(f) for p in log.problems)


def test_long_tsv_record_is_chunked_with_offsets(tmp_path):
    text = " ".join(f"w{i}" for i in range(450))
    f = tmp_path / "p.tsv"
    f.write_text(f"9\t{text}\tLong\n", encoding="utf-8")
    passages, _, _ = read(f, "tsv")
    assert len(passages) > 1 and all(p.doc_id == "9" for p in passages)
    assert [p.pid for p in passages] == [f"9#{k}" for k in range(len(passages))]
    assert all(text[p.start:p.end] == p.text for p in passages)


# -- JSONL ----------------------------------------------------------------------------------

def test_jsonl_records_and_problems(tmp_path):
    f = tmp_path / "p.jsonl"
    lines = [json.dumps({"id": 1, "title": "A", "text": "alpha"}),
             "{not json",
             json.dumps(["a", "list"]),
             json.dumps({"id": "x", "title": "B"}),
             json.dumps({"_id": "b2", "title": "B", "contents": "beta"}),
             "",
             json.dumps({"title": "C", "text": "gamma"})]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    passages, log, _ = read(f, "jsonl")
    assert [(p.pid, p.text) for p in passages] == [("1", "alpha"), ("b2", "beta"),
                                                   (passage_pid("C", "gamma"), "gamma")]
    assert [p.line for p in log.problems] == [2, 3, 4]
    assert "invalid JSON" in log.problems[0].reason


# -- multi-hop sets -------------------------------------------------------------------------

def test_passage_pid_is_stable_and_content_based():
    assert passage_pid("T", "x") == passage_pid("T", "x")
    assert passage_pid("T", "x") != passage_pid("T", "x ") != passage_pid("U", "x")
    assert passage_pid("Shirley Temple", "abc").startswith("p") and len(passage_pid("a", "b")) == 17


def test_musique_pool_matches_the_readme_and_finds_gold_paragraphs(shared_eval, home):
    from searchain.config import Settings
    from searchain.corpus.manager import CorpusManager

    path = shared_eval / "musique" / "dev_200.jsonl"
    manager = CorpusManager(home, Settings())
    report = manager.add("mus", path)  # format detected
    assert 3100 <= report.added <= 3180 and report.skipped == 0
    assert report.added + report.duplicates == 200 * 20
    with manager.open_store("mus") as store:
        record = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        for step in record["question_decomposition"]:
            para = record["paragraphs"][step["paragraph_support_idx"]]
            got = store.get(passage_pid(para["title"], para["paragraph_text"]))
            assert got.text == para["paragraph_text"] and got.title == para["title"]


def test_hotpotqa_pool_matches_the_readme(shared_eval, home):
    from searchain.config import Settings
    from searchain.corpus.manager import CorpusManager

    report = CorpusManager(home, Settings()).add("hp", shared_eval / "hotpotqa" / "dev_500.jsonl")
    assert 4820 <= report.added <= 4900 and report.skipped == 0
    assert CorpusManager(home, Settings()).info("hp").formats == ["hotpotqa"]


def test_multihop_record_without_paragraphs_is_reported(tmp_path):
    f = tmp_path / "m.jsonl"
    f.write_text(json.dumps({"paragraphs": [{"title": "T", "paragraph_text": "p"}, {"title": "T"}]}) + "\n"
                 + json.dumps({"id": "q"}) + "\n", encoding="utf-8")
    passages, log, _ = read(f, "musique")
    assert [p.text for p in passages] == ["p"]
    assert [(p.line, "paragraphs[1]" in p.reason or "no" in p.reason) for p in log.problems] == [
        (1, True), (2, True)]


# -- folder ---------------------------------------------------------------------------------

def test_folder_offsets_are_exact_and_titles_come_from_headings(tmp_path):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    body = " ".join(f"word{i}." if i % 17 == 16 else f"word{i}" for i in range(260))
    (root / "a.md").write_text(f"# The Title\n\n{body}\n\n## Later\n\nShort section text.\n", encoding="utf-8")
    (root / "sub" / "b_note.txt").write_text("Plain text note.\n", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG")
    (root / ".hidden.md").write_text("secret", encoding="utf-8")
    (root / "bad.md").write_bytes(b"# Bad\n\xff\xfe broken")
    (root / "empty.txt").write_text("   \n", encoding="utf-8")
    passages, log, source = read(root, "folder")
    by_doc = {}
    for p in passages:
        by_doc.setdefault(p.doc_id, []).append(p)
    assert set(by_doc) == {"docs/a.md", "docs/sub/b_note.txt"}
    a_text = (root / "a.md").read_text(encoding="utf-8")
    for p in by_doc["docs/a.md"]:
        assert a_text[p.start:p.end] == p.text
        assert p.title == "The Title" and "#" not in p.text
    assert by_doc["docs/a.md"][-1].text == "Short section text."
    assert [p.pid for p in by_doc["docs/a.md"]][:2] == ["docs/a.md#0", "docs/a.md#1"]
    assert by_doc["docs/sub/b_note.txt"][0].title == "b note"
    assert source.ignored == 1  # the png; hidden files are not looked at
    assert sorted((p.file.split("/")[-1], p.line) for p in log.problems) == [("bad.md", 2), ("empty.txt", None)]


# -- detection ------------------------------------------------------------------------------

def test_detect_format_from_names_and_content(tmp_path, shared_eval):
    assert detect_format(tmp_path) == "folder"
    assert detect_format(shared_eval / "musique" / "dev_200.jsonl") == "musique"
    assert detect_format(shared_eval / "hotpotqa" / "dev_500.jsonl") == "hotpotqa"
    cases = {"a.tsv": "1\tt\tT\n", "b.txt": "id\ttext\ttitle\n", "c.jsonl": '{"id": 1, "text": "x"}\n',
             "d.dump": "<mediawiki>\n", "e.xml": "whatever"}
    for name, content in cases.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    assert [detect_format(tmp_path / n) for n in cases] == ["tsv", "tsv", "jsonl", "mediawiki", "mediawiki"]


def test_detect_format_refuses_to_guess(tmp_path):
    (tmp_path / "x.csv").write_text("a,b,c\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="--format"):
        detect_format(tmp_path / "x.csv")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(CorpusError, match="empty"):
        detect_format(tmp_path / "empty.jsonl")
