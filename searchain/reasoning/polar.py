"""Yes or no: the short answer to a yes/no question.

"Are Yingkou and Fuding the same level of city?" is answered "no", but small models often close
with a sentence instead: "So the final answer is Yingkou and Fuding are not the same level of
city." The final content keeps that sentence (the user reads it, with its marks); the short
answer (``AnswerResult.answer``, what the eval scores and ``searchain ask --json`` gives) is "no". A stated answer that
begins with yes or no is cut to that word; one that is a sentence without either is read as
no when it denies (not, never, neither, "n't", false, different...) and yes otherwise; "True"
and "False" as they say. No model call: the words decide. Only a stated answer is read (after
"the answer is", or a strategy's ``[Final Answer]``): a reply that reasons without concluding is
left as it is, not guessed from.

A yes/no question begins with an auxiliary ("Is", "Were", "Did", "Can", ...) and offers no
options: "Is Mount X or Mount Y taller?" asks for a name (``concise.question_options`` and an
" or " in the question rule those out).
"""

from __future__ import annotations

import re

_AUXILIARIES = frozenset(
    "is are was were am do does did can could has have had will would shall should may might must".split())
_DENIALS = frozenset(
    "not no never neither nor none nothing nobody false different differ differs differed cannot".split())
_WORD = re.compile(r"[a-z']+")


def is_polar(question: str) -> bool:
    """Whether ``question`` asks for yes or no: it begins with an auxiliary and offers no choice."""
    words = _WORD.findall(question.lower())
    return bool(words) and words[0] in _AUXILIARIES and " or " not in f" {question.lower()} "


def polar_answer(question: str, stated: str) -> str | None:
    """"yes" or "no" for a yes/no ``question`` answered ``stated``; None for other questions, or
    when nothing is stated."""
    if not is_polar(question):
        return None
    words = _WORD.findall(stated.lower())
    if not words:
        return None
    if words[0] in ("yes", "true"):
        return "yes"
    if words[0] in ("no", "false"):
        return "no"
    denies = any(w in _DENIALS or w.endswith("n't") for w in words)
    return "no" if denies else "yes"
