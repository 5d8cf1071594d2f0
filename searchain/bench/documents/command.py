"""``searchain bench documents``: document ingest against bare PDF extraction (the #34 goal),
and with ``--compare`` the library measurements behind docs/corpus.md."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("documents", help="PDF ingest throughput vs pypdfium2's bare extraction; "
                       "--compare: PDF and HTML libraries side by side")
    p.add_argument("--folder", metavar="DIR",
                   help="measure this folder of PDFs instead of generated ones (PDFs only)")
    p.add_argument("--files", type=int, default=30, help="generated PDFs (default 30)")
    p.add_argument("--pages", type=int, default=20, help="pages per PDF (default 20)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs of each; medians are reported")
    p.add_argument("--workers", default="1", metavar="N,N",
                   help="worker counts to run ours with, e.g. 1,2 (default 1): each N > 1 also "
                        "times bare extraction in N processes, the fair floor for N")
    p.add_argument("--compare", action="store_true",
                   help="also measure pypdf against pypdfium2 and trafilatura against selectolax "
                        "(speed and text quality; each only where installed)")
    p.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from .make import pdf_folder
    from .throughput import measure

    counts = _counts(args.workers)  # refused before any PDF is written
    with tempfile.TemporaryDirectory(prefix="searchain-bench-documents-") as tmp:
        work = Path(tmp)
        if args.folder:
            folder, total = _pdfs_only(Path(args.folder).expanduser())
        else:
            folder, total = pdf_folder(work / "pdfs", args.files, args.pages)
        out = {"benchmark": "documents",
               "pdf_ingest": measure(folder, work, args.repeats, total, counts)}
        if args.compare:
            from .compare import compare_html, compare_pdf

            out["pdf_libraries"] = compare_pdf(work / "cases", pages=40, repeats=args.repeats)
            out["html_libraries"] = compare_html(pages=200, repeats=args.repeats)
    print(json.dumps(out, indent=2))
    return 0


def _counts(text: str) -> tuple[int, ...]:
    from ...errors import SearchainError

    try:
        counts = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        counts = ()
    if not counts or any(n < 1 or n > 256 for n in counts):
        raise SearchainError(f"--workers takes worker counts from 1 to 256 separated by commas; "
                             f"got {text!r}.", hint="For example: --workers 1,2,4")
    return counts


def _pdfs_only(folder: Path) -> tuple[Path, int]:
    """``folder`` and its size, when it holds PDFs and nothing else the ingest would read."""
    from ...corpus.sources.documents import format_of
    from ...errors import SearchainError

    files = [p for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
    others = [p.name for p in files if format_of(p.suffix) not in (None, "pdf")]
    if not any(p.suffix.lower() == ".pdf" for p in files) or others or \
            any(p.is_dir() for p in folder.iterdir()):
        raise SearchainError(f"{folder} is not a flat folder of PDFs only.",
                             hint="Both sides must read the same files: pass a folder holding "
                                  "PDFs and no subfolders or other documents.")
    return folder, sum(p.stat().st_size for p in files if p.suffix.lower() == ".pdf")
