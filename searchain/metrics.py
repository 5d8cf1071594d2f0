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


# ---- strict cover-EM: a prediction that names every option is not an answer ------------------

# "Which magazine was started first, Arthur's Magazine or First for Women?": the options follow
# the last comma (or colon) of a which/who/what question and are joined by "or".
_OPTIONS_AFTER_COMMA = re.compile(
    r"^\s*(?:which|who|what|whose|where|when)\b.*[,:]\s*(?P<a>[^,:]+?)\s+or\s+(?P<b>[^,:]+?)\s*\??\s*$",
    re.IGNORECASE)
_YES_NO = ("yes", "no")


def answer_options(question: str, golds: str | Iterable[str]) -> tuple[str, str] | None:
    """The two options a question asks the reader to choose between, or None.

    - a yes/no question (its gold is "yes" or "no"; HotpotQA's "Were A and B both ...?",
      "Are A and B of the same nationality?"): the options are "yes" and "no". Naming both
      compared entities is normal there ("Yes, A and B were both ..."), saying yes and no is not;
    - a choice between two named entities ("Which is older, A or B?", "Who was born first: A or
      B?"): the options are A and B as the question spells them.

    Other questions have no options (an open question's answer can name anything).
    """
    if any(normalize_answer(g) in _YES_NO for g in _golds(golds)):
        return _YES_NO
    match = _OPTIONS_AFTER_COMMA.match(question or "")
    if match is None:
        return None
    a, b = match.group("a").strip(), match.group("b").strip()
    if not normalize_answer(a) or not normalize_answer(b) or normalize_answer(a) == normalize_answer(b):
        return None
    return a, b


def options_named(prediction: str, options: Iterable[str]) -> int:
    """How many of ``options`` the prediction names (whole normalised tokens).

    The longest option is looked for first and its occurrences are blanked out, so an option
    inside another ("Magazine" in "Arthur's Magazine") counts only where it stands on its own.
    """
    text = f" {normalize_answer(prediction or '')} "
    named = 0
    for option in sorted((normalize_answer(o) for o in options), key=len, reverse=True):
        if option and f" {option} " in text:
            named += 1
            text = text.replace(f" {option} ", " | ")
    return named


def names_several_options(prediction: str, question: str, golds: str | Iterable[str]) -> bool:
    """Whether the prediction names more than one option of a two-option question."""
    options = answer_options(question, golds)
    return options is not None and options_named(prediction, options) > 1


def strict_cover_em(prediction: str, golds: str | Iterable[str], question: str) -> float:
    """Cover-EM, except that a prediction naming more than one option of the question scores 0.

    Cover-EM credits "…comparing Arthur's Magazine and First for Women, the first came first" for
    either gold: the gold is contained, but so is the wrong option. Strict cover-EM counts only
    answers that commit to one option (see ``answer_options``).
    """
    if names_several_options(prediction, question, golds):
        return 0.0
    return cover_em(prediction, golds)
