"""MediaWiki dumps: markup stripping, article filtering, offsets, bz2, constant memory."""

import bz2
import tracemalloc
from xml.sax.saxutils import escape

import pytest

from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources.mediawiki import MediaWikiSource
from searchain.corpus.sources.wikitext import strip_wikitext
from searchain.errors import CorpusError

NS = "http://www.mediawiki.org/xml/export-0.10/"

ARTICLE = """{{Infobox river
| name = Ellin
| length = {{convert|212|km}}
}}
'''River Ellin''' is a [[river]] in the [[Ellin Valley|valley]].<ref name="a">{{cite web|url=x}}</ref> It has a [[Lake Sume|lake]].<ref>Another ref</ref>
[[File:Ellin.jpg|thumb|The [[river]] at [[Varrow|dusk]]]]
== History ==
Barges ''sailed'' it until the 1930s.<!-- hidden comment --> See [http://example.org the site] &amp; more.
{| class="wikitable"
|-
| a || b
|}
* Item one
* Item <b>two</b>
[[Category:Rivers]]
[[de:Ellin]]
"""


def page(title, text, *, page_id, ns=0, redirect=False):
    red = f'<redirect title="{escape(title)}x" />' if redirect else ""
    return (f"<page><title>{escape(title)}</title><ns>{ns}</ns><id>{page_id}</id>{red}"
            f"<revision><id>9{page_id}</id><text xml:space=\"preserve\">{escape(text)}</text></revision></page>\n")


def dump(pages):
    return (f'<mediawiki xmlns="{NS}" version="0.10"><siteinfo><sitename>Test</sitename></siteinfo>\n'
            + "".join(pages) + "</mediawiki>\n")


def read(path):
    log = ProblemLog()
    source = MediaWikiSource(path, "wiki", log)
    return list(source.passages()), log, source


def test_strip_wikitext_removes_markup():
    text = strip_wikitext(ARTICLE)
    assert text.startswith("River Ellin is a river in the valley. It has a lake.")
    assert "Barges sailed it until the 1930s. See the site & more." in text
    assert "Item one\nItem two" in text
    for junk in ("{{", "}}", "[[", "]]", "<ref", "Infobox", "cite", "'''", "''", "==", "History",
                 "wikitable", "Category", "Ellin.jpg", "dusk", "de:", "hidden", "<b>", "http"):
        assert junk not in text, junk


def test_dump_keeps_articles_only_with_exact_offsets(tmp_path):
    long_text = ARTICLE + "\n\n" + " ".join(f"Sentence {i} ends here." for i in range(80))
    f = tmp_path / "wiki.xml"
    f.write_text(dump([
        page("River Ellin", long_text, page_id=12),
        page("Ellin", "#REDIRECT [[River Ellin]]", page_id=13, redirect=True),
        page("Talk:River Ellin", "chat", page_id=14, ns=1),
        page("Old style redirect", "#redirect [[River Ellin]]", page_id=15),
        page("Only markup", "{{stub}}", page_id=16),
        page("Lisk", "'''Lisk''' is a town.", page_id=17),
    ]), encoding="utf-8")
    passages, log, source = read(f)
    titles = [p.title for p in passages]
    assert set(titles) == {"River Ellin", "Lisk"} and titles.count("River Ellin") > 2
    assert source.ignored == 4 and log.skipped == 0
    doc = strip_wikitext(long_text)
    for p in (p for p in passages if p.doc_id == "12"):
        assert doc[p.start:p.end] == p.text
    assert [p.pid for p in passages if p.doc_id == "12"][:2] == ["12#0", "12#1"]
    assert passages[-1].text == "Lisk is a town." and passages[-1].pid == "17#0"


def test_bz2_dump_reads_the_same(tmp_path):
    content = dump([page("A", "Alpha text here.", page_id=1), page("B", "Beta text.", page_id=2)])
    plain, packed = tmp_path / "w.xml", tmp_path / "w.xml.bz2"
    plain.write_text(content, encoding="utf-8")
    packed.write_bytes(bz2.compress(content.encode("utf-8")))
    assert [p.text for p in read(packed)[0]] == [p.text for p in read(plain)[0]] == ["Alpha text here.", "Beta text."]


def test_truncated_dump_is_a_clear_error_with_line(tmp_path):
    content = dump([page("A", "Alpha.", page_id=1), page("B", "Beta.", page_id=2)])
    f = tmp_path / "cut.xml"
    f.write_text(content[: content.index("<page><title>B") + 30], encoding="utf-8")
    source = MediaWikiSource(f, "wiki", ProblemLog())
    got = []
    with pytest.raises(CorpusError, match=r"cut.xml:\d+: the XML is malformed"):
        for p in source.passages():
            got.append(p.title)
    assert got == ["A"]  # what came before the damage was delivered


def test_not_a_mediawiki_file_is_refused(tmp_path):
    f = tmp_path / "other.xml"
    f.write_text("<html><body/></html>", encoding="utf-8")
    with pytest.raises(CorpusError, match="not a MediaWiki dump"):
        read(f)


@pytest.mark.slow
def test_streaming_memory_stays_bounded_as_the_dump_grows(tmp_path):
    """Peak traced memory for 1,000 pages is close to that for 100: pages are not kept."""
    body = ARTICLE + "\n\n" + " ".join(f"Filler sentence number {i}." for i in range(60))

    def peak_for(n_pages):
        f = tmp_path / f"big{n_pages}.xml.bz2"
        with bz2.open(f, "wt", encoding="utf-8") as fh:
            fh.write(f'<mediawiki xmlns="{NS}">\n')
            for i in range(n_pages):
                fh.write(page(f"Page {i}", body, page_id=i + 1))
            fh.write("</mediawiki>\n")
        source = MediaWikiSource(f, "wiki", ProblemLog())
        tracemalloc.start()
        count = sum(1 for _ in source.passages())
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return count, peak, f.stat().st_size

    small_count, small_peak, _ = peak_for(100)
    big_count, big_peak, big_size = peak_for(1000)
    assert big_count == 10 * small_count
    uncompressed = 1000 * len(body)
    assert big_peak < 1.5 * small_peak + 200_000, (small_peak, big_peak)
    assert big_peak < uncompressed / 10, (big_peak, uncompressed)
