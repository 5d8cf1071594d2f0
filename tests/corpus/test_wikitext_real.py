"""Markup seen on real dump pages (#33 item 3, gensim's enwiki excerpt and wtf_wikipedia's
cached pages; see BENCHMARKS.md) that the stripper used to leave in passages."""

from searchain.corpus.sources.wikitext import strip_wikitext, wikitext_sections


def test_a_file_caption_holding_single_brackets_is_dropped_whole():
    markup = ("Alkanes form isomers.\n\n[[Image:C4.png|thumb|right| Different C<sub>4</sub> alkanes: "
              "[[n-butane|''n''-butane]] and Bicyclo[1.1.0]butane [above].]]\n\nThey burn.")
    assert strip_wikitext(markup) == "Alkanes form isomers.\n\nThey burn."
    assert strip_wikitext("See [[Bracket|the [square] bracket]] here.") == "See the [square] bracket here."


def test_a_table_ends_only_at_a_closing_line_not_at_a_bar_brace_in_a_cell():
    markup = ("Codes follow.\n{| class=\"wikitable\"\n|-\n| 123 || [[Bracket|}]]\n|-\n| 124 || "
              "[[Vertical bar|&#124;]]\n|}\nAfter the table.")
    assert strip_wikitext(markup) == "Codes follow.\n\nAfter the table."
    nested = "{|\n|\n{| class=\"wikitable\"\n| a || b\n|}\n|}\nProse."
    assert strip_wikitext(nested) == "Prose."


def test_citation_list_items_go_and_prose_naming_an_isbn_stays():
    markup = ("== Editions ==\n* Orwell, G. ''Animal Farm''. Secker, 1945. ISBN 0-451-51679-6\n"
              "* LCCN 46006290 (hardcover)\n* A radio play, 1947.\n\n"
              "== History ==\nThe ISBN 0-451-51679-6 edition sold well.")
    sections = dict(wikitext_sections(markup))
    assert sections == {"Editions": "A radio play, 1947.",
                        "History": "The ISBN 0-451-51679-6 edition sold well."}


def test_a_colon_link_to_a_category_reads_as_its_name():
    assert strip_wikitext("See also [[:Category:People from Bodmin]].") == "See also People from Bodmin."
    assert strip_wikitext("Text.[[Category:People from Bodmin]]") == "Text."


def test_reference_sections_of_other_wikipedias_and_qualified_bibliographies_are_not_prose():
    markup = ("Ein Text.\n== Geschichte ==\nAlt.\n== Literatur ==\n* Buch\n== Einzelnachweise ==\n"
              "<references />\n== Weblinks ==\n* Seite\n== Etymological bibliography ==\n* Book")
    assert [p for p, _ in wikitext_sections(markup)] == ["", "Geschichte"]


def test_a_file_link_that_never_closes_takes_only_its_line():
    markup = "Eden.\n[[Image:Durer.jpg|thumb|left|''[[Adam and Eve (Dürer)|Adam and Eve]]'': a cla\nThe fall."
    assert strip_wikitext(markup) == "Eden.\n\nThe fall."


def test_rows_of_a_table_that_never_closes_are_dropped_and_a_bang_word_stays():
    markup = ("Before.\n{| class=\"wikitable\"\n! Year !! Event\n|-\n| 1901 || Founded\n\n"
              "!Kung people live in the Kalahari.")
    assert strip_wikitext(markup) == "Before.\n\n!Kung people live in the Kalahari."


def test_an_escaped_entity_is_unescaped_once_more_not_left_as_nbsp():
    assert strip_wikitext("Founded in 1901&amp;nbsp;in Paris by AT&amp;amp;T.") == "Founded in 1901 in Paris by AT&T."


def test_nowiki_braces_inside_a_footnote_do_not_keep_the_footnote_open():
    markup = ("There are 95 printable characters.{{efn|Printed out: {{Pre2|scroll|<nowiki> !#$%&()*+{|}~"
              "</nowiki>}}}} They follow the space.")
    assert strip_wikitext(markup) == "There are 95 printable characters. They follow the space."


def test_a_table_inside_one_line_goes_and_a_literal_bar_brace_stays():
    markup = ('The club plays in Fife. {| class="wikitable" |-! Name!! Role |- | A. Young || Chairman |} '
              "Honours follow.")
    assert strip_wikitext(markup) == "The club plays in Fife. Honours follow."
    assert strip_wikitext("The printable set ends {|}~ in ASCII.") == "The printable set ends {|}~ in ASCII."


def test_punctuation_left_alone_on_a_line_by_a_removed_formula_is_dropped():
    markup = "The constant is\n<math>K_a</math>\n.\nFor water it is\n:<math>x</math> + <math>y</math>\nsmall."
    assert strip_wikitext(markup) == "The constant is\n\nFor water it is\n\nsmall."


def test_an_unclosed_ref_tag_does_not_swallow_the_prose_up_to_the_next_ref():
    markup = 'Founded in 1901.<ref name="a"> Moved to Leith in 1920.<ref>{{cite web|title=X}}</ref> Closed.'
    assert strip_wikitext(markup) == "Founded in 1901. Moved to Leith in 1920. Closed."
    assert strip_wikitext("Area <math>x<y</math> grows.<ref>Smith 2001</ref>") == "Area grows."


def test_category_and_file_links_of_other_languages_leave_no_text():
    markup = ("Die Welle überträgt Drehmoment.\n[[Datei:Welle.jpg|mini|Eine Welle]]\nMehr Text.\n"
              "[[Kategorie:Maschinenelement|Welle]]\n[[Kategoreja:Dzeivinīki]]\n"
              "[[Fails:Akha.JPG|thumb|Cylvāku tāvaiņs|200px]]")
    assert strip_wikitext(markup) == "Die Welle überträgt Drehmoment.\n\nMehr Text."
    assert strip_wikitext("He starred in [[Star Trek: Voyager]].") == "He starred in Star Trek: Voyager."
