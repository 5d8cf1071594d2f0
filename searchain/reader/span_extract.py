"""From a chat model's reply to a short answer span of the passage, and an honest confidence.

Small chat models answer a reading question with a sentence ("The father of Kasper Schmeichel is
Peter Schmeichel.") or paste the passage's opening sentence. A sentence cannot be compared word
for word with the chain's answer, so the reader extracts the answer from it:

1. a short reply (at most ``SHORT_SPAN_WORDS`` words) with more new words than words restating
   the question is the span as it stands, function words trimmed at its edges;
2. otherwise the candidates are the reply's runs of capitalised words and numbers ("Peter
   Schmeichel", "Newburgh, New York", "1902") that say something the question does not; if there
   are none, its runs of words outside the question, with function words trimmed at the edges;
3. the candidate with the most such new words wins, the later one on a tie (English states the
   subject, then the answer: "X is Y", "X was directed by Y"); it must be found in the passage.

The confidence starts from the geometric-mean token probability of the reply, then is lowered
where the reply shows the model did not really answer: a long span (x ``SHORT_SPAN_WORDS / n``), a
reply cut off by the token limit (x 0.5), a long reply that copies the passage's opening (x 0.5).
Copying text is easy for a model, so those replies had high token probabilities (0.67-0.84 in
issue #23's traces) without being answers.
"""

from __future__ import annotations

import re

SHORT_SPAN_WORDS = 5
CUT_OFF_FACTOR = 0.5  # the reply hit the token limit: it was going on, not answering
OPENING_COPY_FACTOR = 0.5  # the reply reproduces the passage's first words
OPENING_COPY_MIN_WORDS = 6

_WORD = re.compile(r"[\w’'\-.]+|,")
FUNCTION_WORDS = frozenset(
    "a an the of in on at by for from to with as and or but is are was were be been being has "
    "have had do does did it its this that these those he she they his her their him them who "
    "whom whose which what when where why how than then so not no yes also there here".split())


def _norm(word: str) -> str:
    return word.lower().strip(".’'-")


def _question_words(question: str) -> set[str]:
    return {_norm(w) for w in _WORD.findall(question) if w != ","} - {""}


def _is_new(word: str, asked: set[str]) -> bool:
    """A word that says something the question does not."""
    key = _norm(word)
    return bool(key) and key not in asked and key not in FUNCTION_WORDS


def _is_entity_word(word: str, first: bool) -> bool:
    if word[0].isdigit():
        return True
    return word[0].isupper() and not (first and _norm(word) in FUNCTION_WORDS)


def _ends_sentence(word: str) -> bool:
    """"Magoun." ends a sentence; "J." and "U.S." do not."""
    core = word.rstrip(".")
    return word.endswith(".") and len(core) > 1 and "." not in core


def _entity_runs(words: list[str]) -> list[list[str]]:
    """Runs of capitalised words or numbers; a comma joins two runs ("Newburgh, New York")."""
    runs: list[list[str]] = []
    current: list[str] = []
    for i, word in enumerate(words):
        if word == ",":
            nxt = words[i + 1] if i + 1 < len(words) else ""
            # One comma joins ("Sir Francis Baring, 1st Baronet"); a second makes it a list.
            if current and "," not in current and nxt and nxt != "," and _is_entity_word(nxt, False):
                current.append(word)
                continue
        elif _is_entity_word(word, i == 0) and _norm(word) not in FUNCTION_WORDS:
            current.append(word)
            if not _ends_sentence(word):
                continue
        if current:
            runs.append(current)
        current = []
    if current:
        runs.append(current)
    return runs


def _trim_function_words(run: list[str]) -> list[str]:
    run = list(run)
    while run and (run[0] == "," or _norm(run[0]) in FUNCTION_WORDS):
        run.pop(0)
    while run and (run[-1] == "," or _norm(run[-1]) in FUNCTION_WORDS):
        run.pop()
    return run


def _content_runs(words: list[str], asked: set[str]) -> list[list[str]]:
    """Runs of words outside the question, function words trimmed at both edges."""
    runs: list[list[str]] = []
    current: list[str] = []
    for word in words + [""]:
        if word and word != "," and _norm(word) not in asked:
            current.append(word)
            continue
        current = _trim_function_words(current)
        if current:
            runs.append(current)
        current = []
    return runs


def _join(run: list[str]) -> str:
    return " ".join(run).replace(" ,", ",").strip(" ,.")


def answer_candidates(reply: str, question: str) -> list[str]:
    """Spans the reply may mean, best first (see the module docstring)."""
    words = _WORD.findall(reply)
    if not words:
        return []
    asked = _question_words(question)
    new_words = [w for w in words if w != "," and _is_new(w, asked)]
    if not new_words:
        return []  # the reply only repeats the question ("Kasper Schmeichel"): no answer
    plain = [w for w in words if w != ","]
    restated = sum(_norm(w) in asked and _norm(w) not in FUNCTION_WORDS for w in plain)
    if len(plain) <= SHORT_SPAN_WORDS and restated <= len(new_words):
        # A short reply that is more answer than restated question ("mountrail county" for
        # "Which county...?", not "Stanley was founded in 1902"): the span as it stands.
        candidates = [_join(_trim_function_words(words))]
    else:
        candidates = []
    runs = [r for r in _entity_runs(words) if any(_is_new(w, asked) for w in r)]
    runs = runs or _content_runs(words, asked)
    ranked = sorted(enumerate(runs), key=lambda ir: (sum(_is_new(w, asked) for w in ir[1]), ir[0]),
                    reverse=True)
    candidates += [_join(run) for _, run in ranked]
    seen: set[str] = set()
    return [c for c in candidates if c and not (c in seen or seen.add(c))]


def honest_confidence(token_probability: float, *, span_words: int, reply_words: int,
                      cut_off: bool, copies_opening: bool) -> float:
    """The confidence rules of the module docstring, in [0, 1]."""
    confidence = max(0.0, min(1.0, token_probability))
    longest = max(span_words, 0)
    if longest > SHORT_SPAN_WORDS:
        confidence *= SHORT_SPAN_WORDS / longest
    if cut_off:
        confidence *= CUT_OFF_FACTOR
    if copies_opening and reply_words >= OPENING_COPY_MIN_WORDS:
        confidence *= OPENING_COPY_FACTOR
    return confidence


def copies_passage_opening(reply: str, passage: str) -> bool:
    """Whether the reply starts with the passage's first words (at least OPENING_COPY_MIN_WORDS)."""
    reply_words = [_norm(w) for w in _WORD.findall(reply)[:OPENING_COPY_MIN_WORDS]]
    passage_words = [_norm(w) for w in _WORD.findall(passage[:400])[:OPENING_COPY_MIN_WORDS]]
    return len(reply_words) == OPENING_COPY_MIN_WORDS and reply_words == passage_words
