"""*Open source* at the cited page (#34): the command or URL built for each known viewer, and the
fallback (with a note naming the page) where the page cannot be passed. No viewer is started."""

import pytest

from searchain.corpus.open_at import _stem, open_target


def _which(*present):
    return lambda exe: f"/usr/bin/{exe}" if exe in present else None


@pytest.fixture
def pdf(tmp_path):
    path = tmp_path / "report v2.pdf"
    path.write_bytes(b"%PDF-1.4\n")
    return path


@pytest.mark.parametrize("desktop_file, exe, argv", [
    ("org.gnome.Evince.desktop", "evince", ["-i", "12", "{path}"]),
    ("atril.desktop", "atril", ["-i", "12", "{path}"]),
    ("xreader.desktop", "xreader", ["-i", "12", "{path}"]),
    ("org.kde.okular.desktop", "okular", ["-p", "12", "{path}"]),
    ("okularApplication_pdf.desktop", "okular", ["-p", "12", "{path}"]),
    ("org.pwmt.zathura-pdf-mupdf.desktop", "zathura", ["-P", "12", "{path}"]),
    ("org.pwmt.zathura.desktop", "zathura", ["-P", "12", "{path}"]),
    ("mupdf.desktop", "mupdf", ["{path}", "12"]),
    ("qpdfview.desktop", "qpdfview", ["--unique", "{path}#12"]),
])
def test_linux_viewers_get_their_own_page_flag(pdf, desktop_file, exe, argv):
    target = open_target(pdf, 12, platform="linux", default_app=desktop_file, which=_which(exe))
    assert target.at_page and target.page == 12 and not target.note
    assert list(target.command) == [f"/usr/bin/{exe}", *[a.format(path=pdf) for a in argv]]


def test_a_browser_as_pdf_viewer_gets_the_page_in_the_url(pdf):
    target = open_target(pdf, 3, platform="linux", default_app="firefox.desktop", which=_which("firefox"))
    assert target.url == pdf.resolve().as_uri() + "#page=3" and target.url.startswith("file:///")
    assert "%20" in target.url  # the space in the name is quoted
    assert target.command == ("/usr/bin/firefox", target.url) and target.at_page


@pytest.mark.parametrize("platform, default_app, present", [
    ("darwin", "", ()),                                  # Preview: no page can be passed
    ("linux", "org.gnome.Evince.desktop", ()),           # the default viewer is not installed
    ("linux", "libreoffice-draw.desktop", ("evince",)),  # an unknown default: not another viewer
    ("linux", "", ("evince", "okular")),                 # no xdg-mime answer
    ("win32", "", ()),                                   # no SumatraPDF on PATH
])
def test_elsewhere_the_file_opens_at_its_start_and_the_note_names_the_page(pdf, platform, default_app, present):
    target = open_target(pdf, 7, platform=platform, default_app=default_app, which=_which(*present))
    assert target.command == () and not target.at_page and target.url == pdf.resolve().as_uri()
    assert "page 7" in target.note and pdf.name in target.note


def test_sumatra_on_windows_takes_the_page(pdf):
    target = open_target(pdf, 2, platform="win32", default_app="", which=_which("SumatraPDF"))
    assert target.command == ("/usr/bin/SumatraPDF", "-page", "2", str(pdf))


def test_no_page_or_not_a_pdf_is_just_the_file(pdf, tmp_path):
    assert open_target(pdf, None, default_app="org.gnome.Evince.desktop", which=_which("evince")).command == ()
    docx = tmp_path / "memo.docx"
    docx.write_bytes(b"PK")
    target = open_target(docx, 4, platform="linux", default_app="org.gnome.Evince.desktop",
                         which=_which("evince"))
    assert target.command == () and target.note == "" and target.url == docx.resolve().as_uri()


def test_desktop_file_names_reduce_to_the_viewer():
    assert _stem("org.gnome.Evince.desktop") == "evince"
    assert _stem("okularApplication_pdf.desktop") == "okular"
    assert _stem("chromium-browser.desktop") == "chromium-browser"
