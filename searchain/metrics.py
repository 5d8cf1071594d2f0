"""Answer metrics: SQuAD normalisation, cover-EM, token F1, NotEqual and ROUGE-L.

``cover_em`` and ``token_f1`` score a prediction against every gold alias and keep the best, as
the SearChain and GenGround papers do. ``not_equal`` is Algorithm 1's NotEqual (does the reader's
span disagree with the LLM's answer?) and ``rouge_l`` the long-form consistency score (α = 0.35);
the reasoning engine imports both from here so that evaluation and IR verification agree on what
"the same answer" means.

Containment is checked on whole normalised tokens (" 1 " is not inside " 1990 "), which is
slightly stricter than the authors' raw substring test and avoids counting "Stan" as covering
"Stanley".
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower-case, drop punctuation and articles, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _golds(golds: str | Iterable[str]) -> list[str]:
    """Accept one gold string or any iterable of aliases."""
    if isinstance(golds, str):
        return [golds]
    return [g for g in golds if isinstance(g, str)]


def _contains(haystack: str, needle: str) -> bool:
    """Whether normalised ``needle`` occurs in normalised ``haystack`` on token boundaries.

    An empty needle (e.g. a gold answer that was only an article) never matches: it would
    otherwise be "contained" in everything.
    """
    if not needle:
        return False
    return f" {needle} " in f" {haystack} "


def cover_em(prediction: str, golds: str | Iterable[str]) -> float:
    """1.0 when any normalised gold alias is contained in the normalised prediction, else 0.0."""
    pred = normalize_answer(prediction or "")
    return 1.0 if any(_contains(pred, normalize_answer(g)) for g in _golds(golds)) else 0.0


def exact_match(prediction: str, golds: str | Iterable[str]) -> float:
    """1.0 when the normalised prediction equals some normalised gold alias."""
    pred = normalize_answer(prediction or "")
    return 1.0 if any(pred == normalize_answer(g) for g in _golds(golds)) else 0.0


def _f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    if not pred_tokens or not gold_tokens:
        # SQuAD's convention: both empty is a match, one empty is not.
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, golds: str | Iterable[str]) -> float:
    """SQuAD token F1 of the prediction against the best-matching gold alias (0.0 if none)."""
    pred_tokens = normalize_answer(prediction or "").split()
    scores = [_f1(pred_tokens, normalize_answer(g).split()) for g in _golds(golds)]
    return max(scores, default=0.0)


def not_equal(reader_answer: str | None, llm_answer: str | None) -> bool:
    """Algorithm 1's NotEqual(g, a_i): True when the reader's span g is NOT contained in a_i.

    Both sides are SQuAD-normalised first. An empty reader span carries no evidence and never
    disagrees (returns False); a missing LLM answer (an unsolved query) disagrees with any
    non-empty span.
    """
    g = normalize_answer(reader_answer or "")
    if not g:
        return False
    return not _contains(normalize_answer(llm_answer or ""), g)


def _rouge_tokens(text: str) -> list[str]:
    # Same tokenisation as Google's rouge-score package: lower-case alphanumeric runs.
    return _ROUGE_TOKEN.findall((text or "").lower())


def _lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (two rolling rows: O(len(b)) memory)."""
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for token_a in a:
        current = [0]
        for j, token_b in enumerate(b, start=1):
            if token_a == token_b:
                current.append(previous[j - 1] + 1)
            else:
                current.append(max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F-measure (β = 1) between two texts, in [0, 1]; 0.0 if either has no tokens.

    Used for long-form answers: a node is consistent with its passage when
    ``rouge_l(answer, passage) > α`` (α = 0.35 in the paper).
    """
    cand, ref = _rouge_tokens(candidate), _rouge_tokens(reference)
    if not cand or not ref:
        return 0.0
    lcs = _lcs_length(cand, ref)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(cand), lcs / len(ref)
    return 2 * precision * recall / (precision + recall)
