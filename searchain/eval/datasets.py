"""Loaders for the benchmark files in ``../shared/eval`` (MuSiQue and HotpotQA, JSON lines).

Both formats become one ``EvalQuestion`` type: the question, its gold answers with aliases, all
its paragraphs (the pooled eval corpus is built from these), which of them support the answer,
and (MuSiQue only) the gold decomposition steps with ``#n`` placeholders resolved.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..config import source_root
from ..errors import SearchainError

# The project's benchmark files, in ``shared/`` beside a checkout (benchmarks read them from here).
SHARED_EVAL_DIR = source_root().parent / "shared" / "eval"
MUSIQUE = "musique"
HOTPOTQA = "hotpotqa"

_STEP_REF = re.compile(r"#(\d+)")


class DatasetError(SearchainError):
    """An evaluation dataset file is missing, unreadable or not in a known format."""


@dataclass(frozen=True)
class EvalParagraph:
    title: str
    text: str
    is_supporting: bool = False


@dataclass(frozen=True)
class DecompositionStep:
    """One gold hop. ``query`` is ``question`` with ``#n`` replaced by hop n's gold answer and
    ``>>`` by a space (the form SearChain's IR sees); ``paragraph`` is the hop's support."""

    question: str
    answer: str
    query: str
    paragraph: EvalParagraph | None


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    question: str
    answers: tuple[str, ...]  # the gold answer first, then its aliases
    paragraphs: tuple[EvalParagraph, ...] = ()
    steps: tuple[DecompositionStep, ...] = ()
    dataset: str = ""

    @property
    def supporting(self) -> tuple[EvalParagraph, ...]:
        return tuple(p for p in self.paragraphs if p.is_supporting)


@dataclass(frozen=True)
class EvalDataset:
    path: Path
    kind: str  # MUSIQUE | HOTPOTQA
    fingerprint: str  # first 12 hex digits of the file's SHA-256: names the pooled corpus
    questions: tuple[EvalQuestion, ...] = field(default_factory=tuple)

    @property
    def corpus_name(self) -> str:
        """The pooled corpus built from this very file, e.g. ``eval-musique-3f2a9c01b7de``."""
        return f"eval-{self.kind}-{self.fingerprint}"


def detect_kind(record: dict) -> str | None:
    if "question_decomposition" in record or ("paragraphs" in record and "question" in record):
        return MUSIQUE
    if "question_text" in record and "contexts" in record:
        return HOTPOTQA
    return None


YES_NO = ("yes", "no")


def is_yes_no(question: EvalQuestion) -> bool:
    """A question whose gold answer is "yes" or "no" (HotpotQA's comparison questions)."""
    return bool(question.answers) and question.answers[0].strip().lower() in YES_NO


def only_yes_no(dataset: EvalDataset, limit: int | None = None) -> EvalDataset:
    """The dataset's yes/no questions (the first ``limit`` of them); the pooled corpus is the
    same file's, so every other question's paragraphs stay in the corpus as distractors."""
    from dataclasses import replace

    chosen = tuple(q for q in dataset.questions if is_yes_no(q))
    if not chosen:
        raise DatasetError(f"{dataset.path} has no question whose gold answer is yes or no.",
                           hint="HotpotQA's comparison questions have them; MuSiQue has none.")
    return replace(dataset, questions=chosen[:limit] if limit else chosen)


def load_dataset(path: str | Path, *, limit: int | None = None) -> EvalDataset:
    """Read a MuSiQue or HotpotQA JSON-lines file; ``limit`` keeps the first N questions.

    Raises ``DatasetError`` naming the file and line for anything malformed.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise DatasetError(
            f"Evaluation dataset {path} does not exist.",
            hint="Pass the path of a JSON-lines file such as ../shared/eval/musique/dev_200.jsonl.",
        )
    if limit is not None and limit < 1:
        raise DatasetError(f"--limit must be at least 1, got {limit}.")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"Cannot read evaluation dataset {path}: {exc}") from exc
    fingerprint = hashlib.sha256(raw).hexdigest()[:12]
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path} is not UTF-8 text ({exc}).",
                           hint="Evaluation files are JSON lines in UTF-8.") from exc

    questions: list[EvalQuestion] = []
    kind: str | None = None
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"{path}, line {lineno}: not valid JSON ({exc}).",
                               hint="Each line must hold one JSON object.") from exc
        if not isinstance(record, dict):
            raise DatasetError(f"{path}, line {lineno}: expected a JSON object, got {type(record).__name__}.")
        record_kind = detect_kind(record)
        if record_kind is None:
            raise DatasetError(
                f"{path}, line {lineno}: neither a MuSiQue record (id, question, answer, paragraphs) "
                "nor a HotpotQA record (question_id, question_text, answers_objects, contexts).",
                hint="Use the files in ../shared/eval/ or convert yours to one of these formats.",
            )
        if kind is not None and record_kind != kind:
            raise DatasetError(f"{path}, line {lineno}: a {record_kind} record in a {kind} file.")
        kind = record_kind
        try:
            parse = _parse_musique if kind == MUSIQUE else _parse_hotpotqa
            questions.append(parse(record))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise DatasetError(f"{path}, line {lineno}: malformed {kind} record ({exc!r}).") from exc
        if limit is not None and len(questions) >= limit:
            break
    if not questions:
        raise DatasetError(f"{path} holds no questions.", hint="Is it the right file?")
    return EvalDataset(path=path, kind=kind or "", fingerprint=fingerprint, questions=tuple(questions))


def pooled_paragraphs(dataset: EvalDataset) -> list[EvalParagraph]:
    """Every paragraph of every question, deduplicated on (title, text), in first-seen order."""
    seen: set[tuple[str, str]] = set()
    pooled: list[EvalParagraph] = []
    for q in dataset.questions:
        for p in q.paragraphs:
            key = (p.title, p.text)
            if key not in seen:
                seen.add(key)
                pooled.append(EvalParagraph(p.title, p.text))
    return pooled


def _str(value, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {value!r}")
    return value


def _answers(first: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for a in first:
        if isinstance(a, str) and a.strip() and a not in out:
            out.append(a)
    if not out:
        raise ValueError("no gold answer")
    return tuple(out)


def _parse_musique(record: dict) -> EvalQuestion:
    paragraphs = tuple(
        EvalParagraph(_str(p["title"], "title"), _str(p["paragraph_text"], "paragraph_text"),
                      bool(p.get("is_supporting", False)))
        for p in record["paragraphs"]
    )
    answers = _answers([record["answer"], *record.get("answer_aliases", [])])
    steps: list[DecompositionStep] = []
    for raw in record.get("question_decomposition", []):
        question, answer = _str(raw["question"], "step question"), _str(raw["answer"], "step answer")

        def substitute(match: re.Match) -> str:
            n = int(match.group(1))
            return steps[n - 1].answer if 1 <= n <= len(steps) else match.group(0)

        query = " ".join(_STEP_REF.sub(substitute, question).replace(">>", " ").split())
        idx = raw.get("paragraph_support_idx")
        paragraph = paragraphs[idx] if isinstance(idx, int) and 0 <= idx < len(paragraphs) else None
        steps.append(DecompositionStep(question, answer, query, paragraph))
    return EvalQuestion(
        id=str(record["id"]), question=_str(record["question"], "question"), answers=answers,
        paragraphs=paragraphs, steps=tuple(steps), dataset=MUSIQUE,
    )


def _parse_hotpotqa(record: dict) -> EvalQuestion:
    golds: list[str] = []
    for obj in record["answers_objects"]:
        golds.extend(obj.get("spans") or [])
        if obj.get("number"):
            golds.append(str(obj["number"]))
    paragraphs = tuple(
        EvalParagraph(_str(c["title"], "title"), _str(c["paragraph_text"], "paragraph_text"),
                      bool(c.get("is_supporting", False)))
        for c in record["contexts"]
    )
    return EvalQuestion(
        id=str(record["question_id"]), question=_str(record["question_text"], "question_text"),
        answers=_answers(golds), paragraphs=paragraphs, dataset=HOTPOTQA,
    )
