"""Parquet files of articles: the ``wikimedia/wikipedia`` dataset on the Hugging Face Hub
(columns ``id``, ``url``, ``title``, ``text``; one folder per snapshot and language, e.g.
``20231101.simple/train-00000-of-00001.parquet``), one file or a folder of shards.

Streaming: read with pyarrow one row group at a time, in batches of ``BATCH_ROWS`` rows (only
the four columns), so memory holds one batch whatever the corpus's (or a row group's) size.
Shards are read in name order. With workers (``corpus.parallel``) each row group is a work
item: the parent opens every file once (footer and columns checked) and hands out
``(file, group)``; a worker keeps its last file open and parses the group's articles.

The dataset's text is plain prose with each section heading alone on a line between blank
lines ("History", "Early life"). ``text_sections`` takes such a line as a heading when it is
short and not a sentence; the appendices (References, See also, External links, ...:
``sections.is_non_prose``; Wikipedia puts them last) are left out with everything after them.
Each section is cut into ~100-word passages that do not cross sections; a passage keeps the
article's ``title``, ``url`` and its ``section``. pids are ``"<id>#<k>"``, ``doc_id`` the
article id, ``source`` ``"<file or folder>#<title>"``; offsets index the article's kept text.

Resuming (``resume_after``, an article id): a stopped ingest skips, by the ``id`` column alone,
the articles before the last stored one. Damage (a truncated file, a row group that does not
decode) is a CorpusError naming the file and the row group; articles before it are kept.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from ...errors import CorpusError
from ...types import Passage
from ..chunking import chunk_spans
from .base import Source
from .sections import SECTION_SEPARATOR, is_non_prose

PARQUET_MAGIC = b"PAR1"  # the first and last four bytes of every parquet file
COLUMNS = ("id", "title", "text")  # needed; "url" is read when the file has it
BATCH_ROWS = 256  # rows converted to Python at a time
_HEADING_MAX_WORDS = 12
_HEADING_MAX_CHARS = 90
_NOT_HEADING_END = re.compile(r"[.!?,;:\"')\]]$")
_PARAGRAPHS = re.compile(r"\n[ \t\r\f\v]*\n")
_DAMAGED_HINT = ("The file may be truncated or damaged (an interrupted download?): download it "
                 "again (`searchain corpus get wikipedia` checks every file's SHA-256).")


def parquet_files(path: Path) -> list[Path]:
    """``path`` itself, or the ``*.parquet`` files under the folder ``path``, in name order."""
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.rglob("*.parquet") if p.is_file()
                      and not any(part.startswith(".") for part in p.relative_to(path).parts))
    return [path]


class ParquetSource(Source):
    format = "parquet"
    # measured (BENCHMARKS.md, #33): passages a worker parses per CPU second (``fts_build``)
    parse_passages_per_core_s = 32_000
    resume_after: str | None = None  # article id of the last article stored by a stopped ingest
    skipped_articles = 0  # passed over, unparsed, while resuming

    def work_bytes(self) -> int:
        """The size of the file, or of the folder's shards (``parallel.workers_for``)."""
        return sum(_size(f) for f in parquet_files(self.path))

    def passages(self) -> Iterator[Passage]:
        files = parquet_files(self.path)
        if not files:
            raise CorpusError(f"{self.path} holds no .parquet files.",
                              hint="Pass a parquet file, or a folder of parquet shards.")
        self.bytes_total = sum(_size(f) for f in files)
        skipping = self.resume_after is not None
        for file in files:
            skipping = yield from self._file(file, skipping)
        if skipping and self.resume_after is not None:  # the resume article is not there
            self.resume_after, self.bytes_done, self.skipped_articles = None, 0, 0
            yield from self.passages()

    def _file(self, file: Path, skipping: bool):
        parquet = _open(file)
        columns = _columns(parquet, file)
        done_before = self.bytes_done
        groups = parquet.num_row_groups
        for g in range(groups):
            if skipping:
                ids = [i for rows in self._batches(parquet, file, g, ["id"]) for i in rows["id"]]
                if self.resume_after not in {str(i) for i in ids}:
                    self.skipped_articles += len(ids)
                    self.bytes_done = done_before + _size(file) * (g + 1) // groups
                    continue
            n = 0
            for rows in self._batches(parquet, file, g, columns):
                urls = rows.get("url") or [""] * len(rows["id"])
                for aid, title, text, url in zip(rows["id"], rows["title"], rows["text"], urls):
                    n += 1
                    aid = "" if aid is None else str(aid)
                    if skipping:
                        skipping = aid != self.resume_after
                        self.skipped_articles += skipping
                        if skipping:
                            continue
                    yield from self._article(file, g, n - 1, aid, title, text, url)
            self.bytes_done = done_before + _size(file) * (g + 1) // groups
        self.bytes_done = done_before + _size(file)
        return skipping

    # -- parallel ingest (``corpus.parallel``): one work item per row group ------------------

    def work_items(self) -> Iterator[tuple[object, int]]:
        """``(("row_group", (file, group, start_id)), bytes_done)`` for every row group of every
        file, in order; each file is opened here once (its footer and columns checked). Resuming
        passes over, by the ``id`` column alone, the groups before the one holding
        ``resume_after``; that group's item starts at it (``start_id``). When the article is in
        no group, every group is read."""
        files = parquet_files(self.path)
        if not files:
            raise CorpusError(f"{self.path} holds no .parquet files.",
                              hint="Pass a parquet file, or a folder of parquet shards.")
        self.bytes_total = sum(_size(f) for f in files)
        start = self._resume_group(files) if self.resume_after is not None else None
        done_before = 0
        for n, file in enumerate(files):
            parquet = _open(file)
            _columns(parquet, file)
            groups = parquet.num_row_groups
            for g in range(groups):
                done = done_before + _size(file) * (g + 1) // groups
                if start is not None and (n, g) < start:
                    self.bytes_done = done
                    continue
                first = self.resume_after if start == (n, g) else None
                yield ("row_group", (str(file), g, first)), done
            done_before += _size(file)

    def _resume_group(self, files: list[Path]) -> tuple[int, int] | None:
        """``(file number, group)`` of the row group holding ``resume_after`` (the groups before
        it count in ``skipped_articles``), or None when no group holds it."""
        skipped = 0
        for n, file in enumerate(files):
            parquet = _open(file)
            for g in range(parquet.num_row_groups):
                ids = [str(i) for rows in self._batches(parquet, file, g, ["id"]) for i in rows["id"]]
                if self.resume_after in ids:
                    self.skipped_articles = skipped + ids.index(self.resume_after)
                    return n, g
                skipped += len(ids)
        return None

    def parse_item(self, item) -> list[Passage]:
        """The passages of one row group (in a worker, which keeps the file it read last open);
        with a ``start_id``, from that article on."""
        name, group, start_id = item[1]
        cached = getattr(self, "_worker_file", None)
        if cached is None or cached[0] != name:
            parquet = _open(Path(name))
            cached = self._worker_file = (name, parquet, _columns(parquet, Path(name)))
        _, parquet, columns = cached
        file, out, n = Path(name), [], 0
        skipping = start_id is not None
        for rows in self._batches(parquet, file, group, columns):
            urls = rows.get("url") or [""] * len(rows["id"])
            for aid, title, text, url in zip(rows["id"], rows["title"], rows["text"], urls):
                n += 1
                aid = "" if aid is None else str(aid)
                if skipping:
                    skipping = aid != start_id
                    if skipping:
                        continue
                out.extend(self._article(file, group, n - 1, aid, title, text, url))
        return out

    def _batches(self, parquet, file: Path, group: int, columns: list[str]):
        """Row group ``group`` as dicts of ``BATCH_ROWS`` rows each (memory stays bounded even
        where a writer made huge row groups); a group that does not decode, or holds text that is
        not UTF-8 (pyarrow checks that only when the values become Python strings), is a
        CorpusError."""
        try:
            batches = parquet.iter_batches(batch_size=BATCH_ROWS, row_groups=[group],
                                           columns=columns, use_threads=False)
            while True:
                try:
                    rows = next(batches).to_pydict()
                except StopIteration:
                    return
                yield rows
        except CorpusError:
            raise
        except GeneratorExit:
            raise
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors: ArrowInvalid, OSError, ...
            raise CorpusError(
                f"{file}: row group {group + 1} of {parquet.num_row_groups} cannot be read "
                f"({type(exc).__name__}: {exc}); articles before it were added.",
                hint=_DAMAGED_HINT) from exc

    def _article(self, file: Path, group: int, row: int, aid: str, title, text, url) -> Iterator[Passage]:
        if not aid or not isinstance(title, str) or not title.strip() or not isinstance(text, str):
            self.problems.skip(file, None, f"row group {group + 1}, row {row + 1}: an article "
                               f"without id, title or text (id={aid!r}, title={title!r})")
            return
        if "\0" in text or "\0" in title:  # as for a text file: binary data, never a passage
            self.problems.skip(file, None, f"row group {group + 1}, row {row + 1}: article {aid!r} "
                               "holds NUL bytes: binary data, not text")
            return
        sections = text_sections(text)
        doc = "\n\n".join(body for _, body in sections)
        k = at = 0
        here = f"{self.path.name}#{title}"
        for section, body in sections:
            for start, end in chunk_spans(doc, at, at + len(body)):
                yield Passage(self.corpus, f"{aid}#{k}", title, doc[start:end], here, aid, start,
                              end, url=url or "", section=section)
                k += 1
            at += len(body) + 2
        if not k:
            self.ignored += 1  # an empty article, or one of headings only


