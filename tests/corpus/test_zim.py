"""Kiwix ZIM files: articles only, prose by section, addresses, damaged files, detection."""

import json

import pytest

pytest.importorskip("libzim")

from searchain.cli.main import main  # noqa: E402
from searchain.corpus.manager import CorpusManager  # noqa: E402
from searchain.corpus.problems import ProblemLog  # noqa: E402
from searchain.corpus.sources.detect import detect_format  # noqa: E402
from searchain.corpus.sources.zim import ZimSource, wiki_base  # noqa: E402
from searchain.errors import CorpusError  # noqa: E402
from tests.fixtures.zim import RIVER_HTML, write_zim  # noqa: E402

WIKI = {"Name": "wikipedia_en_all_nopic", "Language": "eng"}


def read(path):
    source = ZimSource(path, "wiki", ProblemLog())
    return list(source.passages()), source


def test_only_articles_become_passages_with_their_sections(tmp_path):
    passages, source = read(write_zim(tmp_path / "w.zim", metadata=WIKI))
    assert {p.doc_id for p in passages} == {"River_Ellin", "Lake_Sume"}
    # the main page, the redirect, the image and the non-front page are left out, and counted
    assert source.ignored >= 4
    text = "\n".join(p.text for p in passages)
    assert "Welcome" not in text and "Licence" not in text
    river = [p for p in passages if p.doc_id == "River_Ellin"]
    assert [p.section for p in river] == ["", "History", "History > Early years", "Geography"]
    assert river[0].text.startswith("River Ellin is a river in the Ellin Valley. It rises in the "
                                    "Varrow hills and flows north.")
    assert "A ford at Varrow\n\nA mill at Sume" in river[2].text
    assert all(p.title == "River Ellin" for p in river)


def test_non_prose_sections_and_boxes_are_dropped(tmp_path):
    passages, _ = read(write_zim(tmp_path / "w.zim"))
    text = "\n".join(p.text for p in passages)
    for junk in ("ISBN", "Retrieved", "List of rivers", "Official site", "212 km", "Flow 12",
                 "Rivers of Ellin", "For the town", "[1]", "[edit]", "dusk", "var x", "float",
                 "( )", "()"):
        assert junk not in text, junk
    assert not any(p.section.startswith(("References", "See also", "External")) for p in passages)


def test_offsets_index_the_article_text_and_pids_are_stable(tmp_path):
    path = write_zim(tmp_path / "w.zim")
    first, _ = read(path)
    again, _ = read(path)
    assert [p.pid for p in first] == [p.pid for p in again]
    river = [p for p in first if p.doc_id == "River_Ellin"]
    assert [p.pid for p in river] == [f"River_Ellin#{k}" for k in range(len(river))]
    starts = [p.start for p in river]
    assert starts == sorted(starts) and all(p.end - p.start == len(p.text) for p in river)


def test_url_is_the_wikipedia_article_only_when_the_metadata_says_so(tmp_path):
    passages, _ = read(write_zim(tmp_path / "w.zim", metadata=WIKI))
    river = next(p for p in passages if p.doc_id == "River_Ellin")
    assert river.url == "https://en.wikipedia.org/wiki/River_Ellin"
    assert river.source == "w.zim#River_Ellin"
    plain, _ = read(write_zim(tmp_path / "other.zim", metadata={"Name": "my_notes"}))
    assert next(p for p in plain if p.doc_id == "River_Ellin").url == "other.zim#River_Ellin"
    # mwoffliner's files of 2017 and before: paths end in ".html", the name starts "kiwix."
    old, _ = read(write_zim(tmp_path / "old.zim", {"River_Ellin.html": ("River Ellin", RIVER_HTML)},
                            metadata={"Name": "kiwix.wikipedia_en_all"}))
    assert {p.url for p in old} == {"https://en.wikipedia.org/wiki/River_Ellin"}


def test_wiki_base_is_conservative():
    assert wiki_base("https://fr.wikipedia.org/", "") == "https://fr.wikipedia.org/wiki/"
    assert wiki_base("", "wikipedia_en_simple_all_nopic_2024-06") == "https://simple.wikipedia.org/wiki/"
    assert wiki_base("", "wikipedia_de_all_maxi") == "https://de.wikipedia.org/wiki/"
    # the names of older Kiwix files (a real one: wikibooks_be_all_nopic_2017-02.zim) and other projects
    assert wiki_base("", "kiwix.wikibooks_be_all") == "https://be.wikibooks.org/wiki/"
    assert wiki_base("", "wiktionary_fr_all_maxi") == "https://fr.wiktionary.org/wiki/"
    for source, name in (("https://example.org/", ""), ("", "gutenberg_en_all"), ("ftp://x", ""),
                         ("", "kiwix.my_notes"),
                         ("https://evil.org/en.wikipedia.org", "")):
        assert wiki_base(source, name) == "", (source, name)


def test_zim_is_detected_by_suffix_and_by_magic_bytes(tmp_path):
    path = write_zim(tmp_path / "w.zim")
    assert detect_format(path) == "zim"
    renamed = tmp_path / "download.bin"
    renamed.write_bytes(path.read_bytes())
    assert detect_format(renamed) == "zim"


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_a_damaged_zim_names_the_file_and_adds_nothing(home, tmp_path, damage):
    good = write_zim(tmp_path / "good.zim")
    data = bytearray(good.read_bytes())
    if damage == "truncated":
        data = data[:len(data) // 2]
    else:
        for k in range(len(data) // 2, len(data) // 2 + 64):  # inside the clusters
            data[k] ^= 0x5A
    bad = tmp_path / "bad.zim"
    bad.write_bytes(bytes(data))
    corpora = CorpusManager(home, _settings(home))
    corpora.add("wiki", good)
    before = corpora.info("wiki").passages
    with pytest.raises(CorpusError) as caught:
        corpora.add("wiki", bad)
    assert str(bad) in str(caught.value) and "nothing was added" in str(caught.value)
    assert "download it again" in caught.value.hint
    assert corpora.info("wiki").passages == before
    with pytest.raises(CorpusError):
        corpora.add("other", bad)
    assert not corpora.exists("other")  # a failed first add leaves no empty corpus


def test_cli_adds_a_zim_and_search_json_carries_url_and_section(home, tmp_path, capsys):
    path = write_zim(tmp_path / "w.zim", metadata=WIKI)
    argv = ["--home", str(home.config_dir.parent)]
    assert main([*argv, "corpus", "add", "wiki", str(path), "--no-index"]) == 0
    capsys.readouterr()
    assert main([*argv, "search", "wiki", "first bridge monks", "--retriever", "bm25", "--json"]) == 0
    top = json.loads(capsys.readouterr().out)["hits"][0]
    assert top["title"] == "River Ellin" and "monks of Sume" in top["text"]
    assert top["section"] == "History > Early years"
    assert top["url"] == "https://en.wikipedia.org/wiki/River_Ellin"


def _settings(home):
    from searchain.config import Settings

    return Settings.load(home)
