"""Passage and model text is data: whatever it holds, the HTML the app's views get from
``desktop.render`` has only the app's own tags, and links only to ``ref:`` marks (#36)."""

from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.render import answer_html, passage_html, references_html, text_to_html
from searchain.reasoning.result import Reference
from searchain.types import Passage

HOSTILE = ["<img src=x onerror=alert(1)>", '<a href="javascript:alert(1)">x</a>', "<b>bold</b>",
           "<script>alert(1)</script>", "<style>*{display:none}</style>", "&lt;already&gt; & ;",
           "</div></span><div onclick=x>", "[1] <a href='ref:9:9'>[9]</a>"]
ALLOWED_TAGS = {"a", "b", "div", "span", "br"}


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs


def _check(html: str, message_key: str = "7") -> None:
    parser = _Tags()
    parser.feed(html)
    assert set(parser.tags) <= ALLOWED_TAGS, parser.tags
    for name, value in parser.attrs:
        assert name in ("href", "class", "style"), name
        if name == "href":
            assert value.startswith(f"ref:{message_key}:"), value


def _reference(mark: int, text: str) -> Reference:
    passage = Passage(pid=text, title=text, text=f"{text} middle {text}", corpus=text)
    return Reference(mark=mark, passage=passage, span=(0, len(text)), query=text, answer=text)


def test_hostile_strings_render_as_text_in_every_view():
    for text in HOSTILE:
        _check(answer_html(f"{text} [1]", "7", marks=[1]))
        _check(references_html([_reference(1, text)], "7"))
        _check(passage_html(f"a {text} b", (2, 2 + len(text))))
        _check(text_to_html(text))
        assert "alert(1)" in text_to_html(text) or "alert" not in text  # the words stay, as text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>&\"'=/ abcimgsrcpt[]1,\n;:")), max_size=80))
def test_any_text_renders_with_the_apps_own_tags_only(text):
    _check(answer_html(text, "7", marks=[1]))
    _check(references_html([_reference(1, text or "x")], "7"))
    _check(passage_html(text, (0, len(text)) if text else None))
