"""The wikitext stripper on article-shaped pages: prose kept, non-prose sections and template
leftovers gone, section paths, and the comparison bench's figures."""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from searchain.bench.wikitext import RESIDUE, measure
from searchain.corpus.sources.wikitext import strip_wikitext, wikitext_sections

PAGES = Path(__file__).parents[1] / "fixtures" / "wikitext"


def page(name):
    return (PAGES / f"{name}.wiki").read_text(encoding="utf-8")


def test_non_prose_sections_are_dropped_with_their_subsections():
    paths = [p for p, _ in wikitext_sections(page("river_ellin"))]
    assert paths == ["", "Etymology", "History > Early years", "History > Industrial era", "Geography"]
    text = strip_wikitext(page("river_ellin"))
    for junk in ("List of rivers", "Jones", "Brown", "Ellin Trust", "Rivers and mills", "notelist"):
        assert junk not in text, junk


def test_combined_reference_headings_are_not_prose():
    paths = [p for p, _ in wikitext_sections(page("lantern_suite"))]
    assert "Notes and references" not in paths and "External links" not in paths
    assert "Orr" not in strip_wikitext(page("lantern_suite"))


def test_template_leftovers_leave_no_empty_brackets_and_inline_words_stay():
    lead = wikitext_sections(page("river_ellin"))[0][1]
    assert lead.startswith("The River Ellin (Afon Elin) is a river in the Ellin Valley of Northland.")
    assert "at 640 m and flows north for 212 km to the Sume Estuary." in lead
    assert "(c. 1180–1240)" in strip_wikitext(page("river_ellin"))
    for name in ("river_ellin", "mara_quell", "varrow", "lantern_suite", "lake_sume"):
        text = strip_wikitext(page(name))
        assert not RESIDUE["empty_brackets"].search(text), name
        assert " ," not in text and "  " not in text, name


def test_bench_counts_no_residue_in_our_passages():
    pages = [f.read_text(encoding="utf-8") for f in sorted(PAGES.glob("*.wiki"))]
    result = measure(pages, repeat=1)
    assert result["pages"] == 5 and result["ours"]["passages"] > 5
    assert set(result["ours"]["residue_passages"].values()) == {0}
    assert result["ours"]["cpu_s"] > 0 and result["ours"]["pages_per_cpu_s"] > 0
    other = result["mwparserfromhell"]
    if other is not None:  # installed: measured on the same pages, same passage counting
        assert other["passages"] > 0 and set(other["residue_passages"]) == set(RESIDUE) | {"any"}
    from searchain.bench.wikitext import with_wikiextractor

    theirs = with_wikiextractor({}, pages, 1)["wikiextractor"]
    if theirs is not None:  # installed (the dev extra): its text, counted the same way
        assert theirs["passages"] > 0 and theirs["residue_passages"]["any"] <= sum(
            v for k, v in theirs["residue_passages"].items() if k != "any")


def test_residue_counts_another_languages_category_left_as_text_but_not_a_title_with_a_colon():
    links = RESIDUE["links"]
    assert links.search("Ein Text.\nKategorie:Mensch") and links.search("A caption 200px")
    assert not links.search("He starred in Star Trek: Voyager.\nSee http://example.org too.")


# The stripper runs some patterns only on text holding a literal (wikitext.py, _strip_markup):
# exact only if every match of the pattern holds it. Checked on text made of markup's characters.
_MARKUP = st.text(alphabet="{|}!=',;:() \t\n*#-[]aISBNdoi", max_size=40)


@settings(max_examples=400, deadline=None)
@given(_MARKUP)
def test_a_guard_never_skips_text_its_pattern_would_change(text):
    from searchain.corpus.sources import wikitext as w

    if w._BRACKET_EDGE_OUT.search(text):
        assert w._EDGE_OUT_CANDIDATE.search(text)
    if w._TABLE.search(text) or w._INLINE_TABLE.search(text):
        assert "{|" in text
    if w._TABLE_ROW.search(text):
        assert "|" in text or "!!" in text
    if w._CITATION_ITEM.search(text):
        assert any(word in text for word in w._CITATION_WORDS)
    if w._HEADING.search(text):
        assert "=" in text
    if w._QUOTES.search(text):
        assert "''" in text


def test_the_guarded_patterns_still_strip_what_they_match():
    from searchain.corpus.sources.wikitext import strip_wikitext

    text = strip_wikitext("Intro ''bold'' (born 1950; ) text.\n{|\n| cell\n|}\n* Book. ISBN 978-0-00-000000-0\n"
                          "\nMore , ) prose.\n=== Heading ===\nLast.")
    assert text == "Intro bold (born 1950) text.\n\nMore) prose.\n\nLast."