def text_sections(text: str) -> list[tuple[str, str]]:
    """``[(section path, text), ...]`` of an article's prose: the lead under ``""``, then each
    section under its heading (two headings in a row nest: ``"History > Early years"``); empty
    sections are left out, and so is everything from the first non-prose heading on: Wikipedia
    puts its appendices (See also, Notes, References, Further reading, External links) last, and
    their link lists would otherwise read as headings."""
    out: list[tuple[str, str]] = []
    path: list[str] = []
    body: list[str] = []
    last_was_heading = False

    def close():
        if body:
            out.append((SECTION_SEPARATOR.join(path), "\n\n".join(body)))
        body.clear()

    for paragraph in _PARAGRAPHS.split(text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if is_heading(paragraph):
            close()
            if is_non_prose(paragraph):
                break  # the appendices (See also, References, ...) end an article: all of it goes
            path = [*path, paragraph] if last_was_heading else [paragraph]
            last_was_heading = True
            continue
        last_was_heading = False
        body.append(paragraph)
    close()
    return out


def is_heading(paragraph: str) -> bool:
    """A line alone between blank lines that reads as a heading: short, one line, not ending
    like a sentence or a quotation, starting with a capital letter or a digit."""
    if "\n" in paragraph or len(paragraph) > _HEADING_MAX_CHARS:
        return False
    if len(paragraph.split()) > _HEADING_MAX_WORDS or _NOT_HEADING_END.search(paragraph):
        return False
    return paragraph[0].isupper() or paragraph[0].isdigit()


def _columns(parquet, file: Path) -> list[str]:
    """The columns to read from ``file``: COLUMNS, and ``url`` when it has one; a file without
    one of COLUMNS is a CorpusError naming it."""
    names = set(parquet.schema_arrow.names)
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise CorpusError(
            f"{file} has no column {', '.join(map(repr, missing))} (it has "
            f"{', '.join(sorted(names)) or 'none'}): not an articles table; nothing more was read.",
            hint="A wikimedia/wikipedia parquet file has id, url, title and text columns.")
    return [*COLUMNS, *(["url"] if "url" in names else [])]


def _open(file: Path):
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise CorpusError(f"Reading parquet files needs pyarrow: {exc}",
                          hint="Install it (`make install`, or pip install pyarrow).") from exc
    if not file.is_file():
        raise CorpusError(f"Cannot read {file}: there is no such file.",
                          hint="Check the path.")
    try:
        return pq.ParquetFile(file)
    except PermissionError as exc:
        raise CorpusError(f"Cannot read {file}: {exc.strerror or exc}",
                          hint="Check the file's permissions.") from exc
    except Exception as exc:  # noqa: BLE001 - ArrowInvalid for a truncated footer
        raise CorpusError(f"{file} is not a readable parquet file ({exc}); nothing of it was added.",
                          hint=_DAMAGED_HINT) from exc


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
